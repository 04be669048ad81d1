package redisfilter_test

import (
	"context"
	"encoding/binary"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mitzbloom/mitzbloom/redisfilter"
)

// The scripts of lua/, run directly with EVAL on keys crafted for each
// failure a script can report, on a real server.

// scriptKeys are the keys of a crafted shard, in a tag of the test's own.
type scriptKeys struct {
	cfg, bitmap, hold, gens, gen, log, state string
}

func newScriptKeys(t *testing.T) scriptKeys {
	tag := "{" + filterName(t) + "}"
	return scriptKeys{cfg: tag + ":config", bitmap: tag, hold: tag + ":hold", gens: tag + ":generations", gen: tag + ":42",
		log: tag + ":changes", state: tag + ":changes-state"}
}

// unguardKeys returns the keys of unguard.lua for a plain filter.
func (k scriptKeys) unguard() []string { return []string{k.cfg, k.bitmap, k.hold, k.log, k.state} }

const scriptConfig = "mitzbloom/redisfilter v1 bits=64 k=1 strategy=MURMUR128_MITZ_64 funnel=\"funnel.String\" id=0123456789abcdef"

// shardOf writes a complete shard of 8 bytes, with bits, and returns its
// keys.
func shardOf(t *testing.T, rdb *redis.Client, bits string) scriptKeys {
	t.Helper()
	ctx := testContext(t)
	k := newScriptKeys(t)
	require.NoError(t, rdb.Set(ctx, k.cfg, scriptConfig, 0).Err())
	require.NoError(t, rdb.Set(ctx, k.bitmap, bits, 0).Err())
	require.NoError(t, rdb.Set(ctx, k.hold, "mitzbloom", 0).Err())
	return k
}

func eval(t *testing.T, rdb *redis.Client, name string, keys []string, args ...any) (any, error) {
	t.Helper()
	return rdb.Eval(testContext(t), redisfilter.ScriptText(name), keys, args...).Result()
}

// assertFails checks that err is an error reply of a script that the
// package reports wrapping sentinel.
func assertFails(t *testing.T, err error, sentinel error, what string) {
	t.Helper()
	var rerr redis.Error
	require.True(t, errors.As(err, &rerr), "%s: %v is an error reply", what, err)
	assert.ErrorIs(t, redisfilter.WrapScriptError(err), sentinel, what)
}

// breakers are the ways a test breaks a crafted shard, with the sentinel
// that each script's failure wraps.
var breakers = []struct {
	name     string
	sentinel error
	apply    func(ctx context.Context, rdb *redis.Client, k scriptKeys) error
}{
	{"config missing", redisfilter.ErrLost, func(ctx context.Context, rdb *redis.Client, k scriptKeys) error { return rdb.Del(ctx, k.cfg).Err() }},
	{"config of another filter", redisfilter.ErrMismatch, func(ctx context.Context, rdb *redis.Client, k scriptKeys) error {
		return rdb.Set(ctx, k.cfg, "mitzbloom/redisfilter v1 bits=128 id=1", 0).Err()
	}},
	{"config of another type", redisfilter.ErrNotFilter, func(ctx context.Context, rdb *redis.Client, k scriptKeys) error {
		rdb.Del(ctx, k.cfg)
		return rdb.RPush(ctx, k.cfg, "x").Err()
	}},
	{"bitmap missing", redisfilter.ErrLost, func(ctx context.Context, rdb *redis.Client, k scriptKeys) error { return rdb.Del(ctx, k.bitmap).Err() }},
	{"bitmap of another length", redisfilter.ErrNotFilter, func(ctx context.Context, rdb *redis.Client, k scriptKeys) error {
		return rdb.Set(ctx, k.bitmap, "short", 0).Err()
	}},
	{"bitmap of another type", redisfilter.ErrNotFilter, func(ctx context.Context, rdb *redis.Client, k scriptKeys) error {
		rdb.Del(ctx, k.bitmap)
		return rdb.SAdd(ctx, k.bitmap, "x").Err()
	}},
}

func TestScriptGuard(t *testing.T) {
	rdb := sharedClient(t)
	ctx := testContext(t)
	bits := "\x01\x02\x03\x04\x05\x06\x07\x08"
	t.Run("passes", func(t *testing.T) {
		k := shardOf(t, rdb, bits)
		res, err := eval(t, rdb, "guard", []string{k.cfg, k.bitmap, k.hold}, scriptConfig, 8)
		require.NoError(t, err)
		assert.EqualValues(t, 1, res)
		assert.Equal(t, bits, rdb.Get(ctx, k.bitmap).Val())
	})
	for _, b := range breakers {
		t.Run(b.name, func(t *testing.T) {
			k := shardOf(t, rdb, bits)
			require.NoError(t, b.apply(ctx, rdb, k))
			typ := rdb.Type(ctx, k.bitmap).Val()
			before := rdb.Dump(ctx, k.bitmap).Val()
			keys := []string{k.cfg, k.bitmap, k.hold}
			// As a Put sends it: the BITFIELD between the two scripts.
			pipe := rdb.TxPipeline()
			guard := pipe.Eval(ctx, redisfilter.ScriptText("guard"), keys, scriptConfig, 8)
			bitfield := pipe.Do(ctx, "BITFIELD", k.bitmap, "SET", "u1", 0, 1)
			unguard := pipe.Eval(ctx, redisfilter.ScriptText("unguard"), k.unguard(), "\x00\x00\x00\x00", 4096)
			_, _ = pipe.Exec(ctx)
			assertFails(t, guard.Err(), b.sentinel, "guard")
			assert.Error(t, bitfield.Err(), "the BITFIELD must fail on the guard's hash")
			assert.NoError(t, unguard.Err())
			assert.Zero(t, rdb.Exists(ctx, k.log, k.state).Val(), "a refused Put logs nothing")
			assert.Equal(t, typ, rdb.Type(ctx, k.bitmap).Val(), "unguard puts the bitmap back as it was")
			assert.Equal(t, before, rdb.Dump(ctx, k.bitmap).Val(), "the bitmap is unchanged")
			assert.Equal(t, "mitzbloom", rdb.Get(ctx, k.hold).Val())
		})
	}
	t.Run("window", func(t *testing.T) {
		k := shardOf(t, rdb, bits)
		keys := []string{k.cfg, k.gen, k.hold, k.gens}
		expireAt := time.Now().Add(time.Hour).UnixMilli()
		// A generation never created is created, recorded with its expiry.
		res, err := eval(t, rdb, "guard", keys, scriptConfig, 8, expireAt, time.Now().UnixMilli())
		require.NoError(t, err)
		assert.EqualValues(t, 1, res)
		assert.EqualValues(t, 8, rdb.StrLen(ctx, k.gen).Val())
		assert.EqualValues(t, expireAt, rdb.ZScore(ctx, k.gens, k.gen).Val())
		assert.EqualValues(t, expireAt, rdb.PExpireTime(ctx, k.gen).Val().Milliseconds())
		// One recorded with an expiry to come, but gone, is lost.
		require.NoError(t, rdb.Del(ctx, k.gen).Err())
		_, err = eval(t, rdb, "guard", keys, scriptConfig, 8, expireAt, time.Now().UnixMilli())
		assertFails(t, err, redisfilter.ErrLost, "guard of a lost generation")
		res, err = eval(t, rdb, "unguard", keys)
		require.NoError(t, err)
		assert.EqualValues(t, 1, res)
		assert.Zero(t, rdb.Exists(ctx, k.gen).Val(), "unguard removes the guard's hash")
		// One recorded that expired is created again.
		require.NoError(t, rdb.ZAdd(ctx, k.gens, redis.Z{Score: float64(time.Now().Add(-time.Minute).UnixMilli()), Member: k.gen}).Err())
		_, err = eval(t, rdb, "guard", keys, scriptConfig, 8, expireAt, time.Now().UnixMilli())
		require.NoError(t, err)
		assert.EqualValues(t, 8, rdb.StrLen(ctx, k.gen).Val())
	})
}

func TestScriptRead(t *testing.T) {
	rdb := sharedClient(t)
	ctx := testContext(t)
	bits := "\xff\x00\x0f\x00\x00\x00\x00\x01"
	t.Run("reads", func(t *testing.T) {
		k := shardOf(t, rdb, bits)
		res, err := eval(t, rdb, "read", []string{k.cfg, k.bitmap}, scriptConfig, 8, "range", 1, 2)
		require.NoError(t, err)
		assert.Equal(t, bits[1:3], res)
		res, err = eval(t, rdb, "read", []string{k.cfg, k.bitmap}, scriptConfig, 8, "count", 0, 7)
		require.NoError(t, err)
		assert.EqualValues(t, 13, res)
	})
	for _, b := range breakers {
		t.Run(b.name, func(t *testing.T) {
			k := shardOf(t, rdb, bits)
			require.NoError(t, b.apply(ctx, rdb, k))
			for _, what := range []string{"range", "count"} {
				_, err := eval(t, rdb, "read", []string{k.cfg, k.bitmap}, scriptConfig, 8, what, 0, 7)
				assertFails(t, err, b.sentinel, what)
				// The same read in plain commands, for a user that may
				// not run scripts, fails alike.
				_, err = redisfilter.Plain(ctx, rdb, "read", []string{k.cfg, k.bitmap}, scriptConfig, int64(8), what, 0, 7)
				assert.ErrorIs(t, err, b.sentinel, "plain %s", what)
			}
		})
	}
	t.Run("plain", func(t *testing.T) {
		k := shardOf(t, rdb, bits)
		res, err := redisfilter.Plain(ctx, rdb, "read", []string{k.cfg, k.bitmap}, scriptConfig, int64(8), "range", 1, 2)
		require.NoError(t, err)
		assert.Equal(t, bits[1:3], res)
		res, err = redisfilter.Plain(ctx, rdb, "read", []string{k.cfg, k.bitmap}, scriptConfig, int64(8), "count", 0, 7)
		require.NoError(t, err)
		assert.EqualValues(t, 13, res)
		keys := []string{k.cfg, k.gen, k.gens}
		res, err = redisfilter.Plain(ctx, rdb, "read", keys, scriptConfig, int64(8), "range", 0, 7, time.Now().UnixMilli())
		require.NoError(t, err, "a generation never created reads as empty")
		assert.Equal(t, "", res)
		require.NoError(t, rdb.ZAdd(ctx, k.gens, redis.Z{Score: float64(time.Now().Add(time.Hour).UnixMilli()), Member: k.gen}).Err())
		_, err = redisfilter.Plain(ctx, rdb, "read", keys, scriptConfig, int64(8), "range", 0, 7, time.Now().UnixMilli())
		assert.ErrorIs(t, err, redisfilter.ErrLost, "a generation gone before its expiry")
	})
	t.Run("window", func(t *testing.T) {
		k := shardOf(t, rdb, bits)
		keys := []string{k.cfg, k.gen, k.gens}
		for _, what := range []string{"range", "count"} {
			res, err := eval(t, rdb, "read", keys, scriptConfig, 8, what, 0, 7, time.Now().UnixMilli())
			require.NoError(t, err, "a generation never created reads as empty")
			assert.Contains(t, []any{"", int64(0)}, res)
		}
		require.NoError(t, rdb.ZAdd(ctx, k.gens, redis.Z{Score: float64(time.Now().Add(time.Hour).UnixMilli()), Member: k.gen}).Err())
		_, err := eval(t, rdb, "read", keys, scriptConfig, 8, "range", 0, 7, time.Now().UnixMilli())
		assertFails(t, err, redisfilter.ErrLost, "a generation gone before its expiry")
	})
}

func TestScriptMerge(t *testing.T) {
	rdb := sharedClient(t)
	ctx := testContext(t)
	bits := "\x01\x00\x00\x00\x00\x00\x00\x80"
	tmp := func(k scriptKeys) []string {
		return []string{k.cfg, k.bitmap, k.bitmap + ":merge:a", k.bitmap + ":merge:b", k.log, k.state}
	}
	t.Run("ors", func(t *testing.T) {
		k := shardOf(t, rdb, bits)
		res, err := eval(t, rdb, "merge", tmp(k), scriptConfig, 8, 6, "\x0f\x01", 4096, 16, "42")
		require.NoError(t, err)
		assert.EqualValues(t, 5, res, "the bits changed")
		assert.Equal(t, "\x01\x00\x00\x00\x00\x00\x0f\x81", rdb.Get(ctx, k.bitmap).Val())
		assert.Zero(t, rdb.Exists(ctx, k.bitmap+":merge:a", k.bitmap+":merge:b").Val(), "no temporary key is left")
		assert.Equal(t, offsets(52, 53, 54, 55, 63), rdb.Get(ctx, k.log).Val(), "the log has the bits changed")
		res, err = eval(t, rdb, "merge", tmp(k), scriptConfig, 8, 0, "\x01", 4096, 16, "42")
		require.NoError(t, err)
		assert.EqualValues(t, 0, res, "a merge that changes nothing")
		assert.Equal(t, offsets(52, 53, 54, 55, 63), rdb.Get(ctx, k.log).Val(), "logs nothing")
	})
	t.Run("too many to log", func(t *testing.T) {
		k := shardOf(t, rdb, bits)
		_, err := eval(t, rdb, "merge", tmp(k), scriptConfig, 8, 6, "\x0f\x01", 4096, 16, "42")
		require.NoError(t, err)
		state := rdb.Get(ctx, k.state).Val()
		res, err := eval(t, rdb, "merge", tmp(k), scriptConfig, 8, 0, "\xff\xff\xff", 4096, 16, "42")
		require.NoError(t, err)
		assert.EqualValues(t, 23, res)
		assert.Empty(t, rdb.Get(ctx, k.log).Val(), "the log starts again")
		assert.NotEqual(t, state, rdb.Get(ctx, k.state).Val(), "in a new epoch")
	})
	for _, b := range breakers {
		t.Run(b.name, func(t *testing.T) {
			k := shardOf(t, rdb, bits)
			require.NoError(t, b.apply(ctx, rdb, k))
			before := rdb.Dump(ctx, k.bitmap).Val()
			_, err := eval(t, rdb, "merge", tmp(k), scriptConfig, 8, 0, "\xff", 4096, 16, "42")
			assertFails(t, err, b.sentinel, "merge")
			assert.Equal(t, before, rdb.Dump(ctx, k.bitmap).Val(), "the bitmap is unchanged")
			assert.Zero(t, rdb.Exists(ctx, tmp(k)[2:]...).Val(), "no temporary key or log is left")
		})
	}
}

// TestScriptPush checks push.lua: the bits it sets, that it logs only
// those it changed, and that it sets nothing on a broken shard or for a bit
// past the bitmap's end.
func TestScriptPush(t *testing.T) {
	rdb := sharedClient(t)
	ctx := testContext(t)
	bits := "\x80\x00\x00\x00\x00\x00\x00\x01"
	keys := func(k scriptKeys) []string { return []string{k.cfg, k.bitmap, k.log, k.state} }
	t.Run("sets", func(t *testing.T) {
		k := shardOf(t, rdb, bits)
		res, err := eval(t, rdb, "push", keys(k), scriptConfig, 8, offsets(0, 9, 63, 9, 10), 4096, 4, "", 0, 0)
		require.NoError(t, err)
		epoch, _, _ := strings.Cut(rdb.Get(ctx, k.state).Val(), " ")
		replid := replicationID(t, rdb)
		assert.Equal(t, []any{int64(2), replid, epoch, int64(8), offsets(10), "", "", int64(0)}, res,
			"bits 0 and 63 were set, and 9 is named twice; the log's end, and its last 4 bytes; the empty log held the pusher's empty checkpoint, and had no epoch")
		assert.Equal(t, "\x80\x60\x00\x00\x00\x00\x00\x01", rdb.Get(ctx, k.bitmap).Val())
		assert.Equal(t, offsets(9, 10), rdb.Get(ctx, k.log).Val(), "the log has the bits changed")
		res, err = eval(t, rdb, "push", keys(k), scriptConfig, 8, offsets(10), 4096, 16, epoch, 8, 4)
		require.NoError(t, err)
		assert.Equal(t, []any{int64(0), replid, epoch, int64(8), offsets(9, 10), offsets(10), epoch, int64(8)}, res, "a push that changes nothing: the log as it is, and its bytes before the checkpoint")
		assert.Equal(t, offsets(9, 10), rdb.Get(ctx, k.log).Val(), "logs nothing")
	})
	t.Run("checkpoint", func(t *testing.T) {
		// The bytes before the pusher's checkpoint as the log held them
		// before the push appended; none if the log does not hold the
		// checkpoint: shorter than it, of another epoch, or trimmed past.
		k := shardOf(t, rdb, bits)
		_, err := eval(t, rdb, "push", keys(k), scriptConfig, 8, offsets(1, 2), 4096, 4, "", 0, 0)
		require.NoError(t, err)
		epoch, _, _ := strings.Cut(rdb.Get(ctx, k.state).Val(), " ")
		for _, c := range []struct {
			name         string
			epoch        string
			check, nheld int
			held         any
		}{
			{"held", epoch, 8, 8, offsets(1, 2)},
			{"held, a part", epoch, 4, 4, offsets(1)},
			{"past the end", epoch, 12, 4, nil},
			{"another epoch", epoch + "1", 8, 4, nil},
			{"before the first record", epoch, 4, 8, nil},
		} {
			res, err := eval(t, rdb, "push", keys(k), scriptConfig, 8, "", 4096, 4, c.epoch, c.check, c.nheld)
			require.NoError(t, err)
			assert.Equal(t, []any{int64(0), replicationID(t, rdb), epoch, int64(8), offsets(2), c.held, epoch, int64(8)}, res, c.name)
		}
	})
	t.Run("in groups", func(t *testing.T) {
		// More bits than one BITFIELD of the script sets.
		k := shardOf(t, rdb, strings.Repeat("\x00", 128))
		var offs []uint32
		for i := range uint32(600) {
			offs = append(offs, (i*389)%1024)
		}
		res, err := eval(t, rdb, "push", keys(k), scriptConfig, 128, offsets(offs...), 1<<20, 16, "", 0, 0)
		require.NoError(t, err)
		assert.EqualValues(t, 600, res.([]any)[0])
		for _, o := range offs {
			require.EqualValues(t, 1, rdb.GetBit(ctx, k.bitmap, int64(o)).Val(), "bit %d", o)
		}
		assert.EqualValues(t, 600, rdb.BitCount(ctx, k.bitmap, nil).Val())
		assert.Equal(t, offsets(offs...), rdb.Get(ctx, k.log).Val())
	})
	t.Run("past the end", func(t *testing.T) {
		k := shardOf(t, rdb, bits)
		_, err := eval(t, rdb, "push", keys(k), scriptConfig, 8, offsets(1, 64), 4096, 16, "", 0, 0)
		require.ErrorContains(t, err, "past the end")
		assert.Equal(t, bits, rdb.Get(ctx, k.bitmap).Val(), "nothing is set")
		assert.Zero(t, rdb.Exists(ctx, k.log, k.state).Val(), "nothing is logged")
	})
	for _, b := range breakers {
		t.Run(b.name, func(t *testing.T) {
			k := shardOf(t, rdb, bits)
			require.NoError(t, b.apply(ctx, rdb, k))
			before := rdb.Dump(ctx, k.bitmap).Val()
			_, err := eval(t, rdb, "push", keys(k), scriptConfig, 8, offsets(1), 4096, 16, "", 0, 0)
			assertFails(t, err, b.sentinel, "push")
			assert.Equal(t, before, rdb.Dump(ctx, k.bitmap).Val(), "the bitmap is unchanged")
			assert.Zero(t, rdb.Exists(ctx, k.log, k.state).Val(), "nothing is logged")
		})
	}
}

// replicationID returns the server's master_replid, which push.lua and
// changes.lua answer.
func replicationID(t *testing.T, rdb *redis.Client) string {
	t.Helper()
	info, err := rdb.Info(testContext(t), "replication").Result()
	require.NoError(t, err)
	_, id, _ := strings.Cut(info, "master_replid:")
	id, _, _ = strings.Cut(id, "\r\n")
	return id
}

func TestScriptInspect(t *testing.T) {
	rdb := sharedClient(t)
	ctx := testContext(t)
	k := newScriptKeys(t)
	res, err := eval(t, rdb, "inspect", []string{k.cfg, k.bitmap}, "bitmap")
	require.NoError(t, err)
	require.Len(t, res, 2)
	_, isString := res.([]any)[0].(string)
	assert.False(t, isString, "no config")
	assert.EqualValues(t, 0, res.([]any)[1])
	k = shardOf(t, rdb, "12345678")
	res, err = eval(t, rdb, "inspect", []string{k.cfg, k.bitmap}, "bitmap")
	require.NoError(t, err)
	assert.Equal(t, []any{scriptConfig, int64(8)}, res.([]any)[:2])
	require.NoError(t, rdb.ZAdd(ctx, k.gens, redis.Z{Score: 1, Member: "a"}, redis.Z{Score: 2, Member: "b"}).Err())
	res, err = eval(t, rdb, "inspect", []string{k.cfg, k.gens}, "generations")
	require.NoError(t, err)
	assert.Equal(t, []any{scriptConfig, int64(2)}, res.([]any)[:2])
}

func TestScriptClaim(t *testing.T) {
	rdb := sharedClient(t)
	ctx := testContext(t)
	claim := func(k scriptKeys, found, cfg, token string) []any {
		t.Helper()
		res, err := eval(t, rdb, "claim", []string{k.cfg}, found, cfg, token)
		require.NoError(t, err)
		require.Len(t, res, 2)
		return res.([]any)
	}
	k := newScriptKeys(t)
	res := claim(k, "", scriptConfig, "5")
	require.EqualValues(t, 1, res[0])
	mine := res[1].(string)
	assert.Equal(t, "creating 5 "+scriptConfig, mine)
	assert.Equal(t, mine, rdb.Get(ctx, k.cfg).Val())

	res = claim(k, "", scriptConfig, "6")
	assert.Equal(t, []any{int64(0), mine}, res, "the config key changed since it was read")
	res = claim(k, mine, scriptConfig, "6")
	assert.EqualValues(t, 1, res[0], "the creation renews its claim")
	renewed := res[1].(string)
	res = claim(k, mine, "mitzbloom/redisfilter v1 bits=128 id=2", "7")
	assert.Equal(t, []any{int64(0), renewed}, res, "a claim renewed since it was read is not taken")
	res = claim(k, renewed, scriptConfig, "0")
	assert.Equal(t, []any{int64(1), "creating 0 " + scriptConfig}, res, "the creation gives it up")
	res = claim(k, res[1].(string), "mitzbloom/redisfilter v1 bits=128 id=2", "8")
	assert.EqualValues(t, 1, res[0], "a claim given up is taken over")
}

func TestScriptCreate(t *testing.T) {
	rdb := sharedClient(t)
	ctx := testContext(t)
	create := func(k scriptKeys, data, found string, foundLen int, what string) []any {
		t.Helper()
		res, err := eval(t, rdb, "create", []string{k.cfg, data, k.hold, k.log, k.state}, found, scriptConfig, 8, foundLen, what, "42")
		require.NoError(t, err)
		return res.([]any)
	}
	t.Run("creates", func(t *testing.T) {
		k := newScriptKeys(t)
		assert.Equal(t, []any{int64(1), scriptConfig}, create(k, k.bitmap, "", 0, "create"))
		assert.Equal(t, scriptConfig, rdb.Get(ctx, k.cfg).Val())
		assert.Equal(t, "\x00\x00\x00\x00\x00\x00\x00\x00", rdb.Get(ctx, k.bitmap).Val())
		assert.Regexp(t, `^\d+ 0$`, rdb.Get(ctx, k.state).Val(), "the change log starts")
		assert.Equal(t, "", rdb.Get(ctx, k.log).Val())
		assert.EqualValues(t, 1, rdb.Exists(ctx, k.log).Val(), "the change log exists, so that Puts name no missing key")
		assert.Equal(t, "mitzbloom", rdb.Get(ctx, k.hold).Val())
	})
	t.Run("never overwrites a bitmap", func(t *testing.T) {
		k := newScriptKeys(t)
		require.NoError(t, rdb.Set(ctx, k.cfg, "old", 0).Err())
		require.NoError(t, rdb.Set(ctx, k.bitmap, "123", 0).Err())
		_, err := eval(t, rdb, "create", []string{k.cfg, k.bitmap, k.hold, k.log, k.state}, "old", scriptConfig, 8, 3, "create", "42")
		require.ErrorContains(t, err, "exists")
		assert.Equal(t, "123", rdb.Get(ctx, k.bitmap).Val())
		assert.Equal(t, "old", rdb.Get(ctx, k.cfg).Val())
	})
	t.Run("keeps a shard and its log", func(t *testing.T) {
		k := newScriptKeys(t)
		require.NoError(t, rdb.Set(ctx, k.cfg, "old", 0).Err())
		require.NoError(t, rdb.Set(ctx, k.bitmap, "12345678", 0).Err())
		require.NoError(t, rdb.Set(ctx, k.log, offsets(1, 2), 0).Err())
		require.NoError(t, rdb.Set(ctx, k.state, "123 4", 0).Err())
		assert.EqualValues(t, 1, create(k, k.bitmap, "old", 8, "keep")[0])
		assert.Equal(t, "12345678", rdb.Get(ctx, k.bitmap).Val(), "a shard that survived keeps its bits")
		assert.Equal(t, offsets(1, 2), rdb.Get(ctx, k.log).Val(), "and its log")
		assert.Equal(t, "123 4", rdb.Get(ctx, k.state).Val())
		assert.Equal(t, scriptConfig, rdb.Get(ctx, k.cfg).Val())
	})
	t.Run("adopts", func(t *testing.T) {
		k := newScriptKeys(t)
		require.NoError(t, rdb.Set(ctx, k.bitmap, "12345678", 0).Err())
		assert.EqualValues(t, 1, create(k, k.bitmap, "", 8, "adopt")[0])
		assert.Equal(t, "12345678", rdb.Get(ctx, k.bitmap).Val(), "an adopted bitmap keeps its bits")
		assert.Equal(t, scriptConfig, rdb.Get(ctx, k.cfg).Val())
	})
	t.Run("window", func(t *testing.T) {
		k := newScriptKeys(t)
		require.NoError(t, rdb.ZAdd(ctx, k.gens, redis.Z{Score: 1, Member: "a"}).Err())
		assert.EqualValues(t, 1, create(k, k.gens, "", 1, "generations")[0])
		assert.EqualValues(t, 1, rdb.ZCard(ctx, k.gens).Val(), "a window's record is left alone")
	})
	t.Run("config changed meanwhile", func(t *testing.T) {
		k := newScriptKeys(t)
		require.NoError(t, rdb.Set(ctx, k.cfg, "other", 0).Err())
		assert.Equal(t, []any{int64(0), "other"}, create(k, k.bitmap, "", 0, "create"), "a config written since Open looked")
		assert.Zero(t, rdb.Exists(ctx, k.bitmap).Val())
	})
	t.Run("bitmap changed meanwhile", func(t *testing.T) {
		k := newScriptKeys(t)
		require.NoError(t, rdb.Set(ctx, k.bitmap, "12345678", 0).Err())
		assert.Equal(t, []any{int64(0), ""}, create(k, k.bitmap, "", 0, "create"), "a bitmap created since Open looked")
		assert.Equal(t, "12345678", rdb.Get(ctx, k.bitmap).Val())
		assert.Zero(t, rdb.Exists(ctx, k.cfg).Val())
	})
}

// offsets returns the change log's records of bit offsets.
func offsets(offs ...uint32) string {
	var b []byte
	for _, o := range offs {
		b = binary.BigEndian.AppendUint32(b, o)
	}
	return string(b)
}

// TestScriptLog checks the change log: what unguard.lua appends after a
// Put that the guard let through, its trimming, and what changes.lua reads
// of it, from positions the log holds and from positions it does not, at
// a reader's checkpoint, and before the end of the read.
func TestScriptLog(t *testing.T) {
	rdb := sharedClient(t)
	ctx := testContext(t)
	k := shardOf(t, rdb, "\x00\x00\x00\x00\x00\x00\x00\x00")
	unguard := func(cap int, offs ...uint32) {
		t.Helper()
		_, err := eval(t, rdb, "unguard", k.unguard(), offsets(offs...), cap)
		require.NoError(t, err)
	}
	keys := []string{k.cfg, k.bitmap, k.log, k.state}
	// changes reads from pos, with a checkpoint at check of nheld bytes, and
	// the 8 bytes before the end of the read, and the bitmap's first 2
	// bytes if ranged.
	read := func(ranged bool, epoch string, pos, most, check, nheld int) []any {
		t.Helper()
		args := []any{scriptConfig, 8, epoch, pos, most, check, nheld, 8}
		plainArgs := []any{scriptConfig, int64(8), epoch, int64(pos), most, int64(check), nheld, 8}
		if ranged {
			args, plainArgs = append(args, 0, 1), append(plainArgs, int64(0), int64(1))
		}
		res, err := eval(t, rdb, "changes", keys, args...)
		require.NoError(t, err)
		require.Len(t, res, 7+len(args)/10)
		// The same read in plain commands, for a user that may not run
		// scripts, answers alike, but for the replication ID, which
		// needs INFO.
		plain, err := redisfilter.Plain(ctx, rdb, "changes", keys, plainArgs...)
		require.NoError(t, err)
		assert.Equal(t, res.([]any)[1:], plain.([]any)[1:], "plain changes(%q, %d, %d, %d, %d)", epoch, pos, most, check, nheld)
		return res.([]any)
	}
	changes := func(epoch string, pos, most, check, nheld int) []any {
		t.Helper()
		return read(false, epoch, pos, most, check, nheld)
	}
	unguard(4096, 1, 2, 3)
	unguard(4096, 4)
	res := changes("", 0, 1000, 0, 0)
	epoch := res[1].(string)
	assert.Regexp(t, `^\d+$`, epoch, "the first append starts the log")
	info := rdb.Info(ctx, "replication").Val()
	assert.Contains(t, info, "master_replid:"+res[0].(string))
	assert.Equal(t, []any{int64(0), int64(16), nil, nil, offsets(3, 4)}, res[2:], "another epoch: neither covered nor held; the tail at the log's end")
	assert.Equal(t, []any{epoch, int64(0), int64(16), offsets(1, 2, 3, 4), "", offsets(3, 4)}, changes(epoch, 0, 1000, 0, 0)[1:])
	assert.Equal(t, []any{epoch, int64(0), int64(16), offsets(2, 3), offsets(1), offsets(2, 3)}, changes(epoch, 4, 8, 4, 4)[1:], "at most 8 bytes")
	assert.Equal(t, []any{"", offsets(3, 4), ""}, changes(epoch, 16, 1000, 16, 8)[4:], "nothing new: held, and no tail")
	assert.Equal(t, []any{"", offsets(2, 3), offsets(3, 4)}, changes(epoch, 16, 1000, 12, 8)[4:], "read past the checkpoint: a tail")
	assert.Equal(t, []any{nil, nil, offsets(3, 4)}, changes(epoch, 20, 1000, 20, 8)[4:], "past the end: the server lost the log's end")
	assert.Equal(t, []any{nil, nil, offsets(3, 4), "\x00\x00"}, read(true, "", 0, 0, 0, 0)[4:], "a range of the bitmap, with the tail at the log's end")

	// A log of at most 32 bytes keeps 16 when it would hold more.
	unguard(32, 5, 6, 7, 8, 9)
	res = changes(epoch, 0, 1000, 16, 8)
	assert.Equal(t, []any{epoch, int64(20), int64(36), nil, nil, offsets(8, 9)}, res[1:], "trimmed past the position and the checkpoint")
	assert.Equal(t, []any{offsets(6, 7, 8, 9), offsets(6), offsets(8, 9)}, changes(epoch, 20, 1000, 24, 4)[4:])
	assert.Equal(t, []any{offsets(8, 9), offsets(6, 7), offsets(8, 9)}, changes(epoch, 28, 1000, 28, 8)[4:])
	assert.Equal(t, []any{offsets(8, 9), nil, offsets(8, 9)}, changes(epoch, 28, 1000, 28, 12)[4:], "trimmed into the checkpoint's bytes")

	require.NoError(t, rdb.Set(ctx, k.cfg, strings.Replace(scriptConfig, "bits=64", "bits=128", 1), 0).Err())
	_, err := eval(t, rdb, "changes", keys, scriptConfig, 8, epoch, 20, 1000, 20, 8, 8)
	assertFails(t, err, redisfilter.ErrMismatch, "changes of another filter")
}
