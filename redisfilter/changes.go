package redisfilter

import (
	"crypto/rand"
	"encoding/binary"
	"fmt"
	"strconv"
)

// logHeader is the length of a change log's header, and logHeaderFormat
// its format, of the log's epoch and the position of its first record, as
// lua/log.lua writes it.
const (
	logHeader       = 51
	logHeaderFormat = "mitzbloom/changes %015d %016d\n"
)

// Each shard of a plain filter keeps a change log (lua/log.lua): the
// offsets of the bits that every Put, PutMany, Merge and Hybrid push
// changed, appended in the same atomic step as the bits, oldest dropped
// first. A Hybrid reads it from where it read up to last time, and so its
// Sync moves what changed since, rather than the whole filter.
const (
	// defaultLogBytes is the most bytes a shard's change log holds without
	// WithChangeLog: 262,144 bits set.
	defaultLogBytes = 1 << 20
	minLogBytes     = 4 << 10
	maxLogBytes     = 512 << 20
)

// newEpoch returns the epoch of a log started again (see lua/log.lua): a
// random number of at most 15 digits, which Lua's numbers hold exactly.
func newEpoch() string {
	var b [8]byte
	_, _ = rand.Read(b[:]) // never fails
	return strconv.FormatUint(binary.LittleEndian.Uint64(b[:])%1e15, 10)
}

// WithChangeLog sets the most bytes of records, n, that each shard's change
// log holds in Redis; the default is 1 MiB. A shard's log holds at most a
// quarter of the shard's bytes whatever n, so that it never takes more of
// Redis's memory than the shard's bitmap: Redis may give a string that
// grows up to twice its length. Every Put, PutMany, Merge and Hybrid push
// appends 4 bytes for each bit it changes (none for a bit already set) to
// the log of the shard it is in, and a log that outgrows its size drops its
// oldest half. A [Hybrid] whose Sync finds that the log dropped what it had
// not read yet reads the whole shard instead, which then costs at most 4
// times what the log would: the size bounds the bits set in a shard, across
// the fleet, between two Syncs of one Hybrid that its Sync moves as a
// change. n must be between 4 KiB and 512 MiB. Processes may use different
// sizes; the log follows the last writer's.
func WithChangeLog(n int64) Option {
	return own(func(s *settings) { s.logBytes = n })
}

// logCap returns the most bytes of records that the log of shard s holds:
// what WithChangeLog sets, or a quarter of the shard's bitmap if that is
// less, so that the log never takes more of Redis's memory than the bitmap
// does. A string grown by APPEND may take up to twice its length, as Redis
// makes room for it to grow, and the allocator rounds that up by up to a
// quarter; a log cut to half its size is written anew, of its length.
func (c *core[T]) logCap(s *shard) int64 {
	return min(c.logBytes, s.nbytes()/4) &^ 7
}

// checkLogBytes reports what is wrong with n, the argument of WithChangeLog.
func checkLogBytes(n int64) error {
	if n < minLogBytes || n > maxLogBytes {
		return fmt.Errorf("WithChangeLog: the log's size (%d bytes) must be between %d and %d", n, minLogBytes, maxLogBytes)
	}
	return nil
}
