package bitarray

import (
	"bytes"
	"encoding/binary"
	"math/rand/v2"
	"os"
	"os/exec"
	"runtime"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// randomArray returns an array of words random words.
func randomArray(words int, seed uint64) *Array {
	r := rand.New(rand.NewPCG(seed, uint64(words)))
	w := make([]uint64, words)
	for i := range w {
		w[i] = r.Uint64()
	}
	return FromWords(w)
}

// naiveEncode is Guava's encoding of a's words, one AppendUint64 at a time.
func naiveEncode(a *Array) []byte {
	var b []byte
	for _, w := range a.Words() {
		b = binary.BigEndian.AppendUint64(b, w)
	}
	return b
}

// TestEncodeDecode checks Encode, DecodeWords, WordBytes and FromBigEndian
// against encoding/binary one word at a time, at lengths on both sides of
// the 8 words the loops take a step, and at every starting word and
// misaligned offset of the bytes.
func TestEncodeDecode(t *testing.T) {
	for _, words := range []int{1, 7, 8, 9, 15, 16, 17, 100} {
		a := randomArray(words, 1)
		want := naiveEncode(a)
		for from := range min(words, 10) {
			for _, off := range []int{0, 1, 6} {
				dst := make([]byte, off+8*(words-from))
				a.Encode(dst[off:], from)
				require.Equal(t, want[8*from:], dst[off:], "Encode of %d words from %d at offset %d", words, from, off)

				w := make([]uint64, words-from)
				DecodeWords(w, dst[off:])
				assert.Equal(t, a.Words()[from:], w, "DecodeWords")
			}
		}
		w := make([]uint64, words)
		copy(WordBytes(w), want)
		FromBigEndian(w)
		assert.Equal(t, a.Words(), w, "FromBigEndian of the bytes read into WordBytes")
	}
	assert.Nil(t, WordBytes(nil))
}

// TestEncodeParallel checks that an Encode large enough to be split among
// goroutines writes what encoding/binary does, split in parts of every
// remainder, and that the split itself covers every word for any number of
// parts, even more parts than words.
func TestEncodeParallel(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(3))
	a := randomArray(3*parallelWords+5, 2)
	want := naiveEncode(a)
	for _, from := range []int{0, 1, parallelWords + 3} {
		dst := make([]byte, 1+len(want)-8*from)
		a.Encode(dst[1:], from)
		require.True(t, bytes.Equal(want[8*from:], dst[1:]), "Encode of %d words from %d in parallel", a.WordCount()-from, from)
	}

	for _, words := range []int{1, 2, 7, 64, 100} {
		a := randomArray(words, 3)
		want := naiveEncode(a)
		for p := 2; p <= 9; p++ {
			dst := make([]byte, len(want))
			encodeParallel(dst, a.Words(), p)
			require.Equal(t, want, dst, "%d words in %d parts", words, p)
		}
	}
}

// TestEncoded checks that an Encoded view of an array's encoding, at any
// offset in memory, answers Bit, Get, Count, Reduce and BitSize as the
// array does, for every bit.
func TestEncoded(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	for _, words := range []int{1, 3, 5, 64} {
		a := randomArray(words, 2)
		for _, off := range []int{0, 6, 7} {
			b := make([]byte, off+8*words)
			a.Encode(b[off:], 0)
			e := NewEncoded(b[off:])
			require.Equal(t, a.BitSize(), e.BitSize())
			require.Equal(t, a.WordCount(), e.WordCount())
			assert.Equal(t, a.Count(), e.Count())
			for i := range uint64(a.BitSize()) {
				if a.Bit(i) != e.Bit(i) || a.Get(i) != e.Get(i) {
					t.Fatalf("%d words at offset %d: bit %d is %d in the array, %d encoded", words, off, i, a.Bit(i), e.Bit(i))
				}
			}
			for range 1000 {
				x := r.Uint64()
				assert.Equal(t, a.Reduce(x), e.Reduce(x))
			}
			idx := []uint64{0, uint64(e.BitSize() - 1)}
			for range 100 {
				idx = append(idx, r.Uint64N(uint64(e.BitSize())))
			}
			e.Prefetch(idx)
			e.Prefetch(nil)
		}
	}
	for _, n := range []int{0, 7, 9} {
		assert.Panics(t, func() { NewEncoded(make([]byte, n)) }, "%d bytes", n)
	}
}

// TestPreemptibleLoops keeps the functions that loop over a whole filter
// preemptible: the compiler marks a function without calls and with a
// small frame nosplit, and a goroutine cannot be preempted inside one, so
// that the garbage collector would wait for it to finish before it could
// stop the world, for as long as a filter of gigabytes takes. Each of
// these must call a function per chunk instead, and not be nosplit, on
// the 64-bit platforms that have a prefetch routine.
func TestPreemptibleLoops(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the compiler")
	}
	for _, arch := range []string{"amd64", "arm64"} {
		cmd := exec.Command("go", "build", "-gcflags=-S", "-o", os.DevNull, "github.com/mitzbloom/mitzbloom/internal/bitarray")
		cmd.Env = append(os.Environ(), "GOARCH="+arch)
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("GOARCH=%s go build -gcflags=-S: %v\n%s", arch, err, out)
		}
		for _, fn := range []string{"DecodeWords", "(*Array).Encode", "(*Encoded).Count"} {
			found := false
			for _, line := range strings.Split(string(out), "\n") {
				if strings.HasPrefix(line, "github.com/mitzbloom/mitzbloom/internal/bitarray."+fn+" STEXT") {
					found = true
					if strings.Contains(line, " nosplit ") {
						t.Errorf("GOARCH=%s: %s is nosplit, and so cannot be preempted: %s", arch, fn, line)
					}
				}
			}
			if !found {
				t.Errorf("GOARCH=%s: no code for %s in the compiler's listing", arch, fn)
			}
		}
	}
}

// TestCopyWords copies across the chunk boundaries, into new memory and
// into memory already written, which Populate leaves as it is.
func TestCopyWords(t *testing.T) {
	for _, n := range []int{0, 1, chunkWords - 1, chunkWords, 2*chunkWords + 3} {
		src := randomArray(max(n, 1), 5).Words()[:n]
		dst := MakeWords(n + 1)
		dst[n] = 42
		CopyWords(dst, src)
		assert.Equal(t, src, dst[:n], "%d words", n)
		assert.EqualValues(t, 42, dst[n], "CopyWords wrote past its source")
		Populate(dst)
		assert.Equal(t, src, dst[:n], "Populate changed words already written")
	}
}
