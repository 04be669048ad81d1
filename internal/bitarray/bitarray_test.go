package bitarray

import (
	"encoding/binary"
	"math/bits"
	"math/rand/v2"
	"sync"
	"testing"

	"github.com/bits-and-blooms/bitset"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestAgainstBitSet checks Set, SetPlain, Get and Count against bitset.BitSet, which
// uses the same layout (bit i in word i/64 under 1<<(i%64)).
func TestAgainstBitSet(t *testing.T) {
	for _, set := range []struct {
		name string
		f    func(a *Array, i uint64) bool
	}{{"Set", (*Array).Set}, {"SetPlain", (*Array).SetPlain}} {
		t.Run(set.name, func(t *testing.T) { testAgainstBitSet(t, set.f) })
	}
}

func testAgainstBitSet(t *testing.T, set func(a *Array, i uint64) bool) {
	rng := rand.New(rand.NewPCG(1, 2))
	for _, words := range []int{1, 2, 3, 150} {
		a := New(words)
		ref := bitset.New(uint(words * 64))
		require.EqualValues(t, words*64, a.BitSize())
		for range 4 * words * 64 {
			i := rng.Uint64N(uint64(words * 64))
			want := !ref.Test(uint(i))
			ref.Set(uint(i))
			assert.Equal(t, want, set(a, i), "setting bit %d reports whether it changed", i)
			assert.True(t, a.Get(i))
		}
		assert.Equal(t, ref.Words(), a.Words())
		assert.EqualValues(t, ref.Count(), a.Count())
		for i := range uint64(words * 64) {
			assert.Equal(t, ref.Test(uint(i)), a.Get(i))
		}
	}
}

func TestLayout(t *testing.T) {
	a := New(2)
	a.Set(0)
	a.Set(63)
	a.Set(64)
	a.Set(127)
	assert.Equal(t, []uint64{1 | 1<<63, 1 | 1<<63}, a.Words())
}

func TestWordOperations(t *testing.T) {
	a := New(3)
	a.orWord(1, 0xf0)
	a.orWord(1, 0x0f)
	assert.Equal(t, uint64(0xff), a.Word(1))
	assert.EqualValues(t, 8, a.Count())

	b := FromWords([]uint64{1, 2, 4})
	c := b.Copy()
	assert.True(t, b.Equal(c))
	c.Set(100)
	assert.False(t, b.Equal(c), "a copy shares no state")
	assert.False(t, b.Get(100))

	a.PutAll(b)
	assert.Equal(t, []uint64{1, 0xff, 4}, a.Words())
	assert.Equal(t, []uint64{1, 2, 4}, b.Words(), "PutAll leaves its argument alone")
	assert.False(t, a.Equal(New(4)))
	assert.Panics(t, func() { a.PutAll(New(4)) })
	assert.Panics(t, func() { New(0) })
	assert.Panics(t, func() { FromWords(nil) })
}

// TestConcurrentSet has many goroutines set overlapping bits at once: no bit
// is lost, exactly one Set reports each change, and Count is exact once they
// are done.
func TestConcurrentSet(t *testing.T) {
	const goroutines, words = 8, 64
	perG := 5000 // about 2/3 of the bits end up set
	if testing.Short() {
		perG = 1000
	}
	a := New(words)
	changed := make([]int, goroutines)
	var wg sync.WaitGroup
	for g := range goroutines {
		wg.Add(1)
		go func() {
			defer wg.Done()
			rng := rand.New(rand.NewPCG(uint64(g%4), 7)) // pairs of goroutines set the same bits
			for range perG {
				if a.Set(rng.Uint64N(words * 64)) {
					changed[g]++
				}
				_ = a.Get(rng.Uint64N(words * 64))
			}
		}()
	}
	wg.Wait()

	ref := bitset.New(words * 64)
	for g := range 4 {
		rng := rand.New(rand.NewPCG(uint64(g), 7))
		for range perG {
			ref.Set(uint(rng.Uint64N(words * 64)))
			rng.Uint64N(words * 64) // the goroutine's Get
		}
	}
	assert.Equal(t, ref.Words(), a.Words())
	total := 0
	for _, c := range changed {
		total += c
	}
	assert.EqualValues(t, ref.Count(), total, "each bit's change is reported once")
	var pop int
	for _, w := range a.Words() {
		pop += bits.OnesCount64(w)
	}
	assert.EqualValues(t, pop, a.Count())
}

// TestReduce checks reduce, which Array.Reduce is, against the % operator at the edges of its range
// (x near 0, near multiples of the size, near 2⁶³ and 2⁶⁴) and at random, for
// sizes from one word to MaxWords.
func TestReduce(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	sizes := []int{1, 2, 3, 7, 150, 1 << 20, 1<<20 + 1, 14_971_243, MaxWords - 1, MaxWords}
	for range 20 {
		sizes = append(sizes, 1+r.IntN(MaxWords))
	}
	for _, words := range sizes {
		d := uint64(words) * 64
		m := reciprocal(d)
		xs := []uint64{0, 1, d - 1, d, d + 1, 2*d - 1, 2 * d, 1<<63 - 1, 1 << 63, ^uint64(0), ^uint64(0) - d}
		for range 2000 {
			xs = append(xs, r.Uint64(), r.Uint64()>>1, r.Uint64()%(4*d), (r.Uint64()/d)*d+r.Uint64()%2)
		}
		for _, x := range xs {
			if got, want := reduce(x, d, m), x%d; got != want {
				t.Fatalf("Reduce(%d) with %d bits = %d, want %d", x, d, got, want)
			}
		}
	}
}

func FuzzReduce(f *testing.F) {
	f.Add(uint64(1<<63-1), uint32(150))
	f.Fuzz(func(t *testing.T, x uint64, words uint32) {
		d := (uint64(words%MaxWords) + 1) * 64
		if got, want := reduce(x, d, reciprocal(d)), x%d; got != want {
			t.Fatalf("reduce(%d) with %d bits = %d, want %d", x, d, got, want)
		}
	})
}

// BenchmarkSet measures Set on a 1 MiB array that is cleared every 64Ki
// sets, so that most sets write, against a plain, unsynchronized OR of the
// same bits: the price of being safe for concurrent use.
func BenchmarkSet(b *testing.B) {
	const words = 1 << 17
	idx := make([]uint64, 1<<16)
	r := rand.New(rand.NewPCG(11, 12))
	for i := range idx {
		idx[i] = r.Uint64N(words * 64)
	}
	run := func(b *testing.B, set func(a *Array, i uint64)) {
		a := New(words)
		i := 0
		for b.Loop() {
			if i&(len(idx)-1) == 0 {
				clear(a.words)
			}
			set(a, idx[i&(len(idx)-1)])
			i++
		}
	}
	b.Run("atomic", func(b *testing.B) { run(b, func(a *Array, i uint64) { a.Set(i) }) })
	b.Run("plain", func(b *testing.B) { run(b, func(a *Array, i uint64) { a.SetPlain(i) }) })
}

// TestEncodedWords checks OrEncoded against the words it decodes,
// big-endian, as Guava's stream holds them.
func TestEncodedWords(t *testing.T) {
	enc := func(words ...uint64) string {
		var b []byte
		for _, w := range words {
			b = binary.BigEndian.AppendUint64(b, w)
		}
		return string(b)
	}
	a := New(4)
	a.OrEncoded(1, enc(0x0102030405060708, 0xff))
	assert.Equal(t, []uint64{0, 0x0102030405060708, 0xff, 0}, a.Words())
	a.OrEncoded(2, enc(0xff00, 1<<63))
	assert.Equal(t, []uint64{0, 0x0102030405060708, 0xffff, 1 << 63}, a.Words())
	a.OrEncoded(3, "")
	assert.Equal(t, uint64(1<<63), a.Word(3), "nothing to decode")
	assert.Panics(t, func() { a.OrEncoded(3, enc(1, 2)) }, "words past the end")
}

// TestSetInlinedInLoop calls Set where it inlines into a loop that folds its
// answers, as a filter's Put does. Go 1.24.0 miscompiles the result of an
// intrinsic atomic.OrUint64 there on amd64 (fixed in 1.24.1): the loop
// reported wrong answers or crashed, so that a filter answered false for
// values just put. go.mod requires 1.24.1 for this reason, and CI runs the
// tests with that toolchain.
func TestSetInlinedInLoop(t *testing.T) {
	a := New(4)
	bitsOf := []uint64{1, 70, 130, 200, 3}
	assert.True(t, setAll(a, bitsOf), "the first pass sets every bit")
	assert.False(t, setAll(a, bitsOf), "the second pass sets none")
	for _, i := range bitsOf {
		assert.True(t, a.Get(i), "bit %d", i)
	}
	assert.EqualValues(t, len(bitsOf), a.Count())
}

//go:noinline
func setAll(a *Array, bitsOf []uint64) bool {
	changed := false
	for _, i := range bitsOf {
		changed = a.Set(i) || changed
	}
	return changed
}

func TestClear(t *testing.T) {
	a := FromWords([]uint64{1, 0, 1 << 63, ^uint64(0)})
	a.Clear()
	assert.Equal(t, []uint64{0, 0, 0, 0}, a.Words())
	assert.Zero(t, a.Count())
	assert.True(t, a.Set(5), "a cleared bit is set again")
	assert.Equal(t, []uint64{1 << 5, 0, 0, 0}, a.Words())
	assert.Zero(t, testing.AllocsPerRun(10, a.Clear))
}
