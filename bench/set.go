package bench

import (
	"fmt"
	"runtime"
	"slices"
)

// P is the false-positive probability every filter is created for.
const P = 0.01

// Sizes are the expected insertions of the filters under test. The largest
// filter is larger than any cache: about 120 MB at P.
var Sizes = []int64{1e4, 1e6, 1e8}

// Chunk is how many keys a workload hands a [Set] at a time, and the batch
// size of the batch contenders.
const Chunk = 256

// A Set is a contender under test: a filter, or the exact map. The
// workloads hand it keys a chunk at a time, so that they make one dynamic
// call per chunk rather than one per key; an adapter for a per-key API loops
// over the chunk calling it once per key, as a user would.
type Set[K any] interface {
	// PutMany adds keys to the set.
	PutMany(keys []K)
	// MightContainMany appends to dst, for each key in order, whether the
	// set might contain it, and returns the extended slice.
	MightContainMany(dst []bool, keys []K) []bool
}

// A BitSizer is a Set that knows how many bits of filter it holds.
type BitSizer interface {
	BitSize() int64
}

// A Contender is a way of building a Set of keys of type K.
type Contender[K any] struct {
	// Name names the contender in benchmark names and reports.
	Name string

	// New returns an empty set for about n keys at false-positive
	// probability p.
	New func(n int64, p float64) (Set[K], error)

	// NewSync returns an empty set safe for concurrent use, for the
	// parallel Put workload. Nil means the sets New returns are safe.
	NewSync func(n int64, p float64) (Set[K], error)

	// Share returns a set safe for concurrent use that holds what set, made
	// by New, holds, for the parallel MightContain workload, so that it
	// need not be filled again. It may share set's memory. Nil means the
	// sets New returns are safe.
	Share func(set Set[K]) (Set[K], error)

	// Base, if set, names the contender of the same suite whose sets this
	// one uses, through View: a second way of calling the same filter,
	// which shares the base's filled filters instead of filling its own.
	// New, NewSync and Share are then the base's.
	Base string
	// View returns the set through which this contender calls a set of its
	// base.
	View func(set Set[K]) Set[K]

	// Skip, if not nil, returns why the contender sits out filters of n
	// keys, or "" if it does not.
	Skip func(n int64) string
	// Ops, if not nil, lists the only operations the contender runs.
	Ops []Op
}

// takes reports whether c runs op.
func (c *Contender[K]) takes(op Op) bool { return c.Ops == nil || slices.Contains(c.Ops, op) }

// newSet returns a new empty set for n keys, safe for concurrent use if
// sync is set. c must not be a view (see Base).
func (c *Contender[K]) newSet(n int64, sync bool) (Set[K], error) {
	mk := c.New
	if sync && c.NewSync != nil {
		mk = c.NewSync
	}
	s, err := mk(n, P)
	if err != nil {
		return nil, fmt.Errorf("%s: new set for %d keys: %w", c.Name, n, err)
	}
	return s, nil
}

// share returns a set safe for concurrent use holding what set holds.
func (c *Contender[K]) share(set Set[K]) (Set[K], error) {
	if c.Share == nil {
		return set, nil
	}
	s, err := c.Share(set)
	if err != nil {
		return nil, fmt.Errorf("%s: sharing a set: %w", c.Name, err)
	}
	return s, nil
}

// view returns the set through which c calls a set of its base.
func (c *Contender[K]) view(set Set[K]) Set[K] {
	if c.View == nil {
		return set
	}
	return c.View(set)
}

// newWarmSet is newSet for the sets that Put benchmarks fill: their memory
// is backed by the OS before they are timed. A set's words are allocated
// fresh from the OS and untouched, so the first write to each page of them
// faults, which on a virtual machine can cost 25µs a page, more than
// putting hundreds of keys: a run of a Put benchmark on a filter of 1e8
// keys would time page faults, not puts. (A JVM zeroes every new array,
// which touches its pages when it is made.) So newWarmSet makes the set,
// measures the heap it took, frees it, touches as much memory, frees that
// and makes the set again, which then takes the touched pages from the Go
// heap. That relies on the heap keeping freed pages for a while, which it
// does at the default GOGC (with a small GOGC its scavenger returns them to
// the OS at once). Small sets come from pages the heap reuses anyway.
func (c *Contender[K]) newWarmSet(n int64, sync bool) (Set[K], error) {
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	before := ms.HeapAlloc
	set, err := c.newSet(n, sync)
	if err != nil {
		return nil, err
	}
	runtime.ReadMemStats(&ms)
	size := int64(ms.HeapAlloc) - int64(before)
	if size < 1<<20 {
		return set, nil
	}
	set = nil
	touchPages(size)
	runtime.GC()
	return c.newSet(n, sync)
}

// touchPages allocates size bytes, writes one byte in every page of them and
// drops them.
func touchPages(size int64) {
	b := make([]byte, size)
	for i := 0; i < len(b); i += 4096 {
		b[i] = 1
	}
	runtime.KeepAlive(b)
}

// syncDiffers reports whether the sets for parallel Put workloads are not
// the ones New returns.
func (c *Contender[K]) syncDiffers(sync bool) bool { return sync && c.NewSync != nil }

func (c *Contender[K]) skip(n int64) string {
	if c.Skip == nil {
		return ""
	}
	return c.Skip(n)
}

// SizeName writes n as the benchmarks name it: 1e4, 1e6, 1e8, or in decimal
// if it is not a power of ten.
func SizeName(n int64) string {
	e := 0
	for m := n; m >= 10 && m%10 == 0; m /= 10 {
		e++
	}
	if n > 0 && e > 0 && n == pow10(e) {
		return fmt.Sprintf("1e%d", e)
	}
	return fmt.Sprint(n)
}

func pow10(e int) int64 {
	p := int64(1)
	for range e {
		p *= 10
	}
	return p
}

// SubName returns the name of the sub-benchmark of a contender, key type
// and size, such as "n=1e6/key=int64/filter=mitzbloom".
func SubName(n int64, key, contender string) string {
	return "n=" + SizeName(n) + "/key=" + key + "/filter=" + contender
}
