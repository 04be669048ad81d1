package bench

import (
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
)

// An Op is an operation the benchmarks time. Every benchmark reports the
// time of one key: a batch contender's time per op is its time per batch
// divided by the batch size.
type Op string

const (
	// Put puts keys into a filter made for n keys, from empty to full:
	// keys of indexes 0, 1, …, n−1, then a new filter and the same keys
	// again. Making the filter and the keys is not timed.
	Put Op = "Put"
	// MightContain asks a full filter of n keys about probes half of which
	// it holds (see [ProbeIndexes]), in a shuffled order.
	MightContain Op = "MightContain"
	// PutParallel is Put from all Ps at once, into one shared filter.
	PutParallel Op = "PutParallel"
	// MightContainParallel is MightContain from all Ps at once, on one
	// shared filter.
	MightContainParallel Op = "MightContainParallel"
)

// Ops lists every Op.
var Ops = []Op{Put, MightContain, PutParallel, MightContainParallel}

// Parallel reports whether o runs on all Ps at once.
func (o Op) Parallel() bool { return o == PutParallel || o == MightContainParallel }

// Benchmark returns the benchmark of op for the named contender on filters
// of n keys.
func (s *Suite[K]) Benchmark(op Op, contender string, n int64, cfg Config) func(*testing.B) {
	return func(b *testing.B) {
		c, base, err := s.resolve(contender)
		if err != nil {
			b.Fatal(err)
		}
		if why := s.Skip(contender, n); why != "" {
			b.Skip(why)
		}
		if !c.takes(op) {
			b.Skipf("%s does not run %s", contender, op)
		}
		b.ReportAllocs()
		switch op {
		case Put:
			err = s.benchPut(b, c, base, n)
		case PutParallel:
			err = s.benchPutParallel(b, c, base, n)
		case MightContain:
			err = s.benchMightContain(b, c, base, n, cfg)
		case MightContainParallel:
			err = s.benchMightContainParallel(b, c, base, n, cfg)
		default:
			err = fmt.Errorf("bench: unknown op %q", op)
		}
		if err != nil {
			b.Fatal(err)
		}
	}
}

// benchPut puts b.N new keys into filters sized for n, one goroutine.
func (s *Suite[K]) benchPut(b *testing.B, c, base *Contender[K], n int64) error {
	st, err := s.putState(base, n, false)
	if err != nil {
		return err
	}
	b.ResetTimer()
	st.run(b, c.view, b.N)
	return nil
}

// benchPutParallel puts b.N new keys into filters sized for n from every
// goroutine of b.RunParallel.
func (s *Suite[K]) benchPutParallel(b *testing.B, c, base *Contender[K], n int64) error {
	st, err := s.putState(base, n, true)
	if err != nil {
		return err
	}
	pp, err := st.parallel(c.view, b.N)
	if err != nil {
		return err
	}
	var next atomic.Uint64
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		for m := chunkOf(pb); m > 0; m = chunkOf(pb) {
			pp.put(next.Add(uint64(m))-uint64(m), m)
		}
	})
	b.StopTimer()
	pp.finish()
	return nil
}

// benchMightContain looks up b.N probes in a full filter of n keys, one
// goroutine.
func (s *Suite[K]) benchMightContain(b *testing.B, c, base *Contender[K], n int64, cfg Config) error {
	fs, err := s.full(base, n)
	if err != nil {
		return err
	}
	probes := s.probes(n, cfg.probeHalf()).keys
	set := c.view(fs.set)
	dst := make([]bool, 0, Chunk)
	b.ResetTimer()
	lookUp(set, probes, 0, b.N, dst)
	return nil
}

// benchMightContainParallel looks up b.N probes in a full filter of n keys
// that is safe for concurrent use, from every goroutine of b.RunParallel.
func (s *Suite[K]) benchMightContainParallel(b *testing.B, c, base *Contender[K], n int64, cfg Config) error {
	fs, err := s.full(base, n)
	if err != nil {
		return err
	}
	probes := s.probes(n, cfg.probeHalf()).keys
	shared, err := fs.concurrent(base)
	if err != nil {
		return err
	}
	set := c.view(shared)
	dsts := newBuffers(runtime.GOMAXPROCS(0))
	var next atomic.Uint64
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		dst := dsts.get()
		for m := chunkOf(pb); m > 0; m = chunkOf(pb) {
			lookUp(set, probes, next.Add(uint64(m))-uint64(m), m, dst)
		}
	})
	return nil
}

// chunkOf returns how many keys, up to Chunk, pb lets the goroutine handle
// next, 0 when it is done. Taking keys a chunk at a time keeps the
// goroutines off one shared counter for every key.
func chunkOf(pb *testing.PB) int {
	m := 0
	for m < Chunk && pb.Next() {
		m++
	}
	return m
}

// lookUp asks set about count probes, from position from on, cycling
// through probes.
func lookUp[K any](set Set[K], probes []K, from uint64, count int, dst []bool) {
	for count > 0 {
		o := int(from % uint64(len(probes)))
		m := min(count, Chunk, len(probes)-o)
		set.MightContainMany(dst[:0], probes[o:o+m])
		from += uint64(m)
		count -= m
	}
}

// buffers hands each goroutine of a RunParallel its own answer buffer,
// made before the timer starts.
type buffers struct {
	mu   sync.Mutex
	free [][]bool
}

func newBuffers(count int) *buffers {
	b := &buffers{}
	for range count {
		b.free = append(b.free, make([]bool, 0, Chunk))
	}
	return b
}

func (b *buffers) get() []bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	if len(b.free) == 0 {
		return make([]bool, 0, Chunk)
	}
	dst := b.free[len(b.free)-1]
	b.free = b.free[:len(b.free)-1]
	return dst
}

// A timer is the part of testing.B that a serial Put run uses, so that tests
// can drive it without one.
type timer interface {
	StopTimer()
	StartTimer()
}

// putState is a Put benchmark's filter being filled. The benchmarks of one
// contender and size (and of the contenders viewing it), and the runs of
// one benchmark, continue where the previous one stopped: the filter of 1e8
// keys fills over many runs, and is made once instead of once per run.
type putState[K any] struct {
	suite *Suite[K]
	c     *Contender[K]
	n     uint64
	sync  bool
	set   Set[K]
	pos   uint64  // the number of keys in set, and the index of the next key
	win   ring[K] // keys made ahead of time
	size  int     // how many keys the window holds: min(n, maxWindow)
}

// putState returns the Put state of base's filters of n keys from the
// cache, or a new one.
func (s *Suite[K]) putState(c *Contender[K], n int64, sync bool) (*putState[K], error) {
	cache.Lock()
	defer cache.Unlock()
	claim(fixtureOwner{s.Key, c.Name, n})
	kind := c.syncDiffers(sync)
	if st, ok := cache.put.v.(*putState[K]); ok && cache.put.concurrent == kind {
		return st, nil
	}
	cache.put = slot{} // let the other kind go before making this one
	st, err := s.newPutState(c, n, kind, int(min(n, maxWindow)))
	if err != nil {
		return nil, err
	}
	cache.put = slot{kind, st}
	return st, nil
}

// newPutState returns a Put state with an empty set and a window of size
// keys.
func (s *Suite[K]) newPutState(c *Contender[K], n int64, sync bool, size int) (*putState[K], error) {
	set, err := c.newWarmSet(n, sync)
	if err != nil {
		return nil, err
	}
	st := &putState[K]{suite: s, c: c, n: uint64(n), sync: sync, set: set, size: size}
	st.win.fill(s.KeyOf, 0, st.n, size)
	return st, nil
}

// run puts the next ops keys through view, one chunk at a time. Making a
// new filter when one is full and making keys when the window runs out
// happen with the timer stopped.
func (st *putState[K]) run(t timer, view func(Set[K]) Set[K], ops int) {
	set := view(st.set)
	for ops > 0 {
		if st.pos == st.n {
			t.StopTimer()
			st.renew()
			set = view(st.set)
			t.StartTimer()
		}
		keys, ok := st.win.at(st.pos, st.n, min(ops, Chunk))
		if !ok {
			t.StopTimer()
			st.win.fill(st.suite.KeyOf, st.pos, st.n, st.size)
			// The old keys are garbage: collect them now rather than
			// while the timer runs.
			runtime.GC()
			t.StartTimer()
			continue
		}
		set.PutMany(keys)
		st.pos += uint64(len(keys))
		ops -= len(keys)
	}
}

func (st *putState[K]) renew() {
	st.set = nil // let the full set go before making the next
	set, err := st.c.newWarmSet(int64(st.n), st.sync)
	if err != nil {
		// It was made with these arguments before.
		panic(fmt.Sprintf("bench: %v", err))
	}
	st.set, st.pos = set, 0
}

// parallelPut is a parallel Put run of ops keys, with all the filters it
// fills made ahead: position j of the run puts key (base+j) mod n into
// sets[(base+j)/n], through views[(base+j)/n].
type parallelPut[K any] struct {
	st    *putState[K]
	base  uint64
	ops   uint64
	sets  []Set[K]
	views []Set[K]
}

// parallel prepares a run of ops keys through view, continuing from st.
func (st *putState[K]) parallel(view func(Set[K]) Set[K], ops int) (*parallelPut[K], error) {
	pp := &parallelPut[K]{st: st, base: st.pos, ops: uint64(ops)}
	last := (st.pos + pp.ops - 1) / st.n
	pp.sets = append(pp.sets, st.set)
	for range last {
		set, err := st.c.newWarmSet(int64(st.n), st.sync)
		if err != nil {
			return nil, err
		}
		pp.sets = append(pp.sets, set)
	}
	for _, set := range pp.sets {
		pp.views = append(pp.views, view(set))
	}
	if uint64(len(st.win.keys)) < st.n {
		// The window does not hold every key: make the keys of this
		// run's positions, at most n of them since positions n apart put
		// the same key.
		st.win.fill(st.suite.KeyOf, st.pos%st.n, st.n, int(min(st.n, pp.ops)))
	}
	return pp, nil
}

// put puts the keys of positions [j, j+m) of the run.
func (pp *parallelPut[K]) put(j uint64, m int) {
	n := pp.st.n
	for m > 0 {
		g := pp.base + j
		keys, ok := pp.st.win.at(g%n, n, min(m, Chunk))
		if !ok {
			panic(fmt.Sprintf("bench: key %d of a parallel Put is not in the window", g%n))
		}
		pp.views[g/n].PutMany(keys)
		j += uint64(len(keys))
		m -= len(keys)
	}
}

// finish leaves st with the last filter of the run.
func (pp *parallelPut[K]) finish() {
	last := len(pp.sets) - 1
	pp.st.set = pp.sets[last]
	pp.st.pos = pp.base + pp.ops - uint64(last)*pp.st.n
}

// ring holds the keys of consecutive indexes, wrapping at n: keys[t] is
// the key of index (first+t) mod n.
type ring[K any] struct {
	keys  []K
	first uint64
}

// fill makes the ring hold size keys from index first on.
func (r *ring[K]) fill(keyOf func(uint64) K, first, n uint64, size int) {
	if cap(r.keys) == size {
		r.keys = r.keys[:0]
	} else {
		r.keys = make([]K, 0, size)
	}
	r.first = first
	for t := range uint64(size) {
		r.keys = append(r.keys, keyOf((first+t)%n))
	}
}

// at returns the keys of indexes idx, idx+1, … that the ring holds, up to
// want of them and up to index n−1, or false if it does not hold idx.
func (r *ring[K]) at(idx, n uint64, want int) ([]K, bool) {
	t := (idx + n - r.first) % n
	if t >= uint64(len(r.keys)) {
		return nil, false
	}
	m := min(uint64(want), uint64(len(r.keys))-t, n-idx)
	return r.keys[t : t+m], true
}
