package redisfilter

import (
	"fmt"
	"strconv"
)

const (
	// maxShardBytes is the most a Redis string holds (proto-max-bulk-len).
	maxShardBytes = 512 << 20

	// defaultShardBytes is the size of the shards of a filter too big for
	// one: creating a shard is one SETRANGE, which zeroes the whole string
	// at about 0.6 ms per MiB, so a shard of 16 MiB is created in about
	// 10 ms, under the 20 ms Redis may be held by one command.
	defaultShardBytes = 16 << 20

	// clusterSlots is the number of hash slots of a Redis Cluster.
	clusterSlots = 16384
)

// A shard is one Redis string of a filter: a contiguous range of Guava's
// words, with the keys that check it, all in one hash slot.
type shard struct {
	first   int64  // the filter's bit that is the shard's bit 0
	nbits   int64  // a multiple of 64
	tag     string // the hash tag of the shard's keys
	key     string // the bitmap, {tag}
	cfgKey  string // {tag}:config
	holdKey string // {tag}:hold, where a Put's guard moves a bitmap it must not touch
	gensKey string // {tag}:generations, a window's record of its generations
	keys    []string
}

func (s *shard) nbytes() int64 { return s.nbits / 8 }

// genKey returns the key of generation gen's bitmap in the shard of a
// window.
func (s *shard) genKey(gen int64) string {
	return "{" + s.tag + "}:" + strconv.FormatInt(gen, 10)
}

// layout cuts a filter of bitSize bits into shards of shardBytes bytes (the
// last may be shorter), with hash tags that put each in its own cluster slot
// while there are at most as many shards as slots. A filter of one shard has
// the tag name, the keys {name} and {name}:config; shard s of more has the
// tag name#s, or name#s.j for the first j whose slot no earlier shard has.
// Every process derives the same tags from the name and the size.
func layout(name string, bitSize, shardBytes int64) []shard {
	shardBits := shardBytes * 8
	n := (bitSize + shardBits - 1) / shardBits
	shards := make([]shard, n)
	used := make(map[uint16]bool, n)
	for i := range shards {
		tag := name
		if n > 1 {
			base := name + "#" + strconv.Itoa(i)
			tag = base
			slot := keySlot(tag)
			for j := 1; used[slot] && len(used) < clusterSlots; j++ {
				tag = base + "." + strconv.Itoa(j)
				slot = keySlot(tag)
			}
			used[slot] = true
		}
		first := int64(i) * shardBits
		s := shard{
			first:   first,
			nbits:   min(shardBits, bitSize-first),
			tag:     tag,
			key:     "{" + tag + "}",
			cfgKey:  "{" + tag + "}:config",
			holdKey: "{" + tag + "}:hold",
			gensKey: "{" + tag + "}:generations",
		}
		s.keys = []string{s.cfgKey, s.key}
		shards[i] = s
	}
	return shards
}

// shardBytesFor returns the size of the shards of a filter of nbytes bytes:
// the size asked for with WithShardBytes, or for none one shard up to
// defaultShardBytes and shards of that size beyond.
func shardBytesFor(nbytes, asked int64) (int64, error) {
	switch {
	case asked == 0:
		if nbytes <= defaultShardBytes {
			return nbytes, nil
		}
		return defaultShardBytes, nil
	case asked < 8 || asked%8 != 0 || asked > maxShardBytes:
		return 0, fmt.Errorf("shard size (%d bytes) must be a positive multiple of 8 and at most %d (512 MiB)", asked, maxShardBytes)
	}
	return min(asked, nbytes), nil
}

// keySlot returns the Redis Cluster hash slot of a hash tag: CRC16
// (XMODEM) of it, modulo 16384.
func keySlot(tag string) uint16 {
	var crc uint16
	for i := 0; i < len(tag); i++ {
		crc ^= uint16(tag[i]) << 8
		for range 8 {
			if crc&0x8000 != 0 {
				crc = crc<<1 ^ 0x1021
			} else {
				crc <<= 1
			}
		}
	}
	return crc % clusterSlots
}
