package bench

import (
	"runtime"
	"sync"
	"time"
)

// A Config sets the sample sizes of the workloads. The zero Config means
// the defaults.
type Config struct {
	// ProbeHalf is the number of present keys, and of absent keys, that a
	// MightContain benchmark cycles through (fewer if the filter holds
	// fewer). Default 1<<20.
	ProbeHalf int
	// HeldOut is the number of never-put keys on which Measure counts false
	// positives. Default 1e6.
	HeldOut int
}

func (c Config) probeHalf() int {
	if c.ProbeHalf > 0 {
		return c.ProbeHalf
	}
	return 1 << 20
}

func (c Config) heldOut() int {
	if c.HeldOut > 0 {
		return c.HeldOut
	}
	return 1e6
}

// maxWindow is the most keys a Put benchmark keeps made ahead of time: all
// of them up to 1e6 keys, a window that slides over them for larger
// filters.
const maxWindow = 1 << 20

// Fixtures are expensive (filling a filter of 1e8 keys takes many seconds),
// so the benchmarks of one contender share them: a full set for the
// MightContain benchmarks and Measure, with its form safe for concurrent
// use once one is asked for; a set being filled for the Put benchmarks, of
// the kind (serial or concurrent) last asked for; and the probes, which all
// contenders of a suite share. The cache keeps the fixtures of one
// contender (and its views) at a time, which is the order in which both
// go test -count and the compare command run the benchmarks, and which
// bounds memory: for the map of 1e8 int64 keys, two maps of about 2.5 GB.
var cache struct {
	sync.Mutex
	owner  fixtureOwner
	full   any  // a *fullSet[K]
	put    slot // a *putState[K]
	probes struct {
		key  probeKey
		keys any // *probeSet[K]
	}
}

// A slot holds a fixture of one kind: concurrent or not.
type slot struct {
	concurrent bool
	v          any
}

type fixtureOwner struct {
	suite, contender string
	n                int64
}

type probeKey struct {
	suite string
	n     int64
	half  int
}

// claim makes the cache hold o's fixtures, dropping any other's. The caller
// holds the lock.
func claim(o fixtureOwner) {
	if cache.owner != o {
		cache.owner = o
		cache.full, cache.put = nil, slot{}
	}
}

// fullSet is a set holding the keys of indexes [0, n).
type fullSet[K any] struct {
	set         Set[K]
	shared      Set[K]  // set, safe for concurrent use; made when first needed
	bits        int64   // filter bits, 0 if unknown
	heap        int64   // live heap the filled set holds, in bytes
	fillSeconds float64 // how long the fill took
}

// full returns base's set of n keys, filled, from the cache or newly made.
func (s *Suite[K]) full(base *Contender[K], n int64) (*fullSet[K], error) {
	cache.Lock()
	defer cache.Unlock()
	claim(fixtureOwner{s.Key, base.Name, n})
	if fs, ok := cache.full.(*fullSet[K]); ok {
		return fs, nil
	}
	fs, err := s.fill(base, n)
	if err != nil {
		return nil, err
	}
	cache.full = fs
	return fs, nil
}

// concurrent returns fs's set in a form safe for concurrent use.
func (fs *fullSet[K]) concurrent(base *Contender[K]) (Set[K], error) {
	cache.Lock()
	defer cache.Unlock()
	if fs.shared == nil {
		shared, err := base.share(fs.set)
		if err != nil {
			return nil, err
		}
		fs.shared = shared
	}
	return fs.shared, nil
}

// fill makes a set of n keys and puts the keys of indexes [0, n) in it,
// measuring the live heap it holds afterwards.
func (s *Suite[K]) fill(c *Contender[K], n int64) (*fullSet[K], error) {
	var before, after runtime.MemStats
	settleHeap()
	runtime.ReadMemStats(&before)
	start := time.Now()
	set, err := c.newSet(n, false)
	if err != nil {
		return nil, err
	}
	s.putRange(set, 0, uint64(n))
	elapsed := time.Since(start)
	settleHeap()
	runtime.ReadMemStats(&after)
	fs := &fullSet[K]{set: set, heap: int64(after.HeapAlloc) - int64(before.HeapAlloc), fillSeconds: elapsed.Seconds()}
	if bs, ok := set.(BitSizer); ok {
		fs.bits = bs.BitSize()
	}
	return fs, nil
}

// settleHeap collects garbage twice, since what sync.Pools held lives
// through one collection, so that the live heap is what is reachable.
func settleHeap() {
	runtime.GC()
	runtime.GC()
}

// putRange puts the keys of indexes [from, to) in set. One goroutine makes
// the keys while this one puts them, since making a string key costs about
// as much as putting it.
func (s *Suite[K]) putRange(set Set[K], from, to uint64) {
	const batch = 4096
	free, ready := make(chan []K, 4), make(chan []K, 4)
	for range cap(free) {
		free <- make([]K, 0, batch)
	}
	go func() {
		defer close(ready)
		for i := from; i < to; {
			keys := (<-free)[:0]
			for ; i < to && len(keys) < batch; i++ {
				keys = append(keys, s.KeyOf(i))
			}
			ready <- keys
		}
	}()
	for keys := range ready {
		for i := 0; i < len(keys); i += Chunk {
			set.PutMany(keys[i:min(i+Chunk, len(keys))])
		}
		free <- keys
	}
}

// probeSet holds the keys a MightContain benchmark cycles through.
type probeSet[K any] struct {
	keys    []K
	present []bool // whether keys[i] was put in the full set
}

// probes returns the probes of a full set of n keys (see [ProbeIndexes]).
func (s *Suite[K]) probes(n int64, half int) *probeSet[K] {
	cache.Lock()
	defer cache.Unlock()
	key := probeKey{s.Key, n, half}
	if ps, ok := cache.probes.keys.(*probeSet[K]); ok && cache.probes.key == key {
		return ps
	}
	cache.probes.keys = nil // let the old probes go before making new ones
	idx := ProbeIndexes(uint64(n), half)
	ps := &probeSet[K]{keys: make([]K, len(idx)), present: make([]bool, len(idx))}
	for i, x := range idx {
		ps.keys[i] = s.KeyOf(x)
		ps.present[i] = x < uint64(n)
	}
	cache.probes.key, cache.probes.keys = key, ps
	return ps
}

// Stats describes a contender's full set of N keys.
type Stats struct {
	N int64
	// Bits is the size of the filter in bits, 0 for the map.
	Bits int64
	// HeapBytes is the live heap the full set holds, measured: the filter's
	// words, or the map with its keys.
	HeapBytes int64
	// HeldOut is the number of never-put keys asked about, and
	// FalsePositives how many of them the set reported present.
	HeldOut, FalsePositives int
	// PresentProbes is the number of put keys asked about, and
	// FalseNegatives how many of them the set reported absent: any is a bug.
	PresentProbes, FalseNegatives int
	// FillSeconds is how long putting the N keys took, key making included.
	FillSeconds float64
}

// FPP returns the measured false-positive rate.
func (st Stats) FPP() float64 { return float64(st.FalsePositives) / float64(st.HeldOut) }

// BitsPerKey returns the filter bits per key, 0 for the map.
func (st Stats) BitsPerKey() float64 { return float64(st.Bits) / float64(st.N) }

// HeapBytesPerKey returns the measured live heap per key.
func (st Stats) HeapBytesPerKey() float64 { return float64(st.HeapBytes) / float64(st.N) }

// Measure fills the named contender's set with n keys, or takes it from the
// benchmarks' cache (a view contender's is its base's, which it asks
// through its view), and measures its false-positive rate on held-out keys
// (indexes from [HeldOutBase] on) and its memory. It also asks about the
// present half of the MightContain probes, which must all be found.
func (s *Suite[K]) Measure(contender string, n int64, cfg Config) (Stats, error) {
	c, base, err := s.resolve(contender)
	if err != nil {
		return Stats{}, err
	}
	fs, err := s.full(base, n)
	if err != nil {
		return Stats{}, err
	}
	set := c.view(fs.set)
	st := Stats{N: n, Bits: fs.bits, HeapBytes: fs.heap, FillSeconds: fs.fillSeconds, HeldOut: cfg.heldOut()}
	st.FalsePositives = s.countPresent(set, HeldOutBase, st.HeldOut)
	ps := s.probes(n, cfg.probeHalf())
	dst := make([]bool, 0, Chunk)
	for i := 0; i < len(ps.keys); i += Chunk {
		j := min(i+Chunk, len(ps.keys))
		dst = set.MightContainMany(dst[:0], ps.keys[i:j])
		for t, found := range dst {
			if ps.present[i+t] {
				st.PresentProbes++
				if !found {
					st.FalseNegatives++
				}
			}
		}
	}
	return st, nil
}

// countPresent returns how many of the count keys from index from on set
// reports present.
func (s *Suite[K]) countPresent(set Set[K], from uint64, count int) int {
	keys := make([]K, 0, Chunk)
	dst := make([]bool, 0, Chunk)
	found := 0
	for i := 0; i < count; i += Chunk {
		keys = keys[:0]
		for j := i; j < count && j < i+Chunk; j++ {
			keys = append(keys, s.KeyOf(from+uint64(j)))
		}
		dst = set.MightContainMany(dst[:0], keys)
		for _, f := range dst {
			if f {
				found++
			}
		}
	}
	return found
}

// ReleaseFixtures drops the cached filters and probes, so that their memory
// can go.
func ReleaseFixtures() {
	cache.Lock()
	defer cache.Unlock()
	cache.owner = fixtureOwner{}
	cache.full, cache.put = nil, slot{}
	cache.probes.keys = nil
	cache.probes.key = probeKey{}
}
