package bench

import "sync"

// A perKeySet is a Set built on a per-key API that is not safe for
// concurrent use.
type perKeySet[K any] interface {
	Set[K]
	put(k K)
	has(k K) bool
}

// unsynced returns a contender whose sets are not safe for concurrent use:
// the parallel workloads get them behind a lock.
func unsynced[K any](name string, newSet func(n int64, p float64) perKeySet[K]) Contender[K] {
	return Contender[K]{
		Name: name,
		New: func(n int64, p float64) (Set[K], error) {
			return newSet(n, p), nil
		},
		NewSync: func(n int64, p float64) (Set[K], error) {
			return &locked[K]{s: newSet(n, p)}, nil
		},
		Share: func(set Set[K]) (Set[K], error) {
			return &locked[K]{s: set.(perKeySet[K])}, nil
		},
	}
}

// locked shares a set that is not safe for concurrent use the way users
// share one: behind a sync.RWMutex, taken for every key, a read lock to
// look up and the write lock to put.
type locked[K any] struct {
	mu sync.RWMutex
	s  perKeySet[K]
}

func (l *locked[K]) PutMany(keys []K) {
	for _, k := range keys {
		l.mu.Lock()
		l.s.put(k)
		l.mu.Unlock()
	}
}

func (l *locked[K]) MightContainMany(dst []bool, keys []K) []bool {
	for _, k := range keys {
		l.mu.RLock()
		dst = append(dst, l.s.has(k))
		l.mu.RUnlock()
	}
	return dst
}
