package redisfilter

import (
	"context"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mitzbloom/mitzbloom/bloom"
	"github.com/mitzbloom/mitzbloom/bloom/raw"

	"github.com/mitzbloom/mitzbloom/redisfilter/internal/wire"
)

// A Hybrid is a local, lock-free [bloom.Filter] kept in step with a shared
// [Filter] in Redis: Put and MightContain run at the speed of the local
// filter, with no round trip, and [Hybrid.Sync] pushes the local puts to
// Redis and pulls in everybody else's. Each replica of a service keeps its
// own Hybrid over the same Filter and calls Sync periodically, usually
// through [Hybrid.Run].
//
// Staleness: a value put on a replica is seen by that replica at once, is in
// Redis once the replica's next Sync returns, and is seen by another replica
// once that replica's next Sync after it returns. With every replica running
// Run(ctx, every, …) and syncs that succeed and take at most d, every
// replica sees every put within 2·(every + d) of it. A Sync that fails leaves
// its puts to the next one, so the bound grows by every for each failure in
// a row; [Hybrid.LastSync] tells how fresh the local filter is.
//
// A Sync moves what changed, not the filter: it pushes the bits of the
// values put locally since the last Sync, and pulls the bits set since the
// last Sync from each shard's change log in Redis (see [WithChangeLog]),
// 4 bytes a bit each way. It moves a whole shard only when it
// must: a shard whose log no longer holds what this Hybrid has not read
// (the log was trimmed, or started again, or the shard re-created) is
// pulled whole, and a shard whose server lost writes that this Hybrid read
// or pushed (a failover to a replica that lagged, a restart from an older
// file) is pushed whole once and pulled whole, so that the fleet puts back
// what any replica had. The Hybrid tells a loss by the log itself, which
// is only appended to, in the same step as the bits: it keeps the log's
// last bytes it saw, and a log that holds them where it saw them lost
// nothing, whatever node serves it, so that a slot moved to another
// master, or a failover that lost nothing, moves no shard whole.
// [Hybrid.Stats] tells what each Sync moved.
//
// A Hybrid is safe for concurrent use by multiple goroutines; Put and
// MightContain take no lock, and Syncs run one at a time. It starts no
// goroutine and holds nothing but memory: [Hybrid.Run] syncs in its
// caller's goroutine until its context is done, so there is no Close; call
// Sync once more before dropping a Hybrid whose last puts must reach
// Redis.
type Hybrid[T any] struct {
	remote *Filter[T]
	local  *bloom.Filter[T]
	// Put hashes values itself, with hash, and puts them in local by
	// hash, so that it records the hash of those that changed a bit in
	// changes.
	hash    raw.Hasher[T]
	changes *changeRings

	mu      sync.Mutex // serializes Syncs, and guards what follows
	pending [][2]uint64
	cursors []cursor
	pushAll FullPushReason // why the next Sync pushes the whole local filter, "" if it does not
	// pushShards, if not nil, are the shards that the push of pushAll
	// pushes: after a rebuild, those that were created again.
	pushShards []bool
	stats      HybridStats
	lastSync   atomic.Int64 // Unix nanoseconds

	// afterSync holds the functions of AfterSync. A change stores a new
	// slice, so that a Sync calls those of one moment without a lock;
	// afterSyncMu serializes the changes.
	afterSync   atomic.Pointer[[]*func(SyncStats)]
	afterSyncMu sync.Mutex
}

// changeRingSize returns how many hashes of local puts a Hybrid of a filter
// of bitSize bits holds between Syncs before its next Sync pushes the whole
// filter: one per 8192 bits, 24 bytes each, from 4096 to 2²⁰.
func changeRingSize(bitSize int64) int {
	return int(min(max(bitSize/8192, 1<<12), 1<<20))
}

// NewHybrid returns a Hybrid over remote, starting from a copy of it, read
// as [Filter.Snapshot] reads it. It holds, beside the local filter, the hashes of the values put
// locally since the last Sync: up to one per 8192 bits of the filter, 24
// bytes each, 2 MiB for a filter of 100 million values at 1%. Puts of more
// new values than that between two Syncs make the next push the whole
// filter.
func NewHybrid[T any](ctx context.Context, remote *Filter[T]) (*Hybrid[T], error) {
	// A core of its own, whose config a Sync that rebuilds the filter
	// changes without racing calls on remote.
	own := *remote
	h := &Hybrid[T]{remote: &own, changes: newChangeRings(changeRingSize(own.c.bitSize))}
	started := time.Now()
	local, err := own.c.newLocal()
	if err != nil {
		return nil, own.c.wrap(ctx, "newHybrid", err)
	}
	h.local, h.cursors = local, make([]cursor, len(own.c.shards))
	h.hash = raw.HasherFor(raw.Funnel(local))
	all := make([]int, len(own.c.shards))
	for i := range all {
		all[i] = i
	}
	if err := h.pullShards(ctx, all, wire.AnyNode, 0); err != nil {
		return nil, err
	}
	h.lastSync.Store(started.UnixNano())
	return h, nil
}

// Put adds v to the local filter and reports whether any bit of it changed.
// The next Sync pushes it to Redis. With the built-in funnels, Put does not
// allocate.
func (h *Hybrid[T]) Put(v T) bool {
	// A value already in the local filter was pushed, or read from Redis,
	// or is recorded for the next push by the Put that set its bits, which
	// records a value before it sets it: a value whose bits another Put is
	// setting is pushed by the next Sync after either Put returns.
	if h.local.MightContain(v) {
		return false
	}
	h1, h2 := h.hash.Sum128(v)
	full := h.changes.record(h1, h2)
	changed := raw.PutHash(h.local, h1, h2)
	if full != nil {
		full.settle()
	}
	return changed
}

// MightContain reports whether v might have been put in the local filter,
// which holds this replica's puts and those of others as of the last Sync.
// With the built-in funnels, MightContain does not allocate.
func (h *Hybrid[T]) MightContain(v T) bool {
	return h.local.MightContain(v)
}

// PutMany puts every value of vs in the local filter, as Put does, for the
// next Sync to push to Redis, with the memory reads of many values
// overlapped as [bloom.Filter.PutMany] overlaps them. With the built-in
// funnels, PutMany does not allocate.
func (h *Hybrid[T]) PutMany(vs []T) {
	// 128 values at a time, as many as bloom's PutMany and PutHashes
	// prefetch at once. As Put does, it records the values not in the
	// local filter before it sets them.
	var hs [128]raw.Hash
	var found [len(hs)]bool
	var full [len(hs)]*changeRing
	for len(vs) > 0 {
		n := min(len(vs), len(hs))
		m := 0
		for i, ok := range h.local.MightContainMany(found[:0], vs[:n]) {
			if !ok {
				hs[m].H1, hs[m].H2 = h.hash.Sum128(vs[i])
				full[m] = h.changes.record(hs[m].H1, hs[m].H2)
				m++
			}
		}
		raw.PutHashes(h.local, found[:0], hs[:m])
		for _, r := range full[:m] {
			if r != nil {
				r.settle()
			}
		}
		vs = vs[n:]
	}
}

// MightContainMany appends to dst, for each value of vs, what MightContain
// would report for it, and returns the extended slice, as
// [bloom.Filter.MightContainMany] does.
func (h *Hybrid[T]) MightContainMany(dst []bool, vs []T) []bool {
	return h.local.MightContainMany(dst, vs)
}

// Run calls Sync every interval until ctx is done, giving each Sync at most
// interval to finish, and passes the errors of failed Syncs to onError, if
// not nil. To push the puts made after the last Sync, call Sync once more
// after Run returns.
func (h *Hybrid[T]) Run(ctx context.Context, interval time.Duration, onError func(error)) {
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		sctx, cancel := context.WithTimeout(ctx, interval)
		err := h.Sync(sctx)
		cancel()
		if err != nil && onError != nil && ctx.Err() == nil {
			onError(err)
		}
	}
}

// LastSync returns when the last successful Sync (or NewHybrid) started to
// read the shared filter: the local filter holds every value that was in
// Redis then.
func (h *Hybrid[T]) LastSync() time.Time {
	return time.Unix(0, h.lastSync.Load())
}

// BitSize returns the number of bits in the local filter, which is that of
// the shared one, [Filter.BitSize].
func (h *Hybrid[T]) BitSize() int64 { return h.local.BitSize() }

// NumHashFunctions returns k, the number of bits each value sets.
func (h *Hybrid[T]) NumHashFunctions() int { return h.local.NumHashFunctions() }

// BitCount returns the number of bits set in the local filter: those of the
// values put in h and of those its Syncs pulled. Like
// [bloom.Filter.BitCount] it reads every word of the local filter; it asks
// nothing of Redis and takes no lock.
func (h *Hybrid[T]) BitCount() int64 { return h.local.BitCount() }

// Copy returns an independent copy of the local filter.
func (h *Hybrid[T]) Copy() *bloom.Filter[T] {
	return h.local.Copy()
}

// AfterSync arranges for fn to be called with the [SyncStats] of each Sync
// that ends from now on, failed or not, as [Hybrid.Stats] then reports it
// in Last: in the goroutine that called Sync, before Sync returns, one call
// at a time in the order of the Syncs. It lets a monitor count every Sync
// and tell every failure's cause, where Stats keeps the last Sync only. fn
// runs while other Syncs wait for it: it must be quick, and must not call
// Sync or Stats.
//
// Calling the returned stop keeps fn from being called by the Syncs that
// end after stop returns, but one that is ending meanwhile may call it
// once more. stop may be called more than once.
func (h *Hybrid[T]) AfterSync(fn func(SyncStats)) (stop func()) {
	p := &fn
	h.changeAfterSync(func(fns []*func(SyncStats)) []*func(SyncStats) { return append(fns, p) })
	var once sync.Once
	return func() {
		once.Do(func() {
			h.changeAfterSync(func(fns []*func(SyncStats)) []*func(SyncStats) {
				return slices.DeleteFunc(fns, func(q *func(SyncStats)) bool { return q == p })
			})
		})
	}
}

// changeAfterSync stores change of a copy of the functions of AfterSync.
func (h *Hybrid[T]) changeAfterSync(change func([]*func(SyncStats)) []*func(SyncStats)) {
	h.afterSyncMu.Lock()
	defer h.afterSyncMu.Unlock()
	var fns []*func(SyncStats)
	if old := h.afterSync.Load(); old != nil {
		fns = slices.Clone(*old)
	}
	fns = change(fns)
	h.afterSync.Store(&fns)
}

// afterSyncs calls the functions of AfterSync with st.
func (h *Hybrid[T]) afterSyncs(st SyncStats) {
	if fns := h.afterSync.Load(); fns != nil {
		for _, fn := range *fns {
			(*fn)(st)
		}
	}
}
