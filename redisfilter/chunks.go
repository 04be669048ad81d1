package redisfilter

import (
	"context"
	"crypto/rand"
	"encoding/binary"
	"encoding/hex"
	"fmt"

	"github.com/mitzbloom/mitzbloom/bloom"
	"github.com/mitzbloom/mitzbloom/bloom/raw"

	"github.com/mitzbloom/mitzbloom/redisfilter/internal/wire"
)

// Snapshot, BitCount and Merge work on the whole filter, chunk by chunk,
// each chunk a script that checks its shard's config in the same step.
const (
	// chunkBytes bounds the bytes of a bitmap one script reads, ORs or
	// counts, so that no command holds the server for more than a
	// millisecond or so.
	chunkBytes = 1 << 20
	// chunksPerTrip is the number of chunks pipelined in one round trip.
	chunksPerTrip = 4
)

// A chunk is a range of one shard's bytes that one script reads or ORs.
type chunk struct {
	shard    *shard
	from, to int64 // in the shard's bytes, to exclusive
}

// chunks returns the ranges of at most chunkBytes that cover every shard, in
// order, so that their bytes concatenated are the filter's.
func (c *core[T]) chunks() []chunk {
	var out []chunk
	for i := range c.shards {
		s := &c.shards[i]
		for from := int64(0); from < s.nbytes(); from += chunkBytes {
			out = append(out, chunk{s, from, min(s.nbytes(), from+chunkBytes)})
		}
	}
	return out
}

// readCall returns the call of read.lua on chunk ch of the filter's
// bitmaps, or of generation gen's for a window at the time now (Unix ms),
// what being "range" or "count".
func (c *core[T]) readCall(what string, gen, now int64, ch chunk) call {
	keys := []string{ch.shard.cfgKey, ch.shard.key}
	args := []any{c.cfg, ch.shard.nbytes(), what, ch.from, ch.to - 1}
	if c.windowed {
		keys = []string{ch.shard.cfgKey, ch.shard.genKey(gen), ch.shard.gensKey}
		args = append(args, now)
	}
	return call{ch.shard, keys, args}
}

// readTrip runs calls of read.lua in one round trip and returns their
// replies: strings for "range", int64s for "count".
func (c *core[T]) readTrip(ctx context.Context, op string, calls []call) ([]any, error) {
	replies := make([]any, len(calls))
	for i, rep := range c.runScript(ctx, readScript, wire.AnyNode, calls) {
		if rep.Err != nil {
			return nil, c.wrap(ctx, op, rep.Err)
		}
		replies[i] = rep.Val
	}
	return replies, nil
}

// snapshot reads the filter's bitmaps, or generation gen's for a window at
// the time now (Unix ms),
// into a new local filter of the same parameters, chunk by chunk, so that
// it holds the filter once and a round trip's chunks beside it. Bits are
// only ever set, and a filter re-created meanwhile fails the check, so the
// copy holds every value put before it started.
func (c *core[T]) snapshot(ctx context.Context, gen, now int64) (*bloom.Filter[T], error) {
	f, err := c.newLocal()
	if err != nil {
		return nil, c.wrap(ctx, "snapshot", err)
	}
	for all := c.chunks(); len(all) > 0; all = all[min(len(all), chunksPerTrip):] {
		trip := all[:min(len(all), chunksPerTrip)]
		calls := make([]call, len(trip))
		for i, ch := range trip {
			calls[i] = c.readCall("range", gen, now, ch)
		}
		replies, err := c.readTrip(ctx, "snapshot", calls)
		if err != nil {
			return nil, err
		}
		for i, ch := range trip {
			s, _ := replies[i].(string)
			switch want := ch.to - ch.from; int64(len(s)) {
			case want:
				if err := raw.OrEncoded(f, ch.shard.first/8+ch.from, s); err != nil {
					return nil, c.wrap(ctx, "snapshot", err)
				}
			case 0: // a generation that expired, or was never created
			default:
				return nil, c.wrap(ctx, "snapshot", fmt.Errorf("read %d bytes at %d of %s, want %d", len(s), ch.from, ch.shard.key, want))
			}
		}
	}
	return f, nil
}

// newLocal returns an empty local filter of the filter's parameters.
func (c *core[T]) newLocal() (*bloom.Filter[T], error) {
	return bloom.New(c.funnel, c.expected, c.fpp, c.sizing...)
}

// merge ORs local's bits into the filter's bitmaps with merge.lua, chunk by
// chunk, into the shards that only says, or all if only is nil; chunks of
// local without a bit set are not sent, but for the first of each shard,
// which checks that the shard is there.
func (c *core[T]) merge(ctx context.Context, local *bloom.Filter[T], only []bool) error {
	if err := c.checkLocal(local); err != nil {
		return err
	}
	data, err := local.MarshalBinary()
	if err != nil {
		return c.wrap(ctx, "merge", err)
	}
	words := data[raw.HeaderSize:]
	var suffix [8]byte
	_, _ = rand.Read(suffix[:]) // never fails
	tmp := ":merge:" + hex.EncodeToString(suffix[:])
	var calls []call
	var unconfirmed wire.Unconfirmed
	flush := func() error {
		if len(calls) == 0 {
			return nil
		}
		replies := c.runScript(ctx, mergeScript, wire.Write, calls)
		calls = calls[:0]
		for _, rep := range replies {
			if err := unconfirmed.Keep(rep.Err); err != nil {
				return c.wrap(ctx, "merge", err)
			}
		}
		return nil
	}
	for _, ch := range c.chunks() {
		if only != nil && !only[ch.shard.first/c.shardBits] {
			continue
		}
		start := ch.shard.first / 8
		bits := words[start+ch.from : start+ch.to]
		if ch.from > 0 && allZero(bits) {
			continue
		}
		s := ch.shard
		keys := []string{s.cfgKey, s.key, s.key + tmp + ":a", s.key + tmp + ":b", s.logKey}
		logCap := c.logCap(s)
		calls = append(calls, call{s, keys, []any{c.cfg, s.nbytes(), ch.from, bits, logCap, logCap / 4 / 4, newEpoch()}})
		if len(calls) == chunksPerTrip {
			if err := flush(); err != nil {
				return err
			}
		}
	}
	if err := flush(); err != nil {
		return err
	}
	return c.wrap(ctx, "merge", unconfirmed.Err)
}

// allZero reports whether every byte of b is 0.
func allZero(b []byte) bool {
	for len(b) >= 8 {
		if binary.LittleEndian.Uint64(b) != 0 {
			return false
		}
		b = b[8:]
	}
	for _, x := range b {
		if x != 0 {
			return false
		}
	}
	return true
}

// checkLocal reports whether local can be merged into the filter, with
// Guava's checks of Filter.PutAll.
func (c *core[T]) checkLocal(local *bloom.Filter[T]) error {
	if local == nil {
		return fmt.Errorf("%w: merge %q: local filter is nil", bloom.ErrInvalidArgument, c.name)
	}
	if err := raw.CheckCompatible(local, c.k, c.bitSize, c.strategy, c.funnel); err != nil {
		return fmt.Errorf("%w; merge %q", err, c.name)
	}
	return nil
}
