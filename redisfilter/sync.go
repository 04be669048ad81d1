package redisfilter

import (
	"cmp"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"slices"
	"time"
)

// logReadBytes is the most bytes of a change log one call of changes.lua
// returns: 262,144 bits, about 1 ms of the server.
const logReadBytes = 1 << 20

// Sync pushes the values put locally since the last Sync to Redis and pulls
// the bits set in Redis since the last Sync into the local filter (see
// [Hybrid] for what it moves). If Redis refuses the push for want of memory
// ([ErrOutOfMemory]) or permission ([ErrNoPermission]), or WithWait could
// not confirm it ([ErrNotReplicated]), Sync still pulls, and returns the
// push's error; the next Sync pushes again what Redis refused.
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
	st := SyncStats{Start: time.Now(), Stale: time.Since(h.LastSync())}
	var meter byteMeter
	c := &h.remote.c
	c.meter = &meter
	defer func() {
		c.meter = nil
		st.Duration = time.Since(st.Start)
		st.Sent, st.Received = meter.sent.Load(), meter.received.Load()
		h.stats.Last = st
		h.stats.Syncs++
		h.stats.Sent += st.Sent
		h.stats.Received += st.Received
		h.stats.FullPulls += int64(st.FullPulls)
		if st.FullPush {
			h.stats.FullPushes++
		}
	}()
	st.Err = h.sync(ctx, &st)
	return st.Err
}

func (h *Hybrid[T]) sync(ctx context.Context, st *SyncStats) error {
	pushErr := h.push(ctx, st)
	if errors.Is(pushErr, ErrLost) {
		pushErr = h.rebuild(ctx, st)
	}
	if pushErr != nil && !errors.Is(pushErr, ErrOutOfMemory) && !errors.Is(pushErr, ErrNoPermission) && !errors.Is(pushErr, ErrNotReplicated) {
		return pushErr
	}
	// A server that refuses writes, or whose replicas lag, still serves
	// reads: pull the others' puts all the same.
	started := time.Now()
	err := h.pull(ctx, st)
	if errors.Is(err, ErrLost) {
		if err = h.rebuild(ctx, st); err == nil {
			err = h.pull(ctx, st)
		}
	}
	if err == nil && h.pushAll {
		// The pull found a server that may have lost bits: put back
		// what this replica has.
		st.FullPushReason = "history"
		err = h.push(ctx, st)
	}
	if err != nil {
		return err
	}
	h.lastSync.Store(started.UnixNano())
	return pushErr
}

// push pushes the values put locally since the last push, or the whole
// local filter if the ring of their hashes overflowed or pushAll is set.
func (h *Hybrid[T]) push(ctx context.Context, st *SyncStats) error {
	var overflowed bool
	h.pending, overflowed = h.changes.drain(h.pending)
	if overflowed && !h.pushAll {
		h.pushAll, st.FullPushReason = true, "overflow"
	}
	if h.pushAll {
		st.FullPush = true
		err := h.remote.Merge(ctx, h.local)
		if err == nil || errors.Is(err, ErrNotReplicated) {
			h.pushAll, h.pending = false, h.pending[:0]
		}
		return err
	}
	if len(h.pending) == 0 {
		return nil
	}
	err := h.remote.c.pushHashes(ctx, h.pending)
	if err == nil || errors.Is(err, ErrNotReplicated) {
		// The bits are set, if not confirmed; a failover that loses
		// them changes the server's history, and the Hybrid pushes all.
		st.Pushed = len(h.pending)
		h.pending = h.pending[:0]
	}
	return err
}

// pushHashes sets the bits of the values whose hashes are hs, with
// push.lua, which is sent a bit's offset in 4 bytes rather than a
// BITFIELD's 40 or so, in calls of at most maxBitsPerCommand bits, and
// logs only the bits that were not set.
func (c *core[T]) pushHashes(ctx context.Context, hs [][2]uint64) error {
	var idx []int64
	var bits []bit
	var calls []call
	var unconfirmed error // the first call that WithWait could not confirm
	perTrip := max(1, maxBitsPerTrip/c.k)
	for ; len(hs) > 0; hs = hs[min(len(hs), perTrip):] {
		idx = idx[:0]
		for _, h := range hs[:min(len(hs), perTrip)] {
			idx = c.strategy.AppendIndexes(idx, h[0], h[1], c.k, c.bitSize)
		}
		bits = c.appendBits(bits[:0], 0, idx)
		slices.SortFunc(bits, func(x, y bit) int {
			return cmp.Or(cmp.Compare(x.shard, y.shard), cmp.Compare(x.off, y.off))
		})
		calls = calls[:0]
		for from := 0; from < len(bits); {
			to := from + 1
			for to < len(bits) && to-from < maxBitsPerCommand && bits[to].shard == bits[from].shard {
				to++
			}
			s := &c.shards[bits[from].shard]
			keys := []string{s.cfgKey, s.key, s.logKey, s.logState}
			calls = append(calls, call{s, keys, []any{c.cfg, s.nbytes(), logRecords(bits[from:to]), c.logBytes}})
			from = to
		}
		for _, rep := range c.runScript(ctx, pushScript, write, calls) {
			if errors.Is(rep.err, ErrNotReplicated) {
				// The bits are set: the other calls are sent all the same.
				unconfirmed = cmp.Or(unconfirmed, rep.err)
			} else if rep.err != nil {
				return c.wrap(ctx, "sync", rep.err)
			}
		}
	}
	return c.wrap(ctx, "sync", unconfirmed)
}

// rebuild opens the shared filter again as it is now, re-creating its
// bitmap or adopting it as needed, and pushes the whole local filter into
// it.
func (h *Hybrid[T]) rebuild(ctx context.Context, st *SyncStats) error {
	if err := h.remote.c.open(ctx, settings{recreate: true, adopt: true, allowEviction: true}); err != nil {
		return err
	}
	h.pushAll = true
	st.FullPushReason = "rebuild"
	return h.push(ctx, st)
}

// pull reads every shard's change log from where this Hybrid read it up to,
// and sets the bits it holds in the local filter; it reads whole each
// shard whose log no longer holds that position.
func (h *Hybrid[T]) pull(ctx context.Context, st *SyncStats) error {
	c := &h.remote.c
	todo := make([]int, len(c.shards))
	for i := range todo {
		todo[i] = i
	}
	for len(todo) > 0 {
		calls := make([]call, len(todo))
		for i, s := range todo {
			calls[i] = c.changesCall(&c.shards[s], h.cursors[s], logReadBytes)
		}
		var more []int
		for i, rep := range c.runScript(ctx, changesScript, anyNode, calls) {
			if rep.err != nil {
				return c.wrap(ctx, "sync", rep.err)
			}
			s := todo[i]
			log, err := parseLog(rep.val)
			if err != nil {
				return c.wrap(ctx, "sync", err)
			}
			cur := &h.cursors[s]
			if cur.replid != "" && log.replid != cur.replid {
				h.pushAll = true
			}
			if log.records == nil || cur.replid != "" && log.replid != cur.replid {
				if err := h.pullShard(ctx, s); err != nil {
					return err
				}
				st.FullPulls++
				continue
			}
			sh := &c.shards[s]
			for b := log.records; len(b) >= 4; b = b[4:] {
				h.bits.Set(uint64(sh.first + int64(binary.BigEndian.Uint32(b)^63)))
			}
			st.PulledBits += int64(len(log.records) / 4)
			cur.replid = log.replid
			cur.pos += int64(len(log.records))
			if len(log.records) == logReadBytes {
				more = append(more, s)
			}
		}
		todo = more
	}
	return nil
}

// pullShard reads shard s whole into the local filter, and sets its cursor
// to where its log ended before.
func (h *Hybrid[T]) pullShard(ctx context.Context, s int) error {
	c := &h.remote.c
	sh := &c.shards[s]
	cur, err := c.logEnd(ctx, sh)
	if err != nil {
		return err
	}
	var chs []chunk
	for _, ch := range c.chunks() {
		if ch.shard == sh {
			chs = append(chs, ch)
		}
	}
	for ; len(chs) > 0; chs = chs[min(len(chs), chunksPerTrip):] {
		trip := chs[:min(len(chs), chunksPerTrip)]
		replies, err := c.readTrip(ctx, "sync", "range", 0, trip)
		if err != nil {
			return err
		}
		for i, ch := range trip {
			b, _ := replies[i].(string)
			if int64(len(b)) != ch.to-ch.from {
				return c.wrap(ctx, "sync", fmt.Errorf("read %d bytes at %d of %s, want %d", len(b), ch.from, sh.key, ch.to-ch.from))
			}
			h.bits.OrEncoded(int((sh.first/8+ch.from)/8), b)
		}
	}
	h.cursors[s] = cur
	return nil
}

// changesCall returns the call of changes.lua that reads at most most bytes
// of shard s's log from cur on.
func (c *core[T]) changesCall(s *shard, cur cursor, most int) call {
	return call{s, []string{s.cfgKey, s.key, s.logKey, s.logState}, []any{c.cfg, s.nbytes(), cur.epoch, cur.pos, most}}
}

// logEnd returns a cursor at the end of shard s's log.
func (c *core[T]) logEnd(ctx context.Context, s *shard) (cursor, error) {
	ends, err := c.logEndsOf(ctx, []*shard{s})
	if err != nil {
		return cursor{}, err
	}
	return ends[0], nil
}

// logEnds returns a cursor at the end of every shard's log.
func (c *core[T]) logEnds(ctx context.Context) ([]cursor, error) {
	shards := make([]*shard, len(c.shards))
	for i := range c.shards {
		shards[i] = &c.shards[i]
	}
	return c.logEndsOf(ctx, shards)
}

func (c *core[T]) logEndsOf(ctx context.Context, shards []*shard) ([]cursor, error) {
	calls := make([]call, len(shards))
	for i, s := range shards {
		calls[i] = c.changesCall(s, cursor{}, 0)
	}
	ends := make([]cursor, len(shards))
	for i, rep := range c.runScript(ctx, changesScript, anyNode, calls) {
		if rep.err != nil {
			return nil, c.wrap(ctx, "sync", rep.err)
		}
		log, err := parseLog(rep.val)
		if err != nil {
			return nil, c.wrap(ctx, "sync", err)
		}
		ends[i] = cursor{replid: log.replid, epoch: log.epoch, pos: log.end}
	}
	return ends, nil
}

// A logRead is what changes.lua returned.
type logRead struct {
	replid, epoch string
	base, end     int64
	records       []byte // nil if the log does not hold the position read from
}

func parseLog(v any) (logRead, error) {
	res, ok := v.([]any)
	if !ok || len(res) != 5 {
		return logRead{}, fmt.Errorf("changes.lua answered %v", v)
	}
	var l logRead
	l.replid, _ = res[0].(string)
	l.epoch, _ = res[1].(string)
	l.base, _ = res[2].(int64)
	l.end, _ = res[3].(int64)
	if s, ok := res[4].(string); ok {
		l.records = []byte(s)
	}
	return l, nil
}
