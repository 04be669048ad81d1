package redisfilter

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mitzbloom/mitzbloom/bloom"
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
// Bloom filters only grow, so a Sync is an OR both ways and nothing is lost:
// puts that run during a Sync are pushed by the next one. Each Sync that
// follows local puts sends the whole local filter (BitSize/8 bytes) and each
// one reads the whole shared filter, so the interval trades staleness for
// bandwidth.
//
// A Hybrid is safe for concurrent use by multiple goroutines; Put and
// MightContain take no lock, and Syncs run one at a time.
type Hybrid[T any] struct {
	remote *Filter[T]
	local  *bloom.Filter[T]
	// dirty is set after a Put changed a bit and cleared by the Sync that
	// pushes it. Sync clears it before reading the local bits, and Put sets
	// it after setting them, so no put is left unpushed.
	dirty    atomic.Bool
	lastSync atomic.Int64 // Unix nanoseconds
	mu       sync.Mutex   // serializes Syncs
}

// NewHybrid returns a Hybrid over remote, starting from a [Filter.Snapshot]
// of it.
func NewHybrid[T any](ctx context.Context, remote *Filter[T]) (*Hybrid[T], error) {
	started := time.Now()
	local, err := remote.Snapshot(ctx)
	if err != nil {
		return nil, err
	}
	// A core of its own, whose config a Sync that rebuilds the filter
	// changes without racing calls on remote.
	own := *remote
	h := &Hybrid[T]{remote: &own, local: local}
	h.lastSync.Store(started.UnixNano())
	return h, nil
}

// Put adds v to the local filter and reports whether any bit of it changed.
// The next Sync pushes it to Redis. With the built-in funnels, Put does not
// allocate.
func (h *Hybrid[T]) Put(v T) bool {
	changed := h.local.Put(v)
	if changed && !h.dirty.Load() {
		// Load first: a flag that is already set stays in every core's
		// cache instead of bouncing between them.
		h.dirty.Store(true)
	}
	return changed
}

// MightContain reports whether v might have been put in the local filter,
// which holds this replica's puts and those of others as of the last Sync.
// With the built-in funnels, MightContain does not allocate.
func (h *Hybrid[T]) MightContain(v T) bool {
	return h.local.MightContain(v)
}

// PutMany puts every value of vs in the local filter, as
// [bloom.Filter.PutMany] does, for the next Sync to push to Redis. With the
// built-in funnels, PutMany does not allocate.
func (h *Hybrid[T]) PutMany(vs []T) {
	if len(vs) == 0 {
		return
	}
	h.local.PutMany(vs)
	if !h.dirty.Load() {
		h.dirty.Store(true)
	}
}

// MightContainMany appends to dst, for each value of vs, what MightContain
// would report for it, and returns the extended slice, as
// [bloom.Filter.MightContainMany] does.
func (h *Hybrid[T]) MightContainMany(dst []bool, vs []T) []bool {
	return h.local.MightContainMany(dst, vs)
}

// Sync pushes the local puts made since the last Sync to Redis with
// [Filter.Merge], then pulls the shared filter with [Filter.Snapshot] and ORs
// it into the local one. If Redis refuses the push for want of memory
// ([ErrOutOfMemory]) or permission ([ErrNoPermission]), Sync still pulls,
// and returns the push's error; the next Sync pushes again.
//
// If Redis has lost the filter ([ErrLost]: a restart without persistence, a
// flush, an eviction, or another process re-created it), Sync rebuilds it
// from the local copy: it takes the filter as it is now, re-creating a
// missing bitmap or config key, and pushes the whole local filter. Another
// replica finds the filter re-created at its next Sync and pushes its whole
// local filter too, so the fleet rebuilds the shared filter from its
// replicas' copies within one interval, and no replica's local filter loses
// a value meanwhile. A [Filter] opened before the loss, the one NewHybrid was
// given included, gets errors wrapping ErrLost until it is opened again.
func (h *Hybrid[T]) Sync(ctx context.Context) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	var pushErr error
	if h.dirty.Swap(false) {
		if pushErr = h.push(ctx); pushErr != nil {
			h.dirty.Store(true)
			if !errors.Is(pushErr, ErrOutOfMemory) && !errors.Is(pushErr, ErrNoPermission) {
				return pushErr
			}
			// A server that refuses writes still serves reads: pull
			// the others' puts all the same.
		}
	}
	started := time.Now()
	shared, err := h.remote.Snapshot(ctx)
	if errors.Is(err, ErrLost) {
		if err := h.rebuild(ctx); err != nil {
			h.dirty.Store(true)
			return err
		}
		shared, err = h.remote.Snapshot(ctx)
	}
	if err != nil {
		return err
	}
	if err := h.local.PutAll(shared); err != nil {
		return err
	}
	if h.local.BitCount() > shared.BitCount() {
		// The local filter is a superset of the shared one now, and a
		// strict one if puts ran during this Sync or Redis lost bits
		// this replica pushed before: either way the next Sync pushes.
		h.dirty.Store(true)
	}
	h.lastSync.Store(started.UnixNano())
	return pushErr
}

// push merges the local filter into Redis, rebuilding the shared filter if
// it is lost.
func (h *Hybrid[T]) push(ctx context.Context) error {
	err := h.remote.Merge(ctx, h.local)
	if errors.Is(err, ErrLost) {
		err = h.rebuild(ctx)
	}
	return err
}

// rebuild opens the shared filter again as it is now, re-creating its
// bitmap or adopting it as needed, and merges the whole local filter into
// it.
func (h *Hybrid[T]) rebuild(ctx context.Context) error {
	if err := h.remote.c.open(ctx, settings{recreate: true, adopt: true, allowEviction: true}); err != nil {
		return err
	}
	return h.remote.Merge(ctx, h.local)
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

// Copy returns an independent copy of the local filter.
func (h *Hybrid[T]) Copy() *bloom.Filter[T] {
	return h.local.Copy()
}
