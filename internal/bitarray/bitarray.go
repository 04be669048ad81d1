// Package bitarray implements the lock-free bit array under a Bloom filter,
// with the semantics of Guava's LockFreeBitArray.
//
// Every read and write of a word is a sync/atomic operation on a []uint64,
// except SetPlain's, which is for arrays only one goroutine uses, and
// nothing takes a lock. Set is one atomic OR on a 64-bit word, so a Get that
// happens after a Set returns (in the sense of the Go memory model) sees that
// bit. Operations that visit every word (Count, Words, Equal, PutAll,
// Copy) see each word atomically but the array as a rolling snapshot while
// writers are active, and exactly once they are quiet.
//
// The array holds plain []uint64 rather than []atomic.Uint64 so that a decoded
// stream can become an Array without a second copy; the first word of an
// allocated slice is 64-bit aligned on every platform, so the 64-bit atomic
// functions are safe on 32-bit architectures too.
//
// Bit i lives in word i>>6 under mask 1<<(i&63), as in Guava: bit 0 is the
// least significant bit of word 0.
package bitarray

import (
	"math/bits"
	"sync/atomic"
)

// MaxWords is the largest number of words an Array may have: Guava's
// AtomicLongArray is int-indexed, and its serialized form stores the word
// count as a signed 32-bit integer.
const MaxWords = 1<<31 - 1

// An Array is a fixed-size array of bits that is safe for concurrent use.
// The zero Array has no bits; create one with New or FromWords.
type Array struct {
	words []uint64
	recip uint64 // ⌊(2⁶⁴−1) / BitSize()⌋, for Reduce
}

// New returns an array of words 64-bit words, all zero.
// It panics if words is not in [1, MaxWords]; callers validate sizes first.
func New(words int) *Array {
	if words < 1 || words > MaxWords {
		panic("bitarray: word count out of range")
	}
	return wrap(MakeWords(words))
}

// MakeWords returns words zero words allocated as New allocates an array's:
// from the Go heap, on huge pages where the kernel provides them (see
// adviseHugePages). It is for measurements that must see the memory a
// filter sees.
func MakeWords(words int) []uint64 {
	w := make([]uint64, words)
	_ = adviseHugePages(WordBytes(w))
	return w
}

// newArray wraps words, moved onto huge pages as MakeWords's are: words
// decoded from a stream or copied have been written already, in base
// pages.
func newArray(words []uint64) *Array {
	_ = adviseHugePages(WordBytes(words))
	return wrap(words)
}

func wrap(words []uint64) *Array {
	return &Array{words: words, recip: reciprocal(uint64(len(words)) << 6)}
}

// FromWords returns an array that takes ownership of words: the caller must
// not use the slice afterwards. It panics if len(words) is not in [1, MaxWords].
func FromWords(words []uint64) *Array {
	if len(words) < 1 || len(words) > MaxWords {
		panic("bitarray: word count out of range")
	}
	return newArray(words)
}

// BitSize returns the number of bits in a, a multiple of 64.
func (a *Array) BitSize() int64 { return int64(len(a.words)) * 64 }

// Reduce returns x modulo BitSize(), exactly, without a divide: a probe
// reduces k hashes per value, and a 64-bit DIV costs several times the
// multiply and subtraction that replace it here.
//
// With d = BitSize() and m = ⌊(2⁶⁴−1)/d⌋ ≥ (2⁶⁴−d)/d, x·m/2⁶⁴ lies in
// (x/d − 1, x/d], so q = ⌊x·m/2⁶⁴⌋ is ⌊x/d⌋ or one less, r = x − q·d is in
// [0, 2d), and one conditional subtraction finishes it.
func (a *Array) Reduce(x uint64) uint64 {
	return reduce(x, uint64(len(a.words))<<6, a.recip)
}

func reciprocal(d uint64) uint64 { return ^uint64(0) / d }

func reduce(x, d, recip uint64) uint64 {
	q, _ := bits.Mul64(x, recip)
	r := x - q*d
	// r -= d when r >= d, without a branch: which way it goes is a coin
	// toss, and a mispredicted branch costs more than the whole reduction.
	// r < 2d ≤ 2³⁸, so d−1−r is negative exactly when r >= d.
	return r - d&uint64(int64(d-1-r)>>63)
}

// WordCount returns the number of 64-bit words in a.
func (a *Array) WordCount() int { return len(a.words) }

// Get reports whether bit i is set.
func (a *Array) Get(i uint64) bool { return a.Bit(i) != 0 }

// Bit returns bit i as 0 or 1, so that a caller can combine several bits
// and branch once on the result.
func (a *Array) Bit(i uint64) uint64 {
	return atomic.LoadUint64(&a.words[i>>6]) >> (i & 63) & 1
}

// Set sets bit i and reports whether this call changed it.
//
// Like Guava it reads the word before writing it: a bit that is already set,
// the common case in a filter that is filling up, costs a plain load and never
// takes the cache line away from other cores.
func (a *Array) Set(i uint64) bool {
	w := &a.words[i>>6]
	mask := uint64(1) << (i & 63)
	if atomic.LoadUint64(w)&mask != 0 {
		return false
	}
	return atomic.OrUint64(w, mask)&mask == 0
}

// SetPlain sets bit i with a plain read and write instead of an atomic
// operation, and reports whether this call changed it. It is for an array
// that no other goroutine reads or writes while SetPlain runs: a concurrent
// Set of another bit of the same word can be lost. Filling an array this way
// costs about half as much as with Set, because an atomic read-modify-write
// is a locked instruction that waits for every memory access before it.
//
// It writes the word even when the bit is already set: a branch on the bit
// would be mispredicted about as often as not while a filter fills, and the
// store costs less than that.
func (a *Array) SetPlain(i uint64) bool {
	w := &a.words[i>>6]
	mask := uint64(1) << (i & 63)
	old := *w
	*w = old | mask
	return old&mask == 0
}

// Word returns word i.
func (a *Array) Word(i int) uint64 { return atomic.LoadUint64(&a.words[i]) }

// orWord ORs v into word i, as Guava's putData does.
func (a *Array) orWord(i int, v uint64) {
	w := &a.words[i]
	if old := atomic.LoadUint64(w); old|v != old {
		atomic.OrUint64(w, v)
	}
}

// OrEncoded ORs into a, from word i on, the words encoded in b, each 8
// bytes big-endian, as Guava's writeTo stream holds them. b must hold a
// whole number of words, all of them within a.
func (a *Array) OrEncoded(i int, b string) {
	if len(b) < 8 {
		return
	}
	// One bounds check for the loop, by slicing, which reads no word: an
	// index expression would, racing with the atomic writes of Set.
	_ = a.words[i : i+len(b)/8]
	for ; len(b) >= 8; b, i = b[8:], i+1 {
		a.orWord(i, uint64FromString(b))
	}
}

// uint64FromString returns the big-endian word at the start of b, without
// the copy that converting b to a []byte would make.
func uint64FromString(b string) uint64 {
	_ = b[7] // bounds check hint to compiler; see golang.org/issue/14808
	return uint64(b[7]) | uint64(b[6])<<8 | uint64(b[5])<<16 | uint64(b[4])<<24 |
		uint64(b[3])<<32 | uint64(b[2])<<40 | uint64(b[1])<<48 | uint64(b[0])<<56
}

// Count returns the number of set bits. It reads every word, so it costs
// BitSize()/64 atomic loads; Guava keeps a running counter instead, which
// would put an extra atomic add on every Set.
func (a *Array) Count() int64 {
	var n int
	for i := range a.words {
		n += bits.OnesCount64(atomic.LoadUint64(&a.words[i]))
	}
	return int64(n)
}

// Words returns a copy of the words of a.
func (a *Array) Words() []uint64 {
	out := make([]uint64, len(a.words))
	for i := range a.words {
		out[i] = atomic.LoadUint64(&a.words[i])
	}
	return out
}

// Copy returns an independent copy of a.
func (a *Array) Copy() *Array { return newArray(a.Words()) }

// PutAll ORs every word of other into a. The arrays must have the same
// length; PutAll panics otherwise, as callers check compatibility first.
func (a *Array) PutAll(other *Array) {
	if len(a.words) != len(other.words) {
		panic("bitarray: PutAll of arrays of different lengths")
	}
	for i := range other.words {
		a.orWord(i, atomic.LoadUint64(&other.words[i]))
	}
}

// Clear sets every word of a to zero, one atomic store at a time, and skips
// the words that are zero already, so that clearing a sparse array does not
// write all of its memory. A Set concurrent with Clear may survive it or not,
// bit by bit; one that happens after Clear returns does.
func (a *Array) Clear() {
	for i := range a.words {
		if atomic.LoadUint64(&a.words[i]) != 0 {
			atomic.StoreUint64(&a.words[i], 0)
		}
	}
}

// Equal reports whether a and other have the same length and the same words.
func (a *Array) Equal(other *Array) bool {
	if len(a.words) != len(other.words) {
		return false
	}
	for i := range a.words {
		if atomic.LoadUint64(&a.words[i]) != atomic.LoadUint64(&other.words[i]) {
			return false
		}
	}
	return true
}

// Prefetch asks the CPU to start loading the words that hold the bits idx
// into its caches, and returns without waiting for them: a later Get, Bit or
// Set of those bits then finds its word in cache, or on its way. It changes
// nothing a reader can see. Every index must be below BitSize().
func (a *Array) Prefetch(idx []uint64) {
	prefetch(&a.words[0], idx)
}
