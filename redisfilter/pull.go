package redisfilter

import (
	"context"
	"encoding/binary"
	"fmt"
	"slices"

	"github.com/mitzbloom/mitzbloom/bloom/raw"
	"github.com/mitzbloom/mitzbloom/redisfilter/internal/wire"
)

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
