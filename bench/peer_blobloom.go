package bench

import (
	"encoding/binary"
	"io"

	"github.com/cespare/xxhash/v2"
	"github.com/greatroar/blobloom"
)

// The blobloom contenders are github.com/greatroar/blobloom, a blocked Bloom
// filter (every key's bits in one 512-bit block, one cache line), sized
// with NewOptimized. It takes a 64-bit hash, not a key: the adapters hash
// with xxhash (github.com/cespare/xxhash/v2), the hash blobloom's README
// suggests, and the hashing is part of the time, since users pay it too.
// The parallel workloads use its SyncFilter, which is lock-free; the
// parallel MightContain workload copies the full Filter into one with
// blobloom's Dump and Loader.

// BlobloomInt64 hashes an int64 key's 8 little-endian bytes. A hash is
// needed even for integers: blobloom's README warns that keys passed in
// unmixed give poor results.
func BlobloomInt64() Contender[int64] {
	return Contender[int64]{
		Name: "blobloom",
		New: func(n int64, p float64) (Set[int64], error) {
			return blobInt64{blobloom.NewOptimized(blobConfig(n, p))}, nil
		},
		NewSync: func(n int64, p float64) (Set[int64], error) {
			return blobSyncInt64{blobloom.NewSyncOptimized(blobConfig(n, p))}, nil
		},
		Share: func(set Set[int64]) (Set[int64], error) {
			f, err := toSync(set.(blobInt64).f)
			return blobSyncInt64{f}, err
		},
	}
}

// BlobloomString hashes a string key's bytes.
func BlobloomString() Contender[string] {
	return Contender[string]{
		Name: "blobloom",
		New: func(n int64, p float64) (Set[string], error) {
			return blobString{blobloom.NewOptimized(blobConfig(n, p))}, nil
		},
		NewSync: func(n int64, p float64) (Set[string], error) {
			return blobSyncString{blobloom.NewSyncOptimized(blobConfig(n, p))}, nil
		},
		Share: func(set Set[string]) (Set[string], error) {
			f, err := toSync(set.(blobString).f)
			return blobSyncString{f}, err
		},
	}
}

func blobConfig(n int64, p float64) blobloom.Config {
	return blobloom.Config{Capacity: uint64(n), FPRate: p}
}

// toSync returns a SyncFilter holding what f holds, through blobloom's own
// serialization, streamed rather than buffered whole.
func toSync(f *blobloom.Filter) (*blobloom.SyncFilter, error) {
	r, w := io.Pipe()
	go func() {
		_, err := blobloom.Dump(w, f, "")
		w.CloseWithError(err)
	}()
	l, err := blobloom.NewLoader(r)
	if err != nil {
		r.CloseWithError(err)
		return nil, err
	}
	sf, err := l.LoadSync(nil)
	r.CloseWithError(err)
	return sf, err
}

func xxhashInt64(k int64) uint64 {
	var b [8]byte
	binary.LittleEndian.PutUint64(b[:], uint64(k))
	return xxhash.Sum64(b[:])
}

// The four adapters below differ only in the filter and key types: each
// calls its concrete methods directly, so none pays a dynamic call per key.

type blobInt64 struct{ f *blobloom.Filter }

func (s blobInt64) PutMany(keys []int64) {
	for _, k := range keys {
		s.f.Add(xxhashInt64(k))
	}
}

func (s blobInt64) MightContainMany(dst []bool, keys []int64) []bool {
	for _, k := range keys {
		dst = append(dst, s.f.Has(xxhashInt64(k)))
	}
	return dst
}

func (s blobInt64) BitSize() int64 { return int64(s.f.NumBits()) }

type blobString struct{ f *blobloom.Filter }

func (s blobString) PutMany(keys []string) {
	for _, k := range keys {
		s.f.Add(xxhash.Sum64String(k))
	}
}

func (s blobString) MightContainMany(dst []bool, keys []string) []bool {
	for _, k := range keys {
		dst = append(dst, s.f.Has(xxhash.Sum64String(k)))
	}
	return dst
}

func (s blobString) BitSize() int64 { return int64(s.f.NumBits()) }

type blobSyncInt64 struct{ f *blobloom.SyncFilter }

func (s blobSyncInt64) PutMany(keys []int64) {
	for _, k := range keys {
		s.f.Add(xxhashInt64(k))
	}
}

func (s blobSyncInt64) MightContainMany(dst []bool, keys []int64) []bool {
	for _, k := range keys {
		dst = append(dst, s.f.Has(xxhashInt64(k)))
	}
	return dst
}

type blobSyncString struct{ f *blobloom.SyncFilter }

func (s blobSyncString) PutMany(keys []string) {
	for _, k := range keys {
		s.f.Add(xxhash.Sum64String(k))
	}
}

func (s blobSyncString) MightContainMany(dst []bool, keys []string) []bool {
	for _, k := range keys {
		dst = append(dst, s.f.Has(xxhash.Sum64String(k)))
	}
	return dst
}
