package redisfilter

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/mitzbloom/mitzbloom/bloom"
	"github.com/mitzbloom/mitzbloom/funnel"
	"github.com/mitzbloom/mitzbloom/strategy"
	"github.com/redis/go-redis/v9"

	"github.com/mitzbloom/mitzbloom/redisfilter/internal/wire"
)

// maxGenerations bounds the bitmaps MightContain tests each value in.
const maxGenerations = 64

// gensMark is the member of a window's record of generations that makes
// the record redisfilter's (see lua/lib.lua).
const gensMark = "mitzbloom/redisfilter"

// A Windowed filter remembers values for a sliding window of time, shared by
// a fleet without coordination: time is cut into generations of a fixed
// period, numbered from the Unix epoch, and each generation has its own
// bitmap in Redis, {name}:<generation> with generation = ⌊Unix time /
// period⌋. Every replica whose clock agrees derives the same current
// generation, and so the same key.
//
// Put adds a value to the current generation's bitmap, which the first Put
// creates at its full size with an expiry. MightContain looks for the value
// in the last Generations generations: a value is found for at least
// (Generations−1)·Period after its Put and for at most Generations·Period.
//
// Replicas whose clocks disagree disagree about the current generation near
// its ends. MightContain also looks in the generation after the current one,
// so a value put by a replica whose clock runs ahead is found by the others
// at once, and each bitmap expires (by Redis's clock) one period after the
// last generation that reads it ends. So while the clocks of the replicas
// and of Redis are within a period of each other, a skew of s only shortens
// the guarantee: a value is found for at least (Generations−1)·Period − s
// after its Put. Redis holds at most Generations+2 bitmaps of BitSize/8
// bytes each.
//
// The config key {name}:config records the parameters and the window, and
// the sorted set {name}:generations the generations created, each with its
// bitmap's expiry; neither expires. A generation recorded whose bitmap is
// gone before its expiry (evicted, deleted, flushed) is lost: every call
// that would read or put into it returns an error wrapping [ErrLost], never
// an answer that could be a false "never seen", until it leaves the window. A Windowed filter is safe for concurrent use by multiple
// goroutines. Like a [Filter] it holds nothing but its parameters and runs
// nothing in the background (its generations expire in Redis), so there is
// no Close.
type Windowed[T any] struct {
	c      core[T]
	period int64 // milliseconds
	gens   int
	clock  bloom.Clock
}

// OpenWindowed returns the windowed filter called name, with generations of
// period and MightContain looking in the last generations of them. Each
// generation's bitmap is sized, as [bloom.New] sizes a filter, for about
// expectedInsertions values with a false-positive probability of about fpp.
// A value is looked for in up to generations+1 bitmaps, so the
// false-positive probability of the window is up to that many times fpp.
//
// OpenWindowed creates the config key or checks it as [Open] does; the
// bitmaps are created by the Puts. period must be a positive whole number of
// milliseconds and generations between 1 and 64.
func OpenWindowed[T any](ctx context.Context, rdb redis.UniversalClient, name string, f funnel.Funnel[T], expectedInsertions int64, fpp float64, period time.Duration, generations int, opts ...Option) (*Windowed[T], error) {
	if period <= 0 || period%time.Millisecond != 0 {
		return nil, fmt.Errorf("%w: window period (%v) must be a positive whole number of milliseconds", bloom.ErrInvalidArgument, period)
	}
	if generations < 1 || generations > maxGenerations {
		return nil, fmt.Errorf("%w: number of generations (%d) must be between 1 and %d", bloom.ErrInvalidArgument, generations, maxGenerations)
	}
	params, s := settingsOf(opts)
	if params.Clock == nil {
		return nil, fmt.Errorf("%w: clock is nil", bloom.ErrInvalidArgument)
	}
	window := fmt.Sprintf(" window=%v generations=%d", period, generations)
	c, err := newCore(rdb, name, f, expectedInsertions, fpp, window, params, s)
	if err != nil {
		return nil, err
	}
	w := &Windowed[T]{c: c, period: period.Milliseconds(), gens: generations, clock: params.Clock}
	if err := w.c.open(ctx, s); err != nil {
		return nil, err
	}
	w.c.lostAdvice = "; the values put in it are gone: calls that read or put into it fail until it leaves the window, or delete the filter's keys and open it again"
	return w, nil
}

// Generation returns the number of the generation that t falls in,
// ⌊t.UnixMilli() / Period⌋.
func (w *Windowed[T]) Generation(t time.Time) int64 {
	ms := t.UnixMilli()
	g := ms / w.period
	if ms%w.period < 0 {
		g-- // floor, for times before 1970
	}
	return g
}

// GenerationKeys returns the Redis keys of generation gen's bitmaps, one
// per shard in order: {name}:<gen> for a window of one string per
// generation, or {name#s}:<gen> for each shard s (see [Filter.Keys]).
func (w *Windowed[T]) GenerationKeys(gen int64) []string {
	keys := make([]string, len(w.c.shards))
	for i := range w.c.shards {
		keys[i] = w.c.shards[i].genKey(gen)
	}
	return keys
}

// putBatch returns the batch of a put into the current generation, whose
// bitmaps expire one period after the last generation that reads them ends.
func (w *Windowed[T]) putBatch(op string) *batch {
	now := w.clock.Now()
	gen := w.Generation(now)
	expireAt := (gen + int64(w.gens) + 1) * w.period
	return &batch{op: op, put: true, windowed: true, gens: []int64{gen}, expireAt: strconv.FormatInt(expireAt, 10), now: now.UnixMilli(), period: w.period, generations: int64(w.gens)}
}

// readBatch returns the batch of a read: of the last Generations
// generations and the next one.
func (w *Windowed[T]) readBatch(op string) *batch {
	now := w.clock.Now()
	gen := w.Generation(now)
	b := &batch{op: op, windowed: true, gens: make([]int64, 0, w.gens+1), now: now.UnixMilli()}
	for g := gen - int64(w.gens) + 1; g <= gen+1; g++ {
		b.gens = append(b.gens, g)
	}
	return b
}

// Put adds v to the current generation and reports whether any bit of that
// generation changed. It costs one round trip.
func (w *Windowed[T]) Put(ctx context.Context, v T) (bool, error) {
	var changed [1]bool
	res, err := w.c.run(ctx, w.putBatch("put"), []T{v}, changed[:0])
	return len(res) == 1 && res[0], err
}

// MightContain reports whether v might have been put in the window; false
// means it certainly was not, within the bounds the type's documentation
// gives. It costs one round trip.
func (w *Windowed[T]) MightContain(ctx context.Context, v T) (bool, error) {
	var found [1]bool
	res, err := w.c.run(ctx, w.readBatch("mightContain"), []T{v}, found[:0])
	return len(res) == 1 && res[0], err
}

// PutMany adds every value of vs to the generation current when it starts,
// batched as [Filter.PutMany] is.
func (w *Windowed[T]) PutMany(ctx context.Context, vs []T) error {
	_, err := w.c.run(ctx, w.putBatch("putMany"), vs, nil)
	return err
}

// MightContainMany appends to dst, for each value of vs in order, whether it
// might have been put in the window, batched as [Filter.MightContainMany]
// is, and returns the extended slice. On error it returns dst unchanged.
func (w *Windowed[T]) MightContainMany(ctx context.Context, dst []bool, vs []T) ([]bool, error) {
	return w.c.run(ctx, w.readBatch("mightContainMany"), vs, dst)
}

// Snapshot returns a local copy of generation gen, as [Filter.Snapshot]
// does; a generation without a bitmap (not yet put to, or expired) gives an
// empty filter, and one whose bitmap is gone before its expiry an error
// wrapping [ErrLost].
func (w *Windowed[T]) Snapshot(ctx context.Context, gen int64) (*bloom.Filter[T], error) {
	return w.c.snapshot(ctx, gen, w.clock.Now().UnixMilli())
}

// Period returns the length of a generation.
func (w *Windowed[T]) Period() time.Duration { return time.Duration(w.period) * time.Millisecond }

// Generations returns the number of generations MightContain looks in.
func (w *Windowed[T]) Generations() int { return w.gens }

// BitSize returns the number of bits in each generation's bitmap.
func (w *Windowed[T]) BitSize() int64 { return w.c.bitSize }

// NumHashFunctions returns k, the number of bits each value sets.
func (w *Windowed[T]) NumHashFunctions() int { return w.c.k }

// Strategy returns the strategy w maps hashes to bits with.
func (w *Windowed[T]) Strategy() strategy.Strategy { return w.c.strategy }

// Delete removes w's keys from Redis: its config, its record of
// generations and the bitmap of every generation it records, in every
// shard, as [Filter.Delete] does: a key that holds what redisfilter did not
// write is left as it is, and named in an error wrapping [ErrNotFilter].
// Calls on w, and on other Windowed of the same name, then return errors
// wrapping [ErrLost] until the window is opened again. A generation that
// another process creates while Delete runs may be left behind, to expire.
func (w *Windowed[T]) Delete(ctx context.Context) error {
	reqs := make([]*wire.Request, len(w.c.shards))
	for i, s := range w.c.shards {
		reqs[i] = &wire.Request{Key: s.gensKey, Cmds: [][]any{{"ZRANGE", s.gensKey, 0, -1}}}
	}
	w.c.wire.Send(ctx, reqs, wire.Master, nil)
	for _, r := range reqs {
		// A record of another type is named by delete.lua, which leaves
		// it: its error reply is in r.Res.
		if r.Err != nil {
			return w.c.wrap(ctx, "delete", r.Err)
		}
	}
	return w.c.delete(ctx, func(i int) call {
		s := &w.c.shards[i]
		keys := []string{s.cfgKey, s.gensKey, s.holdKey}
		members, _ := reqs[i].Res[0].([]any)
		for _, z := range members {
			if m, _ := z.(string); strings.HasPrefix(m, "{"+s.tag+"}:") {
				keys = append(keys, m)
			}
		}
		return call{s, keys, []any{"generations", w.period, w.gens}}
	})
}

// ConfigKeys returns the Redis keys of w's parameters, one per shard:
// {name}:config, or {name#s}:config for each shard s.
func (w *Windowed[T]) ConfigKeys() []string { return w.c.configKeys() }
