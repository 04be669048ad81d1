package redisfilter

import (
	"cmp"
	"context"
	"errors"
	"slices"
	"time"

	"github.com/mitzbloom/mitzbloom/bloom/raw"
	"github.com/mitzbloom/mitzbloom/redisfilter/internal/wire"
)

// Sync pushes the values put locally since the last Sync to Redis and pulls
// the bits set in Redis since the last Sync into the local filter (see
// [Hybrid] for what it moves). If Redis refuses the push for want of memory
// ([ErrOutOfMemory]) or permission ([ErrNoPermission]), or WithWait could
// not confirm it ([ErrNotReplicated]), Sync still pulls, and returns the
// push's error; the next Sync pushes again what Redis refused.
//
// If Redis has lost the filter ([ErrLost]: a restart without persistence, a
// flush, an eviction, or another process re-created it), Sync rebuilds it
// from the local copy: it takes the filter as it is now, re-creating the
// shards whose bitmap is missing and no other (a shard that survived keeps
// its bits and its change log), and pushes those shards of the local
// filter whole. Another replica finds the filter re-created at its next
// Sync and pushes the same shards of its local filter (those whose log is
// not the one it read), so the fleet rebuilds the shared filter from its
// replicas' copies within one interval, and no replica's local filter
// loses a value meanwhile. A [Filter] opened before the loss, the one NewHybrid was
// given included, gets errors wrapping ErrLost until it is opened again.
func (h *Hybrid[T]) Sync(ctx context.Context) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	st := SyncStats{Start: time.Now(), Stale: time.Since(h.LastSync())}
	// The meter counts this Sync's calls, which carry it in their
	// context.
	var meter wire.Meter
	ctx = wire.WithMeter(ctx, &meter)
	defer func() {
		st.Duration = time.Since(st.Start)
		st.Sent, st.Received = meter.Sent(), meter.Received()
		h.stats.Last = st
		h.stats.Syncs++
		h.stats.Sent += st.Sent
		h.stats.Received += st.Received
		h.stats.FullPulls += int64(st.FullPulls)
		if st.FullPush {
			h.stats.FullPushes++
		}
		h.afterSyncs(st)
	}()
	st.Err = h.sync(ctx, &st)
	return st.Err
}

// sync is a Sync's steps, in order: push, pull, push back. A step that
// finds the filter lost rebuilds it and goes on.
func (h *Hybrid[T]) sync(ctx context.Context, st *SyncStats) error {
	// 1. Push what was put here since the last Sync, as changes, or shards
	// whole where an earlier step asked for it. A filter lost is rebuilt
	// from the local copy.
	pushErr := h.push(ctx, st)
	if errors.Is(pushErr, ErrLost) {
		pushErr = h.rebuild(ctx, st)
	}
	// A server that refuses writes, or whose replicas lag, still serves
	// reads: pull the others' puts all the same, and return the push's
	// error at the end.
	if pushErr != nil && !errors.Is(pushErr, ErrOutOfMemory) && !errors.Is(pushErr, ErrNoPermission) && !errors.Is(pushErr, ErrNotReplicated) {
		return pushErr
	}

	// 2. Pull what the others put since the last Sync: each shard's change
	// log from this Hybrid's cursor, or the shard whole where the log no
	// longer holds the cursor or lost what the Hybrid saw.
	started := time.Now()
	err := h.pull(ctx, st)
	if errors.Is(err, ErrLost) {
		if err = h.rebuild(ctx, st); err == nil {
			err = h.pull(ctx, st)
		}
	}

	// 3. Push back, whole, the shards whose server the pull found to have
	// lost bits this Hybrid saw, so that the fleet puts back what it has.
	if err == nil && h.pushAll != "" {
		err = h.push(ctx, st)
	}
	if err != nil {
		return err
	}
	h.lastSync.Store(started.UnixNano())
	return pushErr
}

// push pushes the values put locally since the last push, or the whole
// local filter if the ring of their hashes overflowed or pushAll is set,
// by this Sync or by one before that failed to push it. After a rebuild,
// which created again only the shards lost, it pushes those shards whole
// and the values put since the last push as changes. Each push takes a
// checkpoint of the log it appended to.
func (h *Hybrid[T]) push(ctx context.Context, st *SyncStats) error {
	var overflowed bool
	h.pending, overflowed = h.changes.drain(h.pending)
	if overflowed {
		h.pushWhole(FullPushOverflow, nil)
	}
	var unconfirmed error
	if h.pushAll != "" {
		st.FullPush, st.FullPushReason = true, h.pushAll
		only := h.pushShards
		err := h.remote.c.merge(ctx, h.local, only)
		if err != nil && !errors.Is(err, ErrNotReplicated) {
			return err
		}
		h.pushAll, h.pushShards = "", nil
		if err := h.markPushed(ctx, only); err != nil {
			return err
		}
		if only == nil {
			h.pending = h.pending[:0]
			return err
		}
		unconfirmed = err
	}
	if len(h.pending) == 0 {
		return unconfirmed
	}
	err := h.pushHashes(ctx, h.pending)
	if err == nil || errors.Is(err, ErrNotReplicated) {
		// The bits are set, if not confirmed; a failover that loses
		// them loses the log's end past the checkpoint that the push
		// took, and the Hybrid pushes the shard whole.
		st.Pushed = len(h.pending)
		h.pending = h.pending[:0]
	}
	return cmp.Or(err, unconfirmed)
}

// pushHashes sets the bits of the values whose hashes are hs, with
// push.lua, which is sent a bit's offset in 4 bytes rather than a
// BITFIELD's 40 or so, in calls of at most maxBitsPerCommand bits, and
// logs only the bits that were not set.
//
// It is not a PutMany, and a PutMany does not push, because the two are
// paid for differently. A Put must answer for each value whether it changed
// a bit, and sets its bits with Redis's own BITFIELD between guard.lua and
// unguard.lua, at BITFIELD's speed (BenchmarkVsRawBitfield); a push answers
// nothing per value and is paid for by the bytes a Sync moves, a tenth of a
// BITFIELD's here (BenchmarkHybridSync), while push.lua builds the
// BITFIELDs on the server. Both check a shard with lib.lua's check_config
// and check_bitmap, in the step that sets its bits.
//
// Each call carries the Hybrid's cursor of its shard, which push.lua checks
// the log against before it appends, and what push.lua answers moves the
// shard's checkpoint (see saw).
func (h *Hybrid[T]) pushHashes(ctx context.Context, hs [][2]uint64) error {
	c := &h.remote.c
	var idx []int64
	var bits []bit
	var calls []call
	var carried []cursor // the cursor each call carries
	var unconfirmed wire.Unconfirmed
	perTrip := max(1, maxBitsPerTrip/c.k)
	for ; len(hs) > 0; hs = hs[min(len(hs), perTrip):] {
		idx = idx[:0]
		for _, h := range hs[:min(len(hs), perTrip)] {
			idx = raw.AppendIndexes(idx, c.strategy, h[0], h[1], c.k, c.bitSize)
		}
		bits = c.appendBits(bits[:0], 0, idx)
		slices.SortFunc(bits, func(x, y bit) int {
			return cmp.Or(cmp.Compare(x.shard, y.shard), cmp.Compare(x.off, y.off))
		})
		calls, carried = calls[:0], carried[:0]
		for from, to := 0, 0; from < len(bits); from = to {
			to = commandEnd(bits, from, maxBitsPerCommand)
			s := bits[from].shard
			calls = append(calls, c.pushCall(&c.shards[s], logRecords(bits[from:to]), h.cursors[s]))
			carried = append(carried, h.cursors[s])
		}
		for i, rep := range c.runScript(ctx, pushScript, wire.Write, calls) {
			if err := unconfirmed.Keep(rep.Err); err != nil {
				return c.wrap(ctx, "sync", err)
			}
			m, err := parsePush(rep.Val)
			if err != nil {
				return c.wrap(ctx, "sync", err)
			}
			h.saw(calls[i].shard, carried[i], m)
		}
	}
	return c.wrap(ctx, "sync", unconfirmed.Err)
}

// saw takes m, the log of shard sh as a push of this Hybrid left it, for
// the shard's checkpoint, given carried, the cursor the push carried. Every
// push moves the checkpoint to the log's end, so that the checkpoint stays
// past every bit this Hybrid pushed, once the log as the push found it
// shows that the server kept what the Hybrid saw (see cursor.kept): a
// checkpoint moved past writes that the server lost would hide their loss
// from the next pull, which would then skip the records that took the
// lost ones' places. A server that lost them makes the Hybrid push the
// shard whole and read it whole. A push into another epoch than the
// cursor's (the log was started again since the Hybrid read it) makes the
// checkpoint that of the new epoch, and the shard to be read whole.
func (h *Hybrid[T]) saw(sh *shard, carried cursor, m logMark) {
	s := int(sh.first / h.remote.c.shardBits)
	cur := &h.cursors[s]
	switch {
	case *cur == cursor{} && carried != cursor{}:
		// An earlier push of this Sync found the shard's history lost.
	case !carried.kept(m.before):
		h.historyLost(s)
	case m.epoch != cur.epoch:
		*cur = cursor{replid: m.replid, epoch: m.epoch, pos: -1, check: m.pos, tail: m.tail}
	case m.pos >= cur.check:
		cur.replid, cur.check, cur.tail = m.replid, m.pos, m.tail
	}
}

// historyLost makes the next push push shard s whole, and the next pull
// read it whole, forgetting what the Hybrid saw of a log that is no more:
// its server lost writes that the Hybrid read or pushed, and the fleet
// puts back what it has.
func (h *Hybrid[T]) historyLost(s int) {
	only := make([]bool, len(h.cursors))
	only[s] = true
	h.pushWhole(FullPushHistory, only)
	h.cursors[s] = cursor{}
}

// markPushed takes a checkpoint of the log of each shard that a push
// merged whole, only (all if nil), with push.lua and no bits: merge.lua
// answers none, and a failover that lost the merge must be told by the
// log's end as the merge left it.
func (h *Hybrid[T]) markPushed(ctx context.Context, only []bool) error {
	c := &h.remote.c
	var calls []call
	var carried []cursor
	for i := range c.shards {
		if only == nil || only[i] {
			calls = append(calls, c.pushCall(&c.shards[i], nil, h.cursors[i]))
			carried = append(carried, h.cursors[i])
		}
	}
	for i, rep := range c.runScript(ctx, pushScript, wire.Write, calls) {
		if rep.Err != nil && !errors.Is(rep.Err, ErrNotReplicated) {
			return c.wrap(ctx, "sync", rep.Err)
		}
		m, err := parsePush(rep.Val)
		if err != nil {
			return c.wrap(ctx, "sync", err)
		}
		h.saw(calls[i].shard, carried[i], m)
	}
	return nil
}

// rebuild opens the shared filter again as it is now, re-creating the
// shards lost, and pushes into it, whole, every shard whose log is not the
// one this Hybrid read: those created again (by this Hybrid, or by another
// process before it), and those whose log it never read. A shard that
// survived keeps its log, which the Hybrid goes on reading, and holds
// every bit this Hybrid pushed to it.
func (h *Hybrid[T]) rebuild(ctx context.Context, st *SyncStats) error {
	c := &h.remote.c
	if err := c.open(ctx, settings{recreate: true, adopt: true, allowEviction: true}); err != nil {
		return err
	}
	calls := make([]call, len(c.shards))
	for i := range c.shards {
		calls[i] = c.changesCall(&c.shards[i], cursor{}, 0, nil)
	}
	only := make([]bool, len(c.shards))
	for i, rep := range c.runScript(ctx, changesScript, wire.Master, calls) {
		if rep.Err != nil {
			return c.wrap(ctx, "sync", rep.Err)
		}
		log, err := parseLog(rep.Val)
		if err != nil {
			return c.wrap(ctx, "sync", err)
		}
		only[i] = log.epoch == "" || log.epoch != h.cursors[i].epoch
	}
	h.pushWhole(FullPushRebuild, only)
	return h.push(ctx, st)
}

// pushWhole makes the next push push whole the shards of the local filter
// that only says, or all of them if only is nil, besides those that an
// earlier call asked for, for reason if none did.
func (h *Hybrid[T]) pushWhole(reason FullPushReason, only []bool) {
	switch {
	case h.pushAll == "":
		h.pushAll, h.pushShards = reason, only
	case h.pushShards == nil:
	case only == nil:
		h.pushShards = nil
	default:
		for i, o := range only {
			h.pushShards[i] = h.pushShards[i] || o
		}
	}
}
