package murmur3

import (
	"encoding/binary"
	"fmt"
	"math/rand/v2"
	"testing"

	spaolacci "github.com/spaolacci/murmur3"
)

// The hashes are checked against Guava's own output by the golden tests of
// package strategy; these tests compare against an independent Go
// implementation over many more lengths and contents, block boundaries
// included.

func TestSum128Lengths(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	b := make([]byte, 200)
	for i := range b {
		b[i] = byte(r.Uint32())
	}
	for n := range len(b) {
		h1, h2 := Sum128(b[:n])
		w1, w2 := spaolacci.Sum128(b[:n])
		if h1 != w1 || h2 != w2 {
			t.Errorf("Sum128 of %d bytes = %016x %016x, want %016x %016x", n, h1, h2, w1, w2)
		}
		s1, s2 := SumString(string(b[:n]))
		if s1 != w1 || s2 != w2 {
			t.Errorf("SumString of %d bytes = %016x %016x, want %016x %016x", n, s1, s2, w1, w2)
		}
	}
}

func TestSumFixed(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	for range 1000 {
		v := r.Uint64()
		if h1, h2 := Sum64(v); [2]uint64{h1, h2} != pair(Sum128(binary.LittleEndian.AppendUint64(nil, v))) {
			t.Fatalf("Sum64(%#x) = %x %x, not the hash of its 8 bytes", v, h1, h2)
		}
		for n := 1; n <= 8; n++ {
			low := binary.LittleEndian.AppendUint64(nil, v)[:n]
			masked := v & (1<<(8*n) - 1)
			if h1, h2 := SumN(masked, n); [2]uint64{h1, h2} != pair(Sum128(low)) {
				t.Fatalf("SumN(%#x, %d) = %x %x, not the hash of its %d bytes", masked, n, h1, h2, n)
			}
		}
		u := uint32(v)
		if h1, h2 := Sum32(u); [2]uint64{h1, h2} != pair(Sum128(binary.LittleEndian.AppendUint32(nil, u))) {
			t.Fatalf("Sum32(%#x) = %x %x, not the hash of its 4 bytes", u, h1, h2)
		}
	}
}

func pair(h1, h2 uint64) [2]uint64 { return [2]uint64{h1, h2} }

func TestSum128NoAlloc(t *testing.T) {
	allocs := testing.AllocsPerRun(100, func() {
		var buf [40]byte
		Sum128(buf[:])
		SumString("host.example:443")
	})
	if allocs != 0 {
		t.Errorf("Sum128 with a stack buffer allocates %v times", allocs)
	}
}

func FuzzSum128(f *testing.F) {
	f.Add([]byte(""))
	f.Add([]byte("0123456789abcdef0"))
	f.Fuzz(func(t *testing.T, b []byte) {
		h1, h2 := Sum128(b)
		w1, w2 := spaolacci.Sum128(b)
		if h1 != w1 || h2 != w2 {
			t.Errorf("Sum128(%x) = %016x %016x, want %016x %016x", b, h1, h2, w1, w2)
		}
	})
}

func BenchmarkSum128(b *testing.B) {
	for _, n := range []int{8, 16, 32} {
		buf := make([]byte, n)
		b.Run(fmt.Sprint("ours/", n), func(b *testing.B) {
			for b.Loop() {
				Sum128(buf)
			}
		})
		b.Run(fmt.Sprint("spaolacci/", n), func(b *testing.B) {
			for b.Loop() {
				spaolacci.Sum128(buf)
			}
		})
	}
}
