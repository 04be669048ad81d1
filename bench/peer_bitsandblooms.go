package bench

import (
	"encoding/binary"

	bab "github.com/bits-and-blooms/bloom/v3"
)

// The bits-and-blooms contenders are github.com/bits-and-blooms/bloom/v3,
// the most used Go Bloom filter, sized with NewWithEstimates. It hashes the
// bytes it is given with its own Murmur3. Its filters are not safe for
// concurrent use, so the parallel workloads share one behind a
// sync.RWMutex, locked once per key (see [locked]).

// BitsAndBloomsInt64 puts an int64 key in as its 8 little-endian bytes,
// through Add and Test, which is how users call it.
func BitsAndBloomsInt64() Contender[int64] {
	return unsynced("bits-and-blooms", func(n int64, p float64) perKeySet[int64] {
		return babInt64{bab.NewWithEstimates(uint(n), p)}
	})
}

// BitsAndBloomsString puts a string key in through AddString and
// TestString.
func BitsAndBloomsString() Contender[string] {
	return unsynced("bits-and-blooms", func(n int64, p float64) perKeySet[string] {
		return babString{bab.NewWithEstimates(uint(n), p)}
	})
}

type babInt64 struct{ f *bab.BloomFilter }

func (s babInt64) put(k int64) {
	// A stack buffer: Add and Test do not keep their argument, so this
	// allocates nothing, as a buffer the caller reuses would not.
	var b [8]byte
	binary.LittleEndian.PutUint64(b[:], uint64(k))
	s.f.Add(b[:])
}

func (s babInt64) has(k int64) bool {
	var b [8]byte
	binary.LittleEndian.PutUint64(b[:], uint64(k))
	return s.f.Test(b[:])
}

func (s babInt64) PutMany(keys []int64) {
	for _, k := range keys {
		s.put(k)
	}
}

func (s babInt64) MightContainMany(dst []bool, keys []int64) []bool {
	for _, k := range keys {
		dst = append(dst, s.has(k))
	}
	return dst
}

func (s babInt64) BitSize() int64 { return int64(s.f.Cap()) }

type babString struct{ f *bab.BloomFilter }

func (s babString) put(k string)      { s.f.AddString(k) }
func (s babString) has(k string) bool { return s.f.TestString(k) }

func (s babString) PutMany(keys []string) {
	for _, k := range keys {
		s.f.AddString(k)
	}
}

func (s babString) MightContainMany(dst []bool, keys []string) []bool {
	for _, k := range keys {
		dst = append(dst, s.f.TestString(k))
	}
	return dst
}

func (s babString) BitSize() int64 { return int64(s.f.Cap()) }
