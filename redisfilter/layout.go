package redisfilter

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

const (
	// maxNameLen bounds a filter's name, which is in every key.
	maxNameLen = 256

	// maxShardBytes is the most a Redis string holds (proto-max-bulk-len).
	maxShardBytes = 512 << 20

	// defaultShardBytes is the size of the shards of a filter too big for
	// one: creating a shard is one SETRANGE, which allocates and zeroes the
	// whole string at 0.6 to 1.2 ms per MiB where the kernel maps fresh
	// pages fast, so a shard of 16 MiB is created in 10 to 20 ms, within
	// the 20 ms Redis may be held by one command where it has a core to
	// itself; on a VM that takes 11 µs a page (2.8 ms per MiB), in 45 ms.
	// Growing a string in steps holds Redis no shorter: it copies the
	// string when it moves it (BenchmarkBigFilterStall took 47 ms for one
	// step of 2 MiB).
	// Smaller shards cost more per batch: a batch of 256 values took 8 µs
	// of server time a value in one shard of 23 MB, and 12 µs in 23.
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
	logKey  string // {tag}:changes, a plain filter's change log
}

func (s *shard) nbytes() int64 { return s.nbits / 8 }

// dataKey returns the key that Open finds the shard's data in: its bitmap,
// or for a window the record of its generations.
func (s *shard) dataKey(windowed bool) string {
	if windowed {
		return s.gensKey
	}
	return s.key
}

// genKey returns the key of generation gen's bitmap in the shard of a
// window.
func (s *shard) genKey(gen int64) string {
	return "{" + s.tag + "}:" + strconv.FormatInt(gen, 10)
}

// evenShards is the most shards whose slots layout spaces evenly: with n
// shards, the 16384 slots are cut into n equal ranges, and each shard gets a
// slot in a range of its own, shard s in range k₀+s (mod n), where k₀ is the
// range of shard 0's slot. So a cluster whose masters serve equal ranges of
// slots, as redis-cli --cluster create and rebalance make them, serves equal
// numbers of shards on each (±1). Finding such a slot takes about n tries
// per shard. Beyond, n² would be too many for every Open, and the shards'
// random slots spread evenly enough by their number.
const evenShards = 256

// layout cuts a filter of bitSize bits into shards of shardBytes bytes (the
// last may be shorter), with hash tags that put each in its own cluster slot
// while there are at most as many shards as slots. Shard 0 has the tag
// name, the keys {name} and {name}:config, whatever the number of shards,
// so that processes that open a name with any parameters, in any layout,
// meet at its config; shard s > 0 has the tag name#s, or name#s.j for the
// first j whose slot is in the shard's range (see evenShards) or, for more
// shards than that, no earlier shard has. Every process derives the same
// tags from the name and the size.
func layout(name string, bitSize, shardBytes int64) []shard {
	shardBits := shardBytes * 8
	n := (bitSize + shardBits - 1) / shardBits
	shards := make([]shard, n)
	used := make(map[uint16]bool, n)
	// rangeStart returns the first slot of range k of n.
	rangeStart := func(k int64) int64 { return k * clusterSlots / n }
	slot0 := int64(keySlot(name))
	k0 := slot0 * n / clusterSlots
	if slot0 >= rangeStart(k0+1) {
		k0++
	}
	var buf []byte
	for i := range shards {
		tag := name
		if i > 0 {
			k := (k0 + int64(i)) % n
			lo, hi := rangeStart(k), rangeStart(k+1)
			fits := func(slot uint16) bool {
				return !used[slot] && (n > evenShards || lo <= int64(slot) && int64(slot) < hi)
			}
			base := name + "#" + strconv.Itoa(i)
			tag = base
			slot := keySlot(tag)
			prefix := crc16(0, base+".")
			for j := int64(1); !fits(slot) && len(used) < clusterSlots; j++ {
				buf = strconv.AppendInt(buf[:0], j, 10)
				slot = crc16(prefix, buf) % clusterSlots
				if fits(slot) {
					tag = base + "." + string(buf)
				}
			}
			used[slot] = true
		} else {
			used[keySlot(name)] = true
		}
		first := int64(i) * shardBits
		shards[i] = shard{
			first:   first,
			nbits:   min(shardBits, bitSize-first),
			tag:     tag,
			key:     "{" + tag + "}",
			cfgKey:  "{" + tag + "}:config",
			holdKey: "{" + tag + "}:hold",
			gensKey: "{" + tag + "}:generations",
			logKey:  "{" + tag + "}:changes",
		}
	}
	return shards
}

// validName reports why name cannot name a filter, or nil. Braces would
// change the hash tag that keeps a filter's keys in one cluster slot, so
// they are refused on every kind of server, for a name to mean the same
// filter on all; '#' is kept for the tags of a filter's shards.
func validName(name string) error {
	switch {
	case name == "":
		return errors.New("filter name is empty")
	case len(name) > maxNameLen:
		return fmt.Errorf("filter name is %d bytes long, more than %d", len(name), maxNameLen)
	case !utf8.ValidString(name):
		return fmt.Errorf("filter name %q is not valid UTF-8", name)
	case strings.ContainsAny(name, "{}#"):
		return fmt.Errorf("filter name %q contains '{', '}' or '#', which would break the hash tag {name} that keeps a filter's keys in one Redis Cluster slot", name)
	}
	for _, r := range name {
		if unicode.IsControl(r) {
			return fmt.Errorf("filter name %q contains a control character", name)
		}
	}
	return nil
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
func keySlot(tag string) uint16 { return crc16(0, tag) % clusterSlots }

// crc16 returns the CRC16 (XMODEM) of the bytes that gave crc followed by s.
func crc16[S ~string | ~[]byte](crc uint16, s S) uint16 {
	for i := 0; i < len(s); i++ {
		crc ^= uint16(s[i]) << 8
		for range 8 {
			if crc&0x8000 != 0 {
				crc = crc<<1 ^ 0x1021
			} else {
				crc <<= 1
			}
		}
	}
	return crc
}
