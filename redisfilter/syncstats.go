package redisfilter

import (
	"fmt"
	"time"
)

// HybridStats is what a Hybrid's Syncs moved and did.
type HybridStats struct {
	// Last is the last Sync's, failed or not; the zero SyncStats before
	// the first.
	Last SyncStats
	// Syncs, FullPushes and FullPulls count the Syncs, those that pushed
	// the whole local filter, and the shards pulled whole.
	Syncs, FullPushes, FullPulls int64
	// Sent and Received are the bytes of all Syncs, each way.
	Sent, Received int64
}

// SyncStats is what one Sync moved and did. Bytes are counted as the Redis
// protocol encodes the commands and replies, within a few bytes per
// command.
type SyncStats struct {
	// Start is when the Sync began, and Duration how long it took.
	Start    time.Time
	Duration time.Duration
	// Sent and Received are the bytes sent to Redis and received from it.
	Sent, Received int64
	// Pushed is the number of values pushed as changes; FullPush is set if
	// the whole local filter was pushed instead (after a rebuild, the
	// shards created again, whole), and FullPushReason says why.
	Pushed         int
	FullPush       bool
	FullPushReason FullPushReason
	// PulledBits is the number of bits read from the change logs;
	// FullPulls the number of shards read whole, because their log no
	// longer held what this Hybrid had not read.
	PulledBits int64
	FullPulls  int
	// Stale is how old the local filter's view of Redis was when the Sync
	// started: the time since the last successful Sync started to read.
	Stale time.Duration
	// Err is the error the Sync returned, nil if it succeeded.
	Err error
}

// A FullPushReason says why a Sync pushed whole the local filter, or some
// of its shards, rather than the values put since the last Sync.
type FullPushReason string

const (
	// FullPushOverflow: more new values were put between two Syncs than
	// the Hybrid holds the hashes of (see [NewHybrid]).
	FullPushOverflow FullPushReason = "overflow"
	// FullPushHistory: a server lost writes to a shard that the Hybrid
	// read or pushed, as a failover or a restart may; that shard alone is
	// pushed.
	FullPushHistory FullPushReason = "history"
	// FullPushRebuild: the filter was lost and created again; the shards
	// created again are pushed.
	FullPushRebuild FullPushReason = "rebuild"
)

// Stats returns what the Syncs so far moved and did.
func (h *Hybrid[T]) Stats() HybridStats {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.stats
}

// String returns a summary of s on one line, such as "sync delta: 6705
// bytes sent, 712 received, 3 values pushed, 0 bits pulled, 0 shards
// pulled whole, in 2ms, 5s stale": "full" instead of "delta" when the Sync
// pushed the whole filter, with FullPushReason, or pulled a shard whole,
// and the error at the end if the Sync failed.
func (s SyncStats) String() string {
	kind := "delta"
	switch {
	case s.FullPush && s.FullPushReason != "":
		kind = "full (" + string(s.FullPushReason) + ")"
	case s.FullPush || s.FullPulls > 0:
		kind = "full"
	}
	out := fmt.Sprintf("sync %s: %d bytes sent, %d received, %d values pushed, %d bits pulled, %d shards pulled whole, in %v, %v stale",
		kind, s.Sent, s.Received, s.Pushed, s.PulledBits, s.FullPulls, s.Duration.Round(time.Millisecond), s.Stale.Round(time.Millisecond))
	if s.Err != nil {
		out += ", failed: " + s.Err.Error()
	}
	return out
}
