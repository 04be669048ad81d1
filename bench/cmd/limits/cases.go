package main

import (
	"math"
	"runtime"
	"sync"
	"testing"
	"time"

	"github.com/mitzbloom/mitzbloom/bench"
	"github.com/mitzbloom/mitzbloom/bloom"
	"github.com/mitzbloom/mitzbloom/bloom/bloomtest"
	"github.com/mitzbloom/mitzbloom/bloom/raw"
	"github.com/mitzbloom/mitzbloom/funnel"
)

// A limitCase is one benchmark of the limits report: an operation of
// mitzbloom on a filter far larger than the caches, or one of the limits
// themselves, with what the report compares it with.
type limitCase struct {
	// Name names the case, such as "MightContainMany/present".
	Name string
	// Run is the benchmark; ns/op is per key (per load for the limits).
	Run func(*testing.B)
	// Lines returns the number of random cache lines one op must read at
	// least: k for a present key, the mean number of probes an absent key
	// needs at the filter's fill. It is known once Run has built the
	// fixture, and 0 for the limits.
	Lines func() float64
	// Dependent is set where the op is compared with one dependent load
	// (latency) rather than with Lines independent loads (throughput).
	Dependent bool
	// Target is the ratio to the limit the op should stay under, 0 if
	// none.
	Target float64
}

// limitSizes are the filter sizes of the limits report: 1e8 keys is the
// size it is about, 1e4 checks the apparatus in CI.
var limitSizes = []int64{1e4, 1e6, 1e7, 1e8}

// Names of the limit cases.
const (
	dependentLoadsCase   = "limit/dependent-load"
	independentLoadsCase = "limit/independent-load"
	// hashCase is the hashing of a key alone, which every operation pays.
	hashCase = "hash"
	// hashChainedCase is the hashing of a key chosen by the hash before:
	// the latency of the hash, which a single lookup waits for.
	hashChainedCase = "hash/chained"
	// groupLoadsCase is k loads in flight together, each group waiting
	// for the one before.
	groupLoadsCase = "limit/dependent-k-loads"
)

// casesFor returns the limit benchmarks for filters of n keys, then
// mitzbloom's operations with keys of the workload named key ("int64" or
// "hostport"). The memory and filters are made when a case first runs and
// kept for the others, one size and key type at a time: at 1e8 keys that
// is about a gigabyte and a minute of filling.
func casesFor(key string, n int64) []limitCase {
	switch key {
	case "int64":
		return limitCases(key, n, funnel.Int64, bench.Int64Key, func(k int64) uint64 { return uint64(k) })
	case "hostport":
		// A string's header and its bytes.
		return limitCases(key, n, funnel.String, bench.HostPortKey, func(k string) uint64 { return uint64(len(k)) + uint64(k[0]) })
	}
	return nil
}

// limitCache holds the fixtures of one size and key type.
var limitCache struct {
	sync.Mutex
	key string
	n   int64
	mem *limitMemory
	fix any // *limitFixture[K]
}

// releaseFixtures drops the memory and filters the limit cases made.
func releaseFixtures() {
	limitCache.Lock()
	defer limitCache.Unlock()
	limitCache.mem, limitCache.fix, limitCache.key, limitCache.n = nil, nil, "", 0
	runtime.GC()
}

func limitClaim(key string, n int64) {
	if limitCache.key != key || limitCache.n != n {
		limitCache.mem, limitCache.fix = nil, nil
		runtime.GC()
		limitCache.key, limitCache.n = key, n
	}
}

// memoryHugePageShare returns the share of the limit benchmarks' memory,
// as last made, that the kernel backs with huge pages, or -1 if it is not
// known.
func memoryHugePageShare() float64 {
	limitCache.Lock()
	defer limitCache.Unlock()
	if limitCache.mem == nil {
		return -1
	}
	return limitCache.mem.HugePageShare()
}

func cachedMemory(b *testing.B, key string, n int64) *limitMemory {
	limitCache.Lock()
	defer limitCache.Unlock()
	limitClaim(key, n)
	if limitCache.mem == nil {
		m, err := newLimitMemory(n)
		if err != nil {
			b.Fatal(err)
		}
		limitCache.mem = m
	}
	return limitCache.mem
}

func limitFixtureOf[K any](b *testing.B, key string, n int64, f funnel.Funnel[K], keyOf func(uint64) K) *limitFixture[K] {
	limitCache.Lock()
	defer limitCache.Unlock()
	limitClaim(key, n)
	if fx, ok := limitCache.fix.(*limitFixture[K]); ok {
		return fx
	}
	fx, err := newLimitFixture(n, f, keyOf)
	if err != nil {
		b.Fatal(err)
	}
	limitCache.fix = fx
	return fx
}

// limitFixture holds the filters of one key type and size.
type limitFixture[K any] struct {
	n      int64
	f      funnel.Funnel[K]
	keyOf  func(uint64) K
	filter *bloom.Filter[K] // holds the keys of indexes [0, n)
	// present and absent keys, and both shuffled together
	present, absent, mixed []K

	// rot's previous generation holds rotPrev's keys, its current one
	// rotCur's, 0.95·n keys each.
	rot             *bloom.Rotating[K]
	rotCur, rotPrev []K

	fill    *fillState[K, *bloom.Filter[K]]
	rotFill *fillState[K, *bloom.Rotating[K]]
}

// rotatingShare is the part of a generation's expected insertions that the
// Rotating fixture puts in each: a generation full to n would rotate early
// on its counts, at a point that depends on the keys.
const rotatingShare = 0.95

func newLimitFixture[K any](n int64, f funnel.Funnel[K], keyOf func(uint64) K) (*limitFixture[K], error) {
	fx := &limitFixture[K]{n: n, f: f, keyOf: keyOf}
	var err error
	if fx.filter, err = bloom.New(f, n, bench.P); err != nil {
		return nil, err
	}
	putIndexes(fx.filter, keyOf, 0, uint64(n))
	half := min(int(n), 1<<20)
	for j := range half {
		fx.present = append(fx.present, keyOf(uint64(j)*uint64(n)/uint64(half)))
		fx.absent = append(fx.absent, keyOf(bench.AbsentBase+uint64(j)))
	}
	for _, x := range bench.ProbeIndexes(uint64(n), half) {
		fx.mixed = append(fx.mixed, keyOf(x))
	}

	clock := bloomtest.NewClock(time.Unix(0, 0))
	if fx.rot, err = bloom.NewRotating(f, n, bench.P, time.Hour, bloom.WithClock(clock)); err != nil {
		return nil, err
	}
	m := uint64(float64(n) * rotatingShare)
	putIndexes(fx.rot, keyOf, 0, m)
	clock.Advance(time.Hour)
	putIndexes(fx.rot, keyOf, uint64(n), uint64(n)+m)
	for j := range min(int(m), 1<<20) {
		fx.rotPrev = append(fx.rotPrev, keyOf(uint64(j)*m/uint64(min(int(m), 1<<20))))
		fx.rotCur = append(fx.rotCur, keyOf(uint64(n)+uint64(j)*m/uint64(min(int(m), 1<<20))))
	}

	fx.fill = &fillState[K, *bloom.Filter[K]]{n: uint64(n), keyOf: keyOf, make: func() (*bloom.Filter[K], error) {
		return bloom.New(f, n, bench.P)
	}}
	fx.rotFill = &fillState[K, *bloom.Rotating[K]]{n: uint64(n), keyOf: keyOf, make: func() (*bloom.Rotating[K], error) {
		// Generations fill on their counts as the benchmark puts new keys:
		// the previous one full, the current one filling.
		r, err := bloom.NewRotating(f, n, bench.P, time.Hour, bloom.WithClock(bloomtest.NewClock(time.Unix(0, 0))))
		if err == nil {
			putIndexes(r, keyOf, 2*uint64(n), 2*uint64(n)+m)
		}
		return r, err
	}}
	for _, st := range []interface{ renew() error }{fx.fill, fx.rotFill} {
		if err := st.renew(); err != nil {
			return nil, err
		}
	}
	return fx, nil
}

// putIndexes puts the keys of indexes [from, to) in s, [bench.Chunk] at a
// time.
func putIndexes[K any](s interface{ PutMany([]K) }, keyOf func(uint64) K, from, to uint64) {
	keys := make([]K, 0, bench.Chunk)
	for i := from; i < to; {
		keys = keys[:0]
		for ; i < to && len(keys) < bench.Chunk; i++ {
			keys = append(keys, keyOf(i))
		}
		s.PutMany(keys)
	}
}

// fillState is a filter being filled by a PutMany benchmark, from empty to
// n keys and then again in a new one, across runs.
type fillState[K any, S interface{ PutMany([]K) }] struct {
	n     uint64
	keyOf func(uint64) K
	make  func() (S, error)
	set   S
	pos   uint64
	win   []K // the keys of indexes [winLo, winLo+len(win))
	winLo uint64
}

// fillWindow is the most keys a fillState makes ahead.
const fillWindow = 1 << 18

func (st *fillState[K, S]) renew() error {
	var zero S
	st.set = zero // let the full one go first
	runtime.GC()
	s, err := st.make()
	st.set, st.pos = s, 0
	return err
}

// run puts the next ops keys, [bench.Chunk] at a time, making keys and
// filters with the timer stopped.
func (st *fillState[K, S]) run(b *testing.B, ops int) {
	for ops > 0 {
		if st.pos == st.n {
			b.StopTimer()
			if err := st.renew(); err != nil {
				b.Fatal(err)
			}
			b.StartTimer()
		}
		if st.pos < st.winLo || st.pos >= st.winLo+uint64(len(st.win)) {
			b.StopTimer()
			st.win, st.winLo = st.win[:0], st.pos
			for i := st.pos; i < min(st.n, st.pos+fillWindow); i++ {
				st.win = append(st.win, st.keyOf(i))
			}
			b.StartTimer()
		}
		t := st.pos - st.winLo
		m := min(uint64(ops), bench.Chunk, uint64(len(st.win))-t)
		st.set.PutMany(st.win[t : t+m])
		st.pos += m
		ops -= int(m)
	}
}

// absentProbes returns the mean number of probes MightContain makes for a
// key never put in a filter whose share fill of bits is set: its ith probe
// is made when the i before it found their bits set.
func absentProbes(fill float64, k int) float64 {
	p := 0.0
	for i := range k {
		p += math.Pow(fill, float64(i))
	}
	return p
}

func filterFill[K any](f *bloom.Filter[K]) float64 {
	return float64(f.BitCount()) / float64(f.BitSize())
}

// b2u returns 1 for true and 0 for false, so that a benchmark can make its
// next key depend on an answer. The compiler makes it data, not a branch:
// the bool's byte zero-extended (MOVBLZX on amd64; see go build
// -gcflags=-S).
func b2u(v bool) int {
	x := 0
	if v {
		x = 1
	}
	return x
}

// benchEach asks ask about b.N keys cycled from keys, one at a time, each
// independent of the answer before.
func benchEach[K any](b *testing.B, keys []K, ask func(K) bool) {
	found := 0
	b.ResetTimer()
	for i, t := 0, 0; i < b.N; i++ {
		found += b2u(ask(keys[t]))
		if t++; t == len(keys) {
			t = 0
		}
	}
	runtime.KeepAlive(found)
}

// benchChain asks ask about b.N keys from keys, each chosen by the answer
// about the one before (the next key, or the one after it if the answer was
// true), so that no lookup starts before the one before it has finished:
// ns/op is the latency of one lookup. The keys are too many for the caches,
// but a lookup's key is usually at hand: while one lookup runs, both keys
// that may come next are read (with warm), so that their loads do not add
// to the chain.
func benchChain[K any](b *testing.B, keys []K, ask func(K) bool, warm func(K) uint64) {
	t := 0
	var acc uint64
	b.ResetTimer()
	for range b.N {
		// t+1 and t+2, wrapped without a divide.
		n1, n2 := t+1, t+2
		if n2 >= len(keys) {
			n1, n2 = n1%len(keys), n2-len(keys)
		}
		acc += warm(keys[n1]) + warm(keys[n2])
		t += 1 + b2u(ask(keys[t]))
		if t >= len(keys) {
			t -= len(keys)
		}
	}
	runtime.KeepAlive(acc)
	runtime.KeepAlive(t)
}

// benchBatches asks ask about b.N keys cycled from keys, [bench.Chunk] at a
// time.
func benchBatches[K any](b *testing.B, keys []K, ask func(dst []bool, keys []K) []bool) {
	dst := make([]bool, 0, bench.Chunk)
	b.ResetTimer()
	for done, t := 0, 0; done < b.N; {
		m := min(bench.Chunk, b.N-done, len(keys)-t)
		dst = ask(dst[:0], keys[t:t+m])
		done += m
		if t += m; t == len(keys) {
			t = 0
		}
	}
}

func limitCases[K any](key string, n int64, f funnel.Funnel[K], keyOf func(uint64) K, warm func(K) uint64) []limitCase {
	var fx *limitFixture[K]
	get := func(b *testing.B) *limitFixture[K] {
		fx = limitFixtureOf(b, key, n, f, keyOf)
		b.ReportAllocs()
		return fx
	}
	k := func() float64 { return float64(fx.filter.NumHashFunctions()) }
	absent := func() float64 { return absentProbes(filterFill(fx.filter), fx.filter.NumHashFunctions()) }
	// The mean probes of a key absent from the Rotating's current and
	// previous generations.
	rotAbsent := func() (cur, prev float64) {
		st := fx.rot.Stats()
		kk := fx.filter.NumHashFunctions()
		return absentProbes(st.Current.FillRatio, kk), absentProbes(st.Previous.FillRatio, kk)
	}
	return []limitCase{
		{Name: dependentLoadsCase, Run: func(b *testing.B) { cachedMemory(b, key, n).BenchDependentLoads(b) }},
		{Name: independentLoadsCase, Run: func(b *testing.B) { cachedMemory(b, key, n).BenchIndependentLoads(b) }},
		{Name: groupLoadsCase, Run: func(b *testing.B) {
			_, k, err := bloom.Size(n, bench.P)
			if err != nil {
				b.Fatal(err)
			}
			cachedMemory(b, key, n).BenchDependentGroups(b, k)
		}},
		{Name: hashCase, Run: func(b *testing.B) {
			fx := get(b)
			h := raw.HasherFor(f)
			var acc uint64
			b.ResetTimer()
			for i, t := 0, 0; i < b.N; i++ {
				h1, h2 := h.Sum128(fx.present[t])
				acc += h1 ^ h2
				if t++; t == len(fx.present) {
					t = 0
				}
			}
			runtime.KeepAlive(acc)
		}},
		{Name: hashChainedCase, Run: func(b *testing.B) {
			fx := get(b)
			h := raw.HasherFor(f)
			t := 0
			b.ResetTimer()
			for range b.N {
				h1, h2 := h.Sum128(fx.present[t])
				// The next key, or the one after it, as benchChain picks.
				t += 1 + int((h1^h2)&1)
				if t >= len(fx.present) {
					t -= len(fx.present)
				}
			}
			runtime.KeepAlive(t)
		}},
		{Name: "MightContainMany/present", Target: 1.2, Lines: k, Run: func(b *testing.B) {
			fx := get(b)
			benchBatches(b, fx.present, fx.filter.MightContainMany)
		}},
		{Name: "MightContainMany/absent", Target: 1.5, Lines: absent, Run: func(b *testing.B) {
			fx := get(b)
			benchBatches(b, fx.absent, fx.filter.MightContainMany)
		}},
		{Name: "PutMany/fill", Target: 1.5, Lines: k, Run: func(b *testing.B) {
			fx := get(b)
			b.ResetTimer()
			fx.fill.run(b, b.N)
		}},
		{Name: "MightContain/present/chained", Target: 1.3, Dependent: true, Lines: k, Run: func(b *testing.B) {
			fx := get(b)
			benchChain(b, fx.present, fx.filter.MightContain, warm)
		}},
		{Name: "MightContain/absent/chained", Dependent: true, Lines: absent, Run: func(b *testing.B) {
			fx := get(b)
			benchChain(b, fx.absent, fx.filter.MightContain, warm)
		}},
		{Name: "MightContain/mixed/chained", Dependent: true, Run: func(b *testing.B) {
			fx := get(b)
			benchChain(b, fx.mixed, fx.filter.MightContain, warm)
		}},
		{Name: "MightContain/present", Lines: k, Run: func(b *testing.B) {
			fx := get(b)
			benchEach(b, fx.present, fx.filter.MightContain)
		}},
		{Name: "MightContain/absent", Lines: absent, Run: func(b *testing.B) {
			fx := get(b)
			benchEach(b, fx.absent, fx.filter.MightContain)
		}},
		{Name: "Rotating.MightContainMany/current", Target: 1.5, Lines: k, Run: func(b *testing.B) {
			fx := get(b)
			benchBatches(b, fx.rotCur, fx.rot.MightContainMany)
		}},
		{Name: "Rotating.MightContainMany/previous", Target: 1.5, Lines: func() float64 { cur, _ := rotAbsent(); return cur + k() }, Run: func(b *testing.B) {
			fx := get(b)
			benchBatches(b, fx.rotPrev, fx.rot.MightContainMany)
		}},
		{Name: "Rotating.MightContainMany/absent", Target: 2, Lines: func() float64 { cur, prev := rotAbsent(); return cur + prev }, Run: func(b *testing.B) {
			fx := get(b)
			benchBatches(b, fx.absent, fx.rot.MightContainMany)
		}},
		{Name: "Rotating.PutMany/fill", Target: 2, Lines: k, Run: func(b *testing.B) {
			fx := get(b)
			b.ResetTimer()
			fx.rotFill.run(b, b.N)
		}},
	}
}
