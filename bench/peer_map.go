package bench

// Map is the exact baseline: a Go map with the key itself as the map key,
// made with room for n keys. It has no false positives; every Bloom filter
// must beat it on memory. It is not safe for concurrent use, so the
// parallel workloads share one behind a sync.RWMutex, locked once per key.
//
// The map of strings holds the strings, so its memory includes their bytes,
// which a filter does not keep.
func Map[K comparable]() Contender[K] {
	return unsynced("map", func(n int64, _ float64) perKeySet[K] {
		return mapSet[K](make(map[K]struct{}, n))
	})
}

type mapSet[K comparable] map[K]struct{}

func (s mapSet[K]) put(k K) { s[k] = struct{}{} }

func (s mapSet[K]) has(k K) bool {
	_, ok := s[k]
	return ok
}

func (s mapSet[K]) PutMany(keys []K) {
	for _, k := range keys {
		s[k] = struct{}{}
	}
}

func (s mapSet[K]) MightContainMany(dst []bool, keys []K) []bool {
	for _, k := range keys {
		_, ok := s[k]
		dst = append(dst, ok)
	}
	return dst
}
