package redisfilter_test

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mitzbloom/mitzbloom/bloom/bloomtest"
	"github.com/mitzbloom/mitzbloom/funnel"
	"github.com/mitzbloom/mitzbloom/redisfilter"
)

// TestForeignValues puts a value that redisfilter did not write, of every
// type, at each key name that a plain filter (its shard), a sharded one
// (its first and last shards) and a window use, before Open and between
// every two of the operations that write (Put, PutMany, Merge, a Hybrid's
// Sync; a window's rollover). The value must be as it was after every
// operation, and each operation must succeed, if it writes no key that
// holds it, or fail with ErrNotFilter naming the key. Before Open, Open
// must fail, and write no key of the filter.
//
// Two values are a filter's as far as redisfilter can tell, and are left
// out: a string of the length of a plain filter's bitmap at its bitmap
// after Open, and at a window's generation after the window recorded it
// (the config key beside a bitmap is what makes it the filter's). Before
// Open, such a string at a bitmap is a filter that lost its config:
// ErrLost, as WithAdopt would take it.
func TestForeignValues(t *testing.T) {
	eachServer(t, func(t *testing.T, rdb redis.UniversalClient) {
		for _, kind := range []string{"plain", "sharded", "window"} {
			t.Run(kind, func(t *testing.T) { foreignValues(t, rdb, kind) })
		}
	})
}

// A foreignCase is a filter's operations, in order, and the names of the
// keys it uses, by what they are.
type foreignCase struct {
	ops   []foreignOp
	keys  map[string]string
	bytes map[string]int64 // the length of each bitmap, by its key
}

type foreignOp struct {
	name string
	run  func() error
	// creates names the key of a window's generation that the operation
	// creates and records.
	creates string
}

func foreignValues(t *testing.T, rdb redis.UniversalClient, kind string) {
	ctx := testContext(t)
	sharded := redisfilter.WithShardBytes(shardBytes)
	const n = 300_000 // 6 shards when sharded
	values := randomStrings(rand.New(rand.NewPCG(77, 78)), 100)
	var seq int
	// newCase returns the operations on a filter of a name of its own.
	newCase := func() foreignCase {
		seq++
		name := fmt.Sprintf("%s-%s-%d", filterName(t), kind, seq)
		var (
			f     *redisfilter.Filter[string]
			h     *redisfilter.Hybrid[string]
			w     *redisfilter.Windowed[string]
			clock = bloomtest.NewClock(time.Now())
			c     = foreignCase{keys: map[string]string{}, bytes: map[string]int64{}}
		)
		switch kind {
		case "plain", "sharded":
			var opts []redisfilter.Option
			if kind == "sharded" {
				opts = append(opts, sharded)
			}
			c.ops = []foreignOp{
				{name: "Open", run: func() error {
					var err error
					if f, err = redisfilter.Open(ctx, rdb, name, funnel.String, n, 0.01, opts...); err == nil {
						h, err = redisfilter.NewHybrid(ctx, f)
					}
					return err
				}},
				{name: "Put", run: func() error { _, err := f.Put(ctx, values[0]); return err }},
				{name: "PutMany", run: func() error { return f.PutMany(ctx, values[1:50]) }},
				{name: "Merge", run: func() error { return f.Merge(ctx, mustLocal(t, n, values[50:90]...)) }},
				{name: "Sync", run: func() error { h.PutMany(values[90:]); return h.Sync(ctx) }},
			}
			// The keys of the first shard, and of the last if sharded.
			probe, err := redisfilter.Open(ctx, rdb, name, funnel.String, n, 0.01, opts...)
			require.NoError(t, err)
			bitmaps := probe.Keys()
			for _, b := range bitmaps {
				c.bytes[b] = rdb.StrLen(ctx, b).Val()
			}
			require.NoError(t, probe.Delete(ctx))
			shards := map[string]string{"": bitmaps[0]}
			if kind == "sharded" {
				shards = map[string]string{"first ": bitmaps[0], "last ": bitmaps[len(bitmaps)-1]}
			}
			for which, bitmap := range shards {
				for _, suffix := range []string{"", ":config", ":hold", ":changes", ":changes-state"} {
					c.keys[which+"bitmap"+suffix] = bitmap + suffix
				}
			}
		case "window":
			c.ops = []foreignOp{
				{name: "Open", run: func() error {
					var err error
					w, err = redisfilter.OpenWindowed(ctx, rdb, name, funnel.String, 1000, 0.01, time.Minute, 2, redisfilter.WithClock(clock))
					return err
				}},
				{name: "Put", run: func() error { _, err := w.Put(ctx, values[0]); return err }},
				{name: "PutMany", run: func() error { return w.PutMany(ctx, values[1:50]) }},
				{name: "rollover", run: func() error {
					clock.Advance(time.Minute)
					_, err := w.Put(ctx, values[50])
					return err
				}},
				{name: "PutMany", run: func() error { return w.PutMany(ctx, values[51:]) }},
			}
			gen := clock.Now().UnixMilli() / time.Minute.Milliseconds()
			tag := "{" + name + "}"
			c.keys = map[string]string{"config": tag + ":config", "generations": tag + ":generations", "hold": tag + ":hold",
				"generation": fmt.Sprintf("%s:%d", tag, gen), "next generation": fmt.Sprintf("%s:%d", tag, gen+1)}
			c.ops[1].creates, c.ops[3].creates = c.keys["generation"], c.keys["next generation"]
			c.bytes[c.keys["generation"]] = 1200 // 9600 bits, for 1000 values at 1%
			c.bytes[c.keys["next generation"]] = 1200
		}
		t.Cleanup(func() {
			for _, k := range c.keys {
				rdb.Del(context.Background(), k)
			}
		})
		return c
	}

	// The keys that Open writes, and so must refuse to find foreign.
	opened := map[string]bool{"config": true, "generations": true, "hold": true}
	for _, shard := range []string{"", "first ", "last "} {
		for _, suffix := range []string{"", ":config", ":hold", ":changes"} {
			opened[shard+"bitmap"+suffix] = true
		}
	}
	shape := newCase()
	for what, key := range shape.keys {
		for _, v := range foreignKinds(max(shape.bytes[key], 8)) {
			for at := range shape.ops {
				c := newCase()
				key := c.keys[what]
				for _, op := range c.ops[:at] {
					require.NoError(t, op.run(), "%s before a foreign value", op.name)
				}
				// A string of the bitmap's length at a bitmap of the
				// filter's is the filter's, for all redisfilter can tell.
				recorded := slicesContainsFunc(c.ops[:at], func(op foreignOp) bool { return op.creates == key })
				if v.name == "bitmap-long string" && at > 0 && (strings.HasSuffix(what, "bitmap") || recorded) {
					continue
				}
				place := fmt.Sprintf("%s at %s, after %d operations", v.name, what, at)
				require.NoError(t, rdb.Del(ctx, key).Err())
				v.put(ctx, t, rdb, key)
				before, err := rdb.Dump(ctx, key).Result()
				require.NoError(t, err)
				for _, op := range c.ops[at:] {
					err := op.run()
					switch {
					case err == nil:
					case v.name == "bitmap-long string" && strings.HasSuffix(what, "bitmap") && op.name == "Open":
						assert.ErrorIs(t, err, redisfilter.ErrLost, "%s: %s", place, op.name)
					default:
						assert.ErrorIs(t, err, redisfilter.ErrNotFilter, "%s: %s", place, op.name)
						assert.ErrorContains(t, err, key, "%s: %s: the error names the key", place, op.name)
					}
					after, derr := rdb.Dump(ctx, key).Result()
					require.NoError(t, derr, "%s: %s removed it", place, op.name)
					require.Equal(t, before, after, "%s: %s changed it", place, op.name)
					assert.EqualValues(t, -1, rdb.PTTL(ctx, key).Val(), "%s: %s gave it an expiry", place, op.name)
					if op.name == "Open" && err != nil {
						assert.Equal(t, []string{key}, keysOfName(t, rdb, key), "%s: Open wrote keys before it refused", place)
						break // nothing to run the next operations on
					}
					if op.name == "Open" && opened[what] {
						assert.Failf(t, "Open took a foreign value", "%s", place)
						break
					}
				}
			}
		}
	}
}

// keysOfName returns the keys that share key's hash tag.
func keysOfName(t *testing.T, rdb redis.UniversalClient, key string) []string {
	tag, _, _ := strings.Cut(key, "}")
	name := strings.TrimPrefix(tag, "{")
	name, _, _ = strings.Cut(name, "#")
	return append(keysMatching(t, rdb, "{"+name+"}*"), keysMatching(t, rdb, "{"+name+"#*")...)
}

// slicesContainsFunc reports whether f is true of some op of ops.
func slicesContainsFunc(ops []foreignOp, f func(foreignOp) bool) bool {
	for _, op := range ops {
		if f(op) {
			return true
		}
	}
	return false
}

// A foreignKind is a value that redisfilter did not write.
type foreignKind struct {
	name string
	put  func(ctx context.Context, t *testing.T, rdb redis.UniversalClient, key string)
}

// foreignKinds returns values of every type, and strings of several
// shapes: short, empty, of the length of a bitmap of nbytes, records of 4
// bytes as a change log holds them, the start of a log's header, and a
// log's state as the releases before kept it; with -short, fewer.
func foreignKinds(nbytes int64) []foreignKind {
	str := func(name, v string) foreignKind {
		return foreignKind{name, func(ctx context.Context, t *testing.T, rdb redis.UniversalClient, key string) {
			require.NoError(t, rdb.Set(ctx, key, v, 0).Err())
		}}
	}
	other := func(name string, put func(ctx context.Context, rdb redis.UniversalClient, key string) error) foreignKind {
		return foreignKind{name, func(ctx context.Context, t *testing.T, rdb redis.UniversalClient, key string) {
			require.NoError(t, put(ctx, rdb, key))
		}}
	}
	if testing.Short() {
		return []foreignKind{str("string", "precious"), str("empty string", ""), str("bitmap-long string", strings.Repeat("\x00", int(nbytes))),
			other("hash", func(ctx context.Context, rdb redis.UniversalClient, key string) error {
				return rdb.HSet(ctx, key, "a", "b").Err()
			})}
	}
	return []foreignKind{
		str("string", "precious"),
		str("empty string", ""),
		str("bitmap-long string", strings.Repeat("\x00", int(nbytes))),
		str("string of records", "\x00\x00\x00\x01\x00\x00\x00\x02"),
		str("string of a log's start", "mitzbloom/changes 1 2\n"),
		str("string of digits", "12 34"),
		other("hash", func(ctx context.Context, rdb redis.UniversalClient, key string) error {
			return rdb.HSet(ctx, key, "a", "b").Err()
		}),
		other("list", func(ctx context.Context, rdb redis.UniversalClient, key string) error {
			return rdb.RPush(ctx, key, "a").Err()
		}),
		other("set", func(ctx context.Context, rdb redis.UniversalClient, key string) error {
			return rdb.SAdd(ctx, key, "a").Err()
		}),
		other("zset", func(ctx context.Context, rdb redis.UniversalClient, key string) error {
			return rdb.ZAdd(ctx, key, redis.Z{Score: 1, Member: "a"}).Err()
		}),
		other("stream", func(ctx context.Context, rdb redis.UniversalClient, key string) error {
			return rdb.XAdd(ctx, &redis.XAddArgs{Stream: key, Values: []string{"a", "b"}}).Err()
		}),
	}
}

// TestDeleteLeavesForeignKeys deletes a filter and a window one key of
// which holds what redisfilter did not write: Delete removes every other
// key, and names that one in an error wrapping ErrNotFilter.
func TestDeleteLeavesForeignKeys(t *testing.T) {
	eachServer(t, func(t *testing.T, rdb redis.UniversalClient) {
		ctx := testContext(t)
		name := filterName(t)
		f, err := redisfilter.Open(ctx, rdb, name, funnel.String, 300_000, 0.01, redisfilter.WithShardBytes(shardBytes))
		require.NoError(t, err)
		require.NoError(t, f.PutMany(ctx, randomStrings(rand.New(rand.NewPCG(77, 78)), 100)))
		last := f.Keys()[len(f.Keys())-1]
		require.NoError(t, rdb.Set(ctx, last+":changes", "precious", 0).Err())
		err = f.Delete(ctx)
		require.ErrorIs(t, err, redisfilter.ErrNotFilter)
		assert.ErrorContains(t, err, last+":changes")
		assert.Equal(t, []string{last + ":changes"}, keysOfName(t, rdb, f.Keys()[0]))
		assert.Equal(t, "precious", rdb.Get(ctx, last+":changes").Val())
		require.NoError(t, rdb.Del(ctx, last+":changes").Err())

		clock := bloomtest.NewClock(time.Now())
		w, err := redisfilter.OpenWindowed(ctx, rdb, name+"-w", funnel.String, 1000, 0.01, time.Minute, 2, redisfilter.WithClock(clock))
		require.NoError(t, err)
		_, err = w.Put(ctx, "a")
		require.NoError(t, err)
		gen := w.GenerationKeys(w.Generation(clock.Now()))[0]
		other := "{" + name + "-w}:12"
		require.NoError(t, rdb.Set(ctx, other, "precious", 0).Err())
		// A member the window did not record, and one it did whose key
		// now holds another type.
		require.NoError(t, rdb.ZAdd(ctx, "{"+name+"-w}:generations", redis.Z{Score: 1, Member: other}).Err())
		clock.Advance(time.Minute)
		_, err = w.Put(ctx, "b")
		require.NoError(t, err)
		require.NoError(t, rdb.Del(ctx, gen).Err())
		require.NoError(t, rdb.SAdd(ctx, gen, "x").Err())
		err = w.Delete(ctx)
		require.ErrorIs(t, err, redisfilter.ErrNotFilter)
		assert.ErrorContains(t, err, gen)
		assert.ElementsMatch(t, []string{other, gen}, keysOfName(t, rdb, gen))
		assert.Equal(t, "precious", rdb.Get(ctx, other).Val())
		rdb.Del(ctx, other, gen)
		if errors.Is(err, redisfilter.ErrLost) {
			t.Error("Delete reported a loss")
		}
	})
}
