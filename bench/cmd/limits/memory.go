package main

import (
	"fmt"
	"math"
	"math/bits"
	"runtime"
	"sync/atomic"
	"testing"
	"unsafe"

	"github.com/mitzbloom/mitzbloom/bench"
	"github.com/mitzbloom/mitzbloom/bench/internal/splitmix"
	"github.com/mitzbloom/mitzbloom/bloom"
)

// The limits of the machine. A filter far larger than the caches is as fast
// as the memory under it lets it be, and two numbers bound that: the time of
// one random load that must wait for the one before it (latency), and the
// time per load of random loads that wait for nothing (throughput, set by
// how many misses a core keeps in flight). The limit benchmarks time both
// over memory made as a filter's is, of the same size, and the limits
// report divides mitzbloom's time per key by them.

// lineWords is the number of words in a 64-byte cache line.
const lineWords = 8

// limitMemory is memory of the size of a filter, allocated as a filter's
// words are, for the limit benchmarks.
type limitMemory struct {
	// words[l·8] is the index of the first word of the cache line after
	// line l, in one random cycle through every line (see chain).
	words []uint64
	// gather holds the random word indexes of BenchIndependentLoads.
	gather []uint32
}

// newLimitMemory returns the memory of a filter of n keys at [bench.P]: as
// many words, allocated as the library allocates a filter's (see
// makeWords), with its cache lines chained in one random cycle.
func newLimitMemory(n int64) (*limitMemory, error) {
	bitSize, _, err := bloom.Size(n, bench.P)
	if err != nil {
		return nil, err
	}
	words := int(bitSize / 64)
	if uint64(words) > math.MaxUint32 {
		return nil, fmt.Errorf("bench: limit memory of %d words: the gather's indexes hold 32 bits", words)
	}
	m := &limitMemory{words: makeWords(words), gather: gatherIndexes(words)}
	m.chain()
	return m, nil
}

// chain links m's lines into one cycle: a random permutation of the lines,
// each line holding the index of the next one's first word. A memory of
// less than a line is a cycle of its first word.
func (m *limitMemory) chain() {
	lines := len(m.words) / lineWords
	if lines < 2 {
		m.words[0] = 0
		return
	}
	order := make([]uint32, lines)
	for i := range order {
		order[i] = uint32(i)
	}
	// Fisher–Yates, from its own range of the generator.
	for i := lines - 1; i > 0; i-- {
		j, _ := bits.Mul64(splitmix.At(bench.Seed^0x6c696d, uint64(i)), uint64(i+1))
		order[i], order[j] = order[j], order[i]
	}
	for t, l := range order {
		m.words[int(l)*lineWords] = uint64(order[(t+1)%lines]) * lineWords
	}
}

// BenchDependentLoads times loads that each wait for the one before: it
// follows m's chain, a random cache line per load, so that ns/op is the
// latency of a load from m.
func (m *limitMemory) BenchDependentLoads(b *testing.B) {
	w := m.words
	i := uint64(0)
	b.ResetTimer()
	for range b.N {
		i = atomic.LoadUint64(&w[i])
	}
	runtime.KeepAlive(i)
}

// BenchIndependentLoads times random loads that wait for nothing: a plain
// gather, each load's address read from an array of random word indexes
// made beforehand, so that the loop holds nothing but the loads and the
// core keeps as many misses in flight as it can track. ns/op is the
// throughput of random loads from m, the fastest this machine does them:
// deriving each address in the loop instead, from a mixed counter, takes
// room in the core's window of instructions that loads would use
// (results/choices.md has what it cost).
func (m *limitMemory) BenchIndependentLoads(b *testing.B) {
	w, idx := m.words, m.gather
	mask := len(idx) - 1
	var acc uint64
	b.ResetTimer()
	for i := range b.N {
		acc += w[idx[i&mask]]
	}
	runtime.KeepAlive(acc) // so that the loads are not optimized away
}

// gatherIndexes returns random indexes of words, a power of two of them:
// four per word, between 2¹² and 2²⁴, so that a small memory's gather
// loops over indexes that stay in the caches beside it and a large one's
// streams them, which the hardware prefetches.
func gatherIndexes(words int) []uint32 {
	n := 1 << 12
	for n < 4*words && n < 1<<24 {
		n <<= 1
	}
	idx := make([]uint32, n)
	for i := range idx {
		x, _ := bits.Mul64(splitmix.At(bench.Seed^0x676174, uint64(i)), uint64(words))
		idx[i] = uint32(x)
	}
	return idx
}

// BenchDependentGroups times groups of k random loads that wait for each
// other within no group, each group waiting for the one before: the
// addresses of a group come from the sum of the words the group before
// loaded and from the group's number, so that no two groups share an
// address even when those words are zero, as most of m's are. ns/op is the
// latency of k misses in flight together, which is what a single lookup of
// a present key waits for at best.
func (m *limitMemory) BenchDependentGroups(b *testing.B, k int) {
	w := m.words
	n := uint64(len(w))
	x := uint64(0)
	b.ResetTimer()
	for g := range uint64(b.N) {
		var acc uint64
		for j := range uint64(k) {
			i, _ := bits.Mul64(splitmix.Mix(x+g*uint64(k)+j), n)
			acc += atomic.LoadUint64(&w[i])
		}
		x += acc
	}
	runtime.KeepAlive(x)
}

// HugePageShare returns the share of m's bytes that the kernel backs with
// transparent huge pages, or -1 where that cannot be read.
func (m *limitMemory) HugePageShare() float64 {
	lo := uintptr(unsafe.Pointer(&m.words[0]))
	hi := lo + uintptr(len(m.words))*8
	huge, ok := hugePageBytes(lo, hi)
	if !ok {
		return -1
	}
	return float64(huge) / float64(hi-lo)
}
