package bench

import (
	"github.com/mitzbloom/mitzbloom/bloom"
	"github.com/mitzbloom/mitzbloom/funnel"
)

// Mitzbloom is the library under test with its default strategy,
// MURMUR128_MITZ_64, called once per key. Its filters are lock-free, so the
// parallel workloads share the same kind of filter.
func Mitzbloom[K any](f funnel.Funnel[K]) Contender[K] {
	return Contender[K]{
		Name: "mitzbloom",
		New: func(n int64, p float64) (Set[K], error) {
			filter, err := bloom.New(f, n, p)
			return mitzSet[K]{filter}, err
		},
	}
}

// mitzSet calls Put and MightContain once per key.
type mitzSet[K any] struct{ f *bloom.Filter[K] }

func (s mitzSet[K]) PutMany(keys []K) {
	for _, k := range keys {
		s.f.Put(k)
	}
}

func (s mitzSet[K]) MightContainMany(dst []bool, keys []K) []bool {
	for _, k := range keys {
		dst = append(dst, s.f.MightContain(k))
	}
	return dst
}

func (s mitzSet[K]) BitSize() int64 { return s.f.BitSize() }

// MitzbloomBatch is the library under test through its batch API,
// PutMany and MightContainMany, called with [Chunk] keys at a time. It
// calls the filters of the contender named "mitzbloom", which must be in the
// same suite, sharing them.
func MitzbloomBatch[K any]() Contender[K] {
	return Contender[K]{Name: "mitzbloom-batch", Base: "mitzbloom", View: batchView[K]}
}

// batchView calls a mitzSet's filter through its batch API: a
// *bloom.Filter is a Set as it is.
func batchView[K any](set Set[K]) Set[K] { return set.(mitzSet[K]).f }

// MitzbloomUnsync is the library under test filled through a
// bloom.Builder, which writes bits plainly rather than atomically, for one
// goroutine, as bits-and-blooms and blobloom's Filter do. It runs the Put
// workload only: its MightContain is mitzbloom's own code, and a Builder
// is not for parallel Puts. Where a test needs its concurrent kind, that
// is mitzbloom's default filter.
func MitzbloomUnsync[K any](f funnel.Funnel[K]) Contender[K] {
	return Contender[K]{
		Name: "mitzbloom-unsync",
		New: func(n int64, p float64) (Set[K], error) {
			b, err := bloom.NewBuilder(f, n, p)
			return builderSet[K]{b}, err
		},
		NewSync: Mitzbloom(f).New,
		Ops:     []Op{Put},
	}
}

// MitzbloomUnsyncBatch is [MitzbloomUnsync] through PutMany, called with
// [Chunk] keys at a time, sharing that contender's filters.
func MitzbloomUnsyncBatch[K any]() Contender[K] {
	return Contender[K]{Name: "mitzbloom-unsync-batch", Base: "mitzbloom-unsync", View: builderBatchView[K], Ops: []Op{Put}}
}

// builderSet calls a Builder's Put and MightContain once per key.
type builderSet[K any] struct{ b *bloom.Builder[K] }

func (s builderSet[K]) PutMany(keys []K) {
	for _, k := range keys {
		s.b.Put(k)
	}
}

func (s builderSet[K]) MightContainMany(dst []bool, keys []K) []bool {
	for _, k := range keys {
		dst = append(dst, s.b.MightContain(k))
	}
	return dst
}

// builderBatchView calls a builderSet's Builder through its PutMany, and
// the concurrent kind's filter, NewSync's, through its batch API.
func builderBatchView[K any](set Set[K]) Set[K] {
	if b, ok := set.(builderSet[K]); ok {
		return builderBatch[K]{b}
	}
	return batchView(set)
}

type builderBatch[K any] struct{ builderSet[K] }

func (s builderBatch[K]) PutMany(keys []K) { s.b.PutMany(keys) }

var _ Set[int64] = (*bloom.Filter[int64])(nil)
