package redisfilter

import (
	"cmp"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/mitzbloom/mitzbloom/bloom/raw"
	"github.com/mitzbloom/mitzbloom/redisfilter/internal/wire"
)

// logReadBytes is the most bytes of a change log one call of changes.lua
// returns: 262,144 bits, about 1 ms of the server.
const logReadBytes = 1 << 20

// checkBytes is how many of a log's bytes a cursor keeps before its
// checkpoint: 4 records. A log that lost its end and was appended to since
// holds other records there, unless those appended after the loss repeat,
// at the same positions, the 4 last the Hybrid saw. Records are offsets of
// bits drawn by a hash among the shard's, so that a chance repeat is one
// in the shard's bits to the 4th power; records repeated because the same
// values were put again set those bits again, and the loss before them
// goes unseen only if it too was written again, at the same positions.
const checkBytes = 16

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
	if err == nil && h.pushAll != "" {
		// The pull found a server that may have lost bits: put back
		// what this replica has.
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
	err := h.remote.c.pushHashes(ctx, h.pending, h.cursors, h.saw)
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
// Each call carries the pusher's cursor of its shard, from cursors, which
// push.lua checks the log against before it appends, and it passes saw the
// cursor it carried and what push.lua answered, for the pusher's
// checkpoint.
func (c *core[T]) pushHashes(ctx context.Context, hs [][2]uint64, cursors []cursor, saw func(*shard, cursor, logMark)) error {
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
			calls = append(calls, c.pushCall(&c.shards[s], logRecords(bits[from:to]), cursors[s]))
			carried = append(carried, cursors[s])
		}
		for i, rep := range c.runScript(ctx, pushScript, wire.Write, calls) {
			if err := unconfirmed.Keep(rep.Err); err != nil {
				return c.wrap(ctx, "sync", err)
			}
			m, err := parsePush(rep.Val)
			if err != nil {
				return c.wrap(ctx, "sync", err)
			}
			saw(calls[i].shard, carried[i], m)
		}
	}
	return c.wrap(ctx, "sync", unconfirmed.Err)
}

// pushCall returns the call of push.lua that sets the bits of records in
// shard s, for a pusher whose cursor of the shard is cur.
func (c *core[T]) pushCall(s *shard, records []byte, cur cursor) call {
	return call{s, []string{s.cfgKey, s.key, s.logKey}, []any{c.cfg, s.nbytes(), records, c.logCap(s), checkBytes, cur.epoch, cur.check, len(cur.tail)}}
}

// A logMark is a place in a shard's change log that push.lua answers: the
// log's epoch, the position of its end, and its bytes before the end, on
// the server of replication ID replid; and the log as the push found it
// before it appended, seen from the pusher's checkpoint.
type logMark struct {
	replid string
	epoch  string
	pos    int64
	tail   string
	before logView
}

func parsePush(v any) (logMark, error) {
	res, ok := v.([]any)
	if !ok || len(res) != 8 {
		return logMark{}, fmt.Errorf("push.lua answered %v", v)
	}
	var m logMark
	m.replid, _ = res[1].(string)
	m.epoch, _ = res[2].(string)
	m.pos, _ = res[3].(int64)
	m.tail, _ = res[4].(string)
	m.before.replid = m.replid
	if s, ok := res[5].(string); ok {
		m.before.held = &s
	}
	m.before.epoch, _ = res[6].(string)
	m.before.end, _ = res[7].(int64)
	return m, nil
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

// pull reads every shard's change log from where this Hybrid read it up to,
// and sets the bits it holds in the local filter; it reads whole each
// shard whose log no longer holds that position, and pushes whole, and
// reads whole, each shard whose server lost what the Hybrid saw of its
// log (see lost). A replica may lag its master, or be of another history
// while it resyncs: an answer of a replica that does not hold the
// position, or that lost what the Hybrid saw, is asked again of the
// master, whose answer stands, so that a replica behind a cursor read
// elsewhere costs no shard read whole.
func (h *Hybrid[T]) pull(ctx context.Context, st *SyncStats) error {
	c := &h.remote.c
	todo := make([]int, len(c.shards))
	for i := range todo {
		todo[i] = i
	}
	for len(todo) > 0 {
		calls := make([]call, len(todo))
		for i, s := range todo {
			calls[i] = c.changesCall(&c.shards[s], h.cursors[s], logReadBytes, nil)
		}
		replies := c.runScript(ctx, changesScript, wire.AnyNode, calls)
		var again []call
		var at []int
		for i, rep := range replies {
			if rep.Err != nil || !rep.Replica {
				continue
			}
			log, err := parseLog(rep.Val)
			if err != nil || log.records == nil || !h.cursors[todo[i]].kept(log.view()) {
				again, at = append(again, calls[i]), append(at, i)
			}
		}
		if len(again) > 0 {
			for j, rep := range c.runScript(ctx, changesScript, wire.Master, again) {
				replies[at[j]] = rep
			}
		}
		var more, whole []int
		for i, rep := range replies {
			if rep.Err != nil {
				return c.wrap(ctx, "sync", rep.Err)
			}
			s := todo[i]
			log, err := parseLog(rep.Val)
			if err != nil {
				return c.wrap(ctx, "sync", err)
			}
			cur := &h.cursors[s]
			if !cur.kept(log.view()) {
				// The server lost bits of this shard, and only of this
				// one: put back what this replica has of it.
				h.historyLost(s)
				whole = append(whole, s)
				continue
			}
			if log.records == nil {
				whole = append(whole, s)
				continue
			}
			sh := &c.shards[s]
			for b := log.records; len(b) >= 4; b = b[4:] {
				raw.SetBit(h.local, sh.first+int64(binary.BigEndian.Uint32(b)^63))
			}
			st.PulledBits += int64(len(log.records) / 4)
			cur.replid = log.replid
			cur.pos += int64(len(log.records))
			if cur.pos > cur.check {
				cur.check, cur.tail = cur.pos, log.tail
			}
			if len(log.records) == logReadBytes {
				more = append(more, s)
			}
		}
		if len(whole) > 0 {
			if err := h.pullShards(ctx, whole, wire.AnyNode, 0); err != nil {
				return err
			}
			st.FullPulls += len(whole)
		}
		todo = more
	}
	return nil
}

// A logView is what a script found of a shard's change log, seen from a
// cursor: the server's replication ID, the log's epoch and end, and its
// bytes before the cursor's checkpoint, if it holds them there.
type logView struct {
	replid, epoch string
	end           int64
	held          *string
}

// kept reports whether the server whose log v shows kept every write to
// the shard that this Hybrid read or pushed up to its checkpoint: whether
// the log holds, before the checkpoint, the bytes that the Hybrid saw
// there. A log is only appended to within an epoch, in the same step as
// the bits, and a slot moved or a failover or restart that lost nothing
// keeps it whole, so that a Hybrid tells them from a loss whatever node
// answers. A log of the cursor's epoch that ends before the checkpoint
// lost writes. A log that no longer holds the checkpoint, trimmed past it
// or started again, tells nothing: then a server of another replication
// ID than the one that last showed the checkpoint kept (a failover, a
// restart, or a slot moved) may have lost writes. A user denied INFO has
// no replication ID to go by.
func (cur *cursor) kept(v logView) bool {
	switch {
	case v.held != nil:
		return *v.held == cur.tail
	case v.epoch == cur.epoch && cur.check > v.end:
		return false
	}
	return cur.replid == "" || v.replid == cur.replid
}

// pullShards reads shards whole into the local filter, and sets each one's
// cursor where its log ended. Each chunk is read with changes.lua, with
// the log's end on the node that answers in the same step, so that the
// chunk holds every bit the log recorded before that end; the shard's
// cursor is the least end of its chunks, so that what any chunk may lack
// is read from the log later, and its checkpoint that end, or the
// cursor's if later in the same epoch (a push's). The chunks of a shard may come from nodes
// that lag differently (go-redis picks a node for each), but they must be
// of one history and one log: a shard whose chunks are not is read again
// from its master, where a log started again while it was read (a Merge of
// many bits) is retried, a few times.
func (h *Hybrid[T]) pullShards(ctx context.Context, shards []int, rt wire.Route, attempt int) error {
	c := &h.remote.c
	index := make(map[*shard]int, len(shards))
	for _, s := range shards {
		index[&c.shards[s]] = s
	}
	var chs []chunk
	for _, ch := range c.chunks() {
		if _, ok := index[ch.shard]; ok {
			chs = append(chs, ch)
		}
	}
	ends := make(map[int]cursor, len(shards))
	mixed, lost := make(map[int]bool), make(map[int]bool)
	for ; len(chs) > 0; chs = chs[min(len(chs), chunksPerTrip):] {
		trip := chs[:min(len(chs), chunksPerTrip)]
		calls := make([]call, len(trip))
		for i, ch := range trip {
			calls[i] = c.changesCall(ch.shard, h.cursors[index[ch.shard]], 0, &ch)
		}
		for i, rep := range c.runScript(ctx, changesScript, rt, calls) {
			if rep.Err != nil {
				return c.wrap(ctx, "sync", rep.Err)
			}
			log, err := parseLog(rep.Val)
			ch := trip[i]
			if err == nil && int64(len(log.bitmap)) != ch.to-ch.from {
				err = fmt.Errorf("read %d bytes at %d of %s, want %d", len(log.bitmap), ch.from, ch.shard.key, ch.to-ch.from)
			}
			if err != nil {
				return c.wrap(ctx, "sync", err)
			}
			if err := raw.OrEncoded(h.local, ch.shard.first/8+ch.from, log.bitmap); err != nil {
				return c.wrap(ctx, "sync", err)
			}
			s := index[ch.shard]
			// Each chunk is read with the log's end, and checks in the
			// same step that the server kept what the Hybrid saw: a
			// failover since the pull that chose to read the shard whole
			// must not hide a loss behind the end read here.
			if !h.cursors[s].kept(log.view()) {
				if rep.Replica {
					mixed[s] = true
				} else {
					lost[s] = true
				}
			}
			end := cursor{replid: log.replid, epoch: log.epoch, pos: log.end, check: log.end, tail: log.tail}
			prev, ok := ends[s]
			switch {
			case !ok || prev.replid == end.replid && prev.epoch == end.epoch && end.pos < prev.pos:
				ends[s] = end
			case prev.replid != end.replid || prev.epoch != end.epoch:
				mixed[s] = true
			}
		}
	}
	var again []int
	for s, end := range ends {
		switch old := h.cursors[s]; {
		case mixed[s]:
			again = append(again, s)
		case lost[s]:
			h.historyLost(s)
			h.cursors[s] = end
		case old.epoch == end.epoch && old.check > end.check:
			// A replica behind this Hybrid's last push: the push's
			// checkpoint stands.
			end.check, end.tail = old.check, old.tail
			h.cursors[s] = end
		default:
			h.cursors[s] = end
		}
	}
	switch {
	case len(again) == 0:
		return nil
	case attempt == 3:
		return c.wrap(ctx, "sync", fmt.Errorf("%w: the change log of %s was started again each time the shard was read", ErrTryAgain, c.shards[again[0]].key))
	}
	slices.Sort(again)
	return h.pullShards(ctx, again, wire.Master, attempt+1)
}

// changesCall returns the call of changes.lua that reads at most most bytes
// of shard s's log from cur on, and the log at cur's checkpoint, and the
// bytes of ch if it is not nil.
func (c *core[T]) changesCall(s *shard, cur cursor, most int, ch *chunk) call {
	args := []any{c.cfg, s.nbytes(), cur.epoch, cur.pos, most, cur.check, len(cur.tail), checkBytes}
	if ch != nil {
		args = append(args, ch.from, ch.to-1)
	}
	return call{s, []string{s.cfgKey, s.key, s.logKey}, args}
}

// A logRead is what changes.lua returned.
type logRead struct {
	replid, epoch string
	base, end     int64
	records       []byte  // nil if the log does not hold the position read from
	held          *string // the log's bytes before the checkpoint; nil if it does not hold them
	tail          string  // its bytes before the end of the read
	bitmap        string  // the range of the bitmap asked for
}

// view returns what l shows of the log.
func (l logRead) view() logView {
	return logView{replid: l.replid, epoch: l.epoch, end: l.end, held: l.held}
}

func parseLog(v any) (logRead, error) {
	res, ok := v.([]any)
	if !ok || len(res) != 7 && len(res) != 8 {
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
	if s, ok := res[5].(string); ok {
		l.held = &s
	}
	l.tail, _ = res[6].(string)
	if len(res) == 8 {
		l.bitmap, _ = res[7].(string)
	}
	return l, nil
}
