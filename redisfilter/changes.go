package redisfilter

import (
	"crypto/rand"
	"encoding/binary"
	"fmt"
	"strconv"
)

// Each shard of a plain filter keeps a change log (lua/log.lua): the
// offsets of the bits that every Put, PutMany and Merge set, appended in the
// same atomic step as the bits, oldest dropped first. A Hybrid reads it from
// where it read up to last time, and so its Sync moves what changed since,
// rather than the whole filter.
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

// WithChangeLog sets the most bytes, n, that each shard's change log holds
// in Redis; the default is 1 MiB. Every Put, PutMany and Merge appends 4
// bytes per bit it sets to the log of the shard it sets it in, and a log
// that outgrows n drops its oldest half. A [Hybrid] whose Sync finds that
// the log dropped what it had not read yet reads the whole shard instead:
// n bounds the bits set in a shard, across the fleet, between two Syncs of
// one Hybrid that its Sync moves as a change. n must be between 4 KiB and
// 512 MiB. Processes may use different sizes; the log follows the last
// writer's.
func WithChangeLog(n int64) Option {
	return own(func(s *settings) { s.logBytes = n })
}

// checkLogBytes reports what is wrong with n, the argument of WithChangeLog.
func checkLogBytes(n int64) error {
	if n < minLogBytes || n > maxLogBytes {
		return fmt.Errorf("WithChangeLog: the log's size (%d bytes) must be between %d and %d", n, minLogBytes, maxLogBytes)
	}
	return nil
}
