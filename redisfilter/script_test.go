package redisfilter_test

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"strconv"
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
	cfg, bitmap, hold, gens, gen, log string
}

func newScriptKeys(t *testing.T) scriptKeys {
	tag := "{" + filterName(t) + "}"
	return scriptKeys{cfg: tag + ":config", bitmap: tag, hold: tag + ":hold", gens: tag + ":generations", gen: tag + ":42",
		log: tag + ":changes"}
}

// guardKeys returns the keys of guard.lua for a plain filter.
func (k scriptKeys) guard() []string { return []string{k.cfg, k.bitmap, k.hold, k.log} }

// logOf returns a change log of epoch whose first record is at base, with
// records, as lua/log.lua writes it.
func logOf(epoch string, base int64, records string) string {
	e, _ := strconv.ParseInt(epoch, 10, 64)
	return fmt.Sprintf("mitzbloom/changes %015d %016d\n", e, base) + records
}

// logAt returns the epoch of the change log at key, the position of its
// first record, and its records.
func logAt(t *testing.T, rdb *redis.Client, key string) (epoch string, base int64, records string) {
	t.Helper()
	v, err := rdb.Get(testContext(t), key).Result()
	require.NoError(t, err)
	require.GreaterOrEqual(t, len(v), 51, "a change log of %d bytes", len(v))
	_, err = fmt.Sscanf(v[:51], "mitzbloom/changes %s %d\n", &epoch, &base)
	require.NoError(t, err, "the header of %q", v[:51])
	return epoch, base, v[51:]
}

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

// putTx runs guard.lua, a BITFIELD that sets offset off and unguard.lua in
// a transaction, with keys and the guard's args after the config, the
// length and the token, as a Put sends them, and returns the replies of
// the three.
func putTx(t *testing.T, rdb *redis.Client, keys []string, off int64, args ...any) (guard, bitfield, unguard *redis.Cmd) {
	t.Helper()
	ctx := testContext(t)
	token := fmt.Sprint(time.Now().UnixNano())
	pipe := rdb.TxPipeline()
	guard = pipe.Eval(ctx, redisfilter.ScriptText("guard"), keys, append([]any{scriptConfig, 8, token}, args...)...)
	bitfield = pipe.Do(ctx, "BITFIELD", keys[1], "SET", "u1", off, 1)
	unguard = pipe.Eval(ctx, redisfilter.ScriptText("unguard"), []string{keys[1], keys[2]}, token)
	_, _ = pipe.Exec(ctx)
	return guard, bitfield, unguard
}

func TestScriptGuard(t *testing.T) {
	rdb := sharedClient(t)
	ctx := testContext(t)
	bits := "\x01\x02\x03\x04\x05\x06\x07\x08"
	t.Run("passes", func(t *testing.T) {
		k := shardOf(t, rdb, bits)
		guard, bitfield, unguard := putTx(t, rdb, k.guard(), 0, offsets(0, 7, 0), 4096, "clear")
		require.NoError(t, guard.Err())
		require.NoError(t, bitfield.Err())
		require.NoError(t, unguard.Err())
		assert.Equal(t, "\x81\x02\x03\x04\x05\x06\x07\x08", rdb.Get(ctx, k.bitmap).Val())
		_, base, records := logAt(t, rdb, k.log)
		assert.Zero(t, base)
		assert.Equal(t, offsets(0), records, "the log has the bits that were clear, each once: bit 7 was set")
		guard, _, _ = putTx(t, rdb, k.guard(), 0, offsets(0, 7), 4096, "clear")
		require.NoError(t, guard.Err())
		_, _, records = logAt(t, rdb, k.log)
		assert.Equal(t, offsets(0), records, "a Put that changes no bit appends nothing")
		// A Put of values just read and not found logs their bits as
		// they are.
		guard, _, _ = putTx(t, rdb, k.guard(), 9, offsets(9, 10), 4096, "all")
		require.NoError(t, guard.Err())
		_, _, records = logAt(t, rdb, k.log)
		assert.Equal(t, offsets(0, 9, 10), records)
	})
	for _, b := range breakers {
		t.Run(b.name, func(t *testing.T) {
			k := shardOf(t, rdb, bits)
			require.NoError(t, b.apply(ctx, rdb, k))
			typ := rdb.Type(ctx, k.bitmap).Val()
			before := rdb.Dump(ctx, k.bitmap).Val()
			guard, bitfield, unguard := putTx(t, rdb, k.guard(), 0, offsets(0), 4096, "clear")
			assertFails(t, guard.Err(), b.sentinel, "guard")
			assert.Error(t, bitfield.Err(), "the BITFIELD must fail on the guard's hash")
			assert.NoError(t, unguard.Err())
			assert.Zero(t, rdb.Exists(ctx, k.log).Val(), "a refused Put logs nothing")
			assert.Equal(t, typ, rdb.Type(ctx, k.bitmap).Val(), "unguard puts the bitmap back as it was")
			assert.Equal(t, before, rdb.Dump(ctx, k.bitmap).Val(), "the bitmap is unchanged")
			assert.Equal(t, "mitzbloom", rdb.Get(ctx, k.hold).Val())
		})
	}
	// A key beside the bitmap that holds what redisfilter did not write
	// refuses the Put, and is left as it is; the bitmap is moved aside and
	// back, even with the hold key taken.
	for _, key := range []string{"hold", "log"} {
		for i, v := range []string{"hello", "", "mitzbloom/changes 1 2\n"} {
			t.Run(fmt.Sprintf("%s holds value %d", key, i), func(t *testing.T) {
				k := shardOf(t, rdb, bits)
				at := map[string]string{"hold": k.hold, "log": k.log}[key]
				require.NoError(t, rdb.Set(ctx, at, v, 0).Err())
				guard, bitfield, unguard := putTx(t, rdb, k.guard(), 0, offsets(0), 4096, "clear")
				assertFails(t, guard.Err(), redisfilter.ErrNotFilter, "guard")
				assert.ErrorContains(t, guard.Err(), at)
				assert.Error(t, bitfield.Err())
				assert.NoError(t, unguard.Err())
				assert.Equal(t, v, rdb.Get(ctx, at).Val(), "the key is as it was")
				assert.Equal(t, bits, rdb.Get(ctx, k.bitmap).Val(), "the bitmap is back, unchanged")
				assert.Len(t, keysMatching(t, rdb, k.bitmap+"*"), map[string]int{"hold": 3, "log": 4}[key], "no key is left beside the shard's")
			})
		}
	}
	t.Run("a hash that is not the guard's", func(t *testing.T) {
		k := shardOf(t, rdb, bits)
		require.NoError(t, rdb.Del(ctx, k.bitmap).Err())
		require.NoError(t, rdb.HSet(ctx, k.bitmap, "mitzbloom-guard", "1 "+k.hold).Err())
		before := rdb.Dump(ctx, k.bitmap).Val()
		guard, _, unguard := putTx(t, rdb, k.guard(), 0, offsets(0), 4096, "clear")
		assertFails(t, guard.Err(), redisfilter.ErrNotFilter, "guard")
		assert.NoError(t, unguard.Err())
		assert.Equal(t, before, rdb.Dump(ctx, k.bitmap).Val(), "unguard leaves a hash without its token")
		assert.Equal(t, "mitzbloom", rdb.Get(ctx, k.hold).Val())
	})
	t.Run("window", func(t *testing.T) {
		k := shardOf(t, rdb, bits)
		const period, generations = 60_000, 2
		now := time.Now().UnixMilli()
		gen := now / period
		genKey := func(g int64) string { return k.bitmap + ":" + strconv.FormatInt(g, 10) }
		expiry := func(g int64) int64 { return (g + generations + 1) * period }
		keys := []string{k.cfg, genKey(gen), k.hold, k.gens}
		args := func(g int64) []any { return []any{expiry(g), now, period, generations} }
		// Recorded earlier: an expired generation of the window's, which
		// goes, and members it did not record, which stay.
		require.NoError(t, rdb.ZAdd(ctx, k.gens, redis.Z{Score: 0, Member: "mitzbloom/redisfilter"},
			redis.Z{Score: float64(expiry(gen - 5)), Member: genKey(gen - 5)},
			redis.Z{Score: float64(expiry(gen-6) + 1), Member: genKey(gen - 6)},
			redis.Z{Score: 1, Member: "someone else's"}).Err())
		// A generation never created is created, recorded with its expiry.
		guard, bitfield, unguard := putTx(t, rdb, keys, 0, args(gen)...)
		require.NoError(t, guard.Err())
		require.NoError(t, bitfield.Err())
		require.NoError(t, unguard.Err())
		assert.Equal(t, "\x80\x00\x00\x00\x00\x00\x00\x00", rdb.Get(ctx, genKey(gen)).Val())
		assert.EqualValues(t, expiry(gen), rdb.ZScore(ctx, k.gens, genKey(gen)).Val())
		assert.EqualValues(t, expiry(gen), rdb.PExpireTime(ctx, genKey(gen)).Val().Milliseconds())
		assert.ElementsMatch(t, []string{"mitzbloom/redisfilter", genKey(gen - 6), "someone else's", genKey(gen)}, rdb.ZRange(ctx, k.gens, 0, -1).Val(),
			"the expired generation it recorded is gone; the rest stays")
		// One recorded with an expiry to come, but gone, is lost.
		require.NoError(t, rdb.Del(ctx, genKey(gen)).Err())
		guard, bitfield, unguard = putTx(t, rdb, keys, 0, args(gen)...)
		assertFails(t, guard.Err(), redisfilter.ErrLost, "guard of a lost generation")
		assert.Error(t, bitfield.Err())
		require.NoError(t, unguard.Err())
		assert.Zero(t, rdb.Exists(ctx, genKey(gen)).Val(), "unguard removes the guard's hash")
		// One recorded that expired is created again.
		require.NoError(t, rdb.ZAdd(ctx, k.gens, redis.Z{Score: float64(now - 1), Member: genKey(gen)}).Err())
		guard, _, _ = putTx(t, rdb, keys, 0, args(gen)...)
		require.NoError(t, guard.Err())
		assert.EqualValues(t, 8, rdb.StrLen(ctx, genKey(gen)).Val())
		// A string of the bitmap's length that the window did not record
		// is not its generation.
		keys[1] = genKey(gen + 1)
		require.NoError(t, rdb.Set(ctx, keys[1], "12345678", 0).Err())
		guard, _, _ = putTx(t, rdb, keys, 0, args(gen+1)...)
		assertFails(t, guard.Err(), redisfilter.ErrNotFilter, "guard of a generation not recorded")
		assert.Equal(t, "12345678", rdb.Get(ctx, keys[1]).Val())
		// A record without the window's mark is not the window's.
		require.NoError(t, rdb.ZRem(ctx, k.gens, "mitzbloom/redisfilter").Err())
		before := rdb.Dump(ctx, k.gens).Val()
		keys[1] = genKey(gen + 2)
		guard, _, _ = putTx(t, rdb, keys, 0, args(gen+2)...)
		assertFails(t, guard.Err(), redisfilter.ErrNotFilter, "guard with a record not the window's")
		assert.Equal(t, before, rdb.Dump(ctx, k.gens).Val())
		assert.Zero(t, rdb.Exists(ctx, keys[1]).Val())
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
		require.NoError(t, rdb.ZAdd(ctx, k.gens, redis.Z{Score: 0, Member: "mitzbloom/redisfilter"}, redis.Z{Score: float64(time.Now().Add(time.Hour).UnixMilli()), Member: k.gen}).Err())
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
		require.NoError(t, rdb.ZAdd(ctx, k.gens, redis.Z{Score: 0, Member: "mitzbloom/redisfilter"}, redis.Z{Score: float64(time.Now().Add(time.Hour).UnixMilli()), Member: k.gen}).Err())
		_, err := eval(t, rdb, "read", keys, scriptConfig, 8, "range", 0, 7, time.Now().UnixMilli())
		assertFails(t, err, redisfilter.ErrLost, "a generation gone before its expiry")
	})
}

func TestScriptMerge(t *testing.T) {
	rdb := sharedClient(t)
	ctx := testContext(t)
	bits := "\x01\x00\x00\x00\x00\x00\x00\x80"
	tmp := func(k scriptKeys) []string {
		return []string{k.cfg, k.bitmap, k.bitmap + ":merge:a", k.bitmap + ":merge:b", k.log}
	}
	t.Run("ors", func(t *testing.T) {
		k := shardOf(t, rdb, bits)
		res, err := eval(t, rdb, "merge", tmp(k), scriptConfig, 8, 6, "\x0f\x01", 4096, 16, "42")
		require.NoError(t, err)
		assert.EqualValues(t, 5, res, "the bits changed")
		assert.Equal(t, "\x01\x00\x00\x00\x00\x00\x0f\x81", rdb.Get(ctx, k.bitmap).Val())
		assert.Zero(t, rdb.Exists(ctx, k.bitmap+":merge:a", k.bitmap+":merge:b").Val(), "no temporary key is left")
		_, _, records := logAt(t, rdb, k.log)
		assert.Equal(t, offsets(52, 53, 54, 55, 63), records, "the log has the bits changed")
		res, err = eval(t, rdb, "merge", tmp(k), scriptConfig, 8, 0, "\x01", 4096, 16, "42")
		require.NoError(t, err)
		assert.EqualValues(t, 0, res, "a merge that changes nothing")
		_, _, records = logAt(t, rdb, k.log)
		assert.Equal(t, offsets(52, 53, 54, 55, 63), records, "logs nothing")
	})
	t.Run("too many to log", func(t *testing.T) {
		k := shardOf(t, rdb, bits)
		_, err := eval(t, rdb, "merge", tmp(k), scriptConfig, 8, 6, "\x0f\x01", 4096, 16, "42")
		require.NoError(t, err)
		epoch, _, _ := logAt(t, rdb, k.log)
		res, err := eval(t, rdb, "merge", tmp(k), scriptConfig, 8, 0, "\xff\xff\xff", 4096, 16, "42")
		require.NoError(t, err)
		assert.EqualValues(t, 23, res)
		assert.Equal(t, logOf("42", 0, ""), rdb.Get(ctx, k.log).Val(), "the log starts again, in a new epoch")
		assert.NotEqual(t, "000000000000042", epoch)
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
	t.Run("temporary key taken", func(t *testing.T) {
		k := shardOf(t, rdb, bits)
		require.NoError(t, rdb.Set(ctx, tmp(k)[3], "hello", 0).Err())
		_, err := eval(t, rdb, "merge", tmp(k), scriptConfig, 8, 0, "\xff", 4096, 16, "42")
		assertFails(t, err, redisfilter.ErrNotFilter, "merge")
		assert.ErrorContains(t, err, tmp(k)[3])
		assert.Equal(t, "hello", rdb.Get(ctx, tmp(k)[3]).Val())
		assert.Equal(t, bits, rdb.Get(ctx, k.bitmap).Val(), "the bitmap is unchanged")
	})
}

// TestScriptPush checks push.lua: the bits it sets, that it logs only
// those it changed, and that it sets nothing on a broken shard or for a bit
// past the bitmap's end.
func TestScriptPush(t *testing.T) {
	rdb := sharedClient(t)
	ctx := testContext(t)
	bits := "\x80\x00\x00\x00\x00\x00\x00\x01"
	keys := func(k scriptKeys) []string { return []string{k.cfg, k.bitmap, k.log} }
	t.Run("sets", func(t *testing.T) {
		k := shardOf(t, rdb, bits)
		res, err := eval(t, rdb, "push", keys(k), scriptConfig, 8, offsets(0, 9, 63, 9, 10), 4096, 4, "", 0, 0)
		require.NoError(t, err)
		epoch, _, _ := logAt(t, rdb, k.log)
		replid := replicationID(t, rdb)
		assert.Equal(t, []any{int64(2), replid, epoch, int64(8), offsets(10), "", "", int64(0)}, res,
			"bits 0 and 63 were set, and 9 is named twice; the log's end, and its last 4 bytes; the empty log held the pusher's empty checkpoint, and had no epoch")
		assert.Equal(t, "\x80\x60\x00\x00\x00\x00\x00\x01", rdb.Get(ctx, k.bitmap).Val())
		_, _, records := logAt(t, rdb, k.log)
		assert.Equal(t, offsets(9, 10), records, "the log has the bits changed")
		res, err = eval(t, rdb, "push", keys(k), scriptConfig, 8, offsets(10), 4096, 16, epoch, 8, 4)
		require.NoError(t, err)
		assert.Equal(t, []any{int64(0), replid, epoch, int64(8), offsets(9, 10), offsets(10), epoch, int64(8)}, res, "a push that changes nothing: the log as it is, and its bytes before the checkpoint")
		_, _, records = logAt(t, rdb, k.log)
		assert.Equal(t, offsets(9, 10), records, "logs nothing")
	})
	t.Run("checkpoint", func(t *testing.T) {
		// The bytes before the pusher's checkpoint as the log held them
		// before the push appended; none if the log does not hold the
		// checkpoint: shorter than it, of another epoch, or trimmed past.
		k := shardOf(t, rdb, bits)
		_, err := eval(t, rdb, "push", keys(k), scriptConfig, 8, offsets(1, 2), 4096, 4, "", 0, 0)
		require.NoError(t, err)
		epoch, _, _ := logAt(t, rdb, k.log)
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
		_, _, records := logAt(t, rdb, k.log)
		assert.Equal(t, offsets(offs...), records)
	})
	t.Run("past the end", func(t *testing.T) {
		k := shardOf(t, rdb, bits)
		_, err := eval(t, rdb, "push", keys(k), scriptConfig, 8, offsets(1, 64), 4096, 16, "", 0, 0)
		require.ErrorContains(t, err, "past the end")
		assert.Equal(t, bits, rdb.Get(ctx, k.bitmap).Val(), "nothing is set")
		assert.Zero(t, rdb.Exists(ctx, k.log).Val(), "nothing is logged")
	})
	for _, b := range breakers {
		t.Run(b.name, func(t *testing.T) {
			k := shardOf(t, rdb, bits)
			require.NoError(t, b.apply(ctx, rdb, k))
			before := rdb.Dump(ctx, k.bitmap).Val()
			_, err := eval(t, rdb, "push", keys(k), scriptConfig, 8, offsets(1), 4096, 16, "", 0, 0)
			assertFails(t, err, b.sentinel, "push")
			assert.Equal(t, before, rdb.Dump(ctx, k.bitmap).Val(), "the bitmap is unchanged")
			assert.Zero(t, rdb.Exists(ctx, k.log).Val(), "nothing is logged")
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
	plain := []string{k.cfg, k.bitmap, k.hold, k.log}
	res, err := eval(t, rdb, "inspect", plain, "bitmap")
	require.NoError(t, err)
	require.Len(t, res, 2)
	_, isString := res.([]any)[0].(string)
	assert.False(t, isString, "no config")
	assert.EqualValues(t, 0, res.([]any)[1])
	k = shardOf(t, rdb, "12345678")
	plain = []string{k.cfg, k.bitmap, k.hold, k.log}
	res, err = eval(t, rdb, "inspect", plain, "bitmap")
	require.NoError(t, err)
	assert.Equal(t, []any{scriptConfig, int64(8)}, res)
	window := []string{k.cfg, k.gens, k.hold}
	require.NoError(t, rdb.ZAdd(ctx, k.gens, redis.Z{Score: 0, Member: "mitzbloom/redisfilter"}, redis.Z{Score: 1, Member: "a"}, redis.Z{Score: 2, Member: "b"}).Err())
	res, err = eval(t, rdb, "inspect", window, "generations")
	require.NoError(t, err)
	assert.Equal(t, []any{scriptConfig, int64(2)}, res, "the generations recorded, without the record's mark")
	// Each key Open would write, holding what redisfilter did not write.
	for _, c := range []struct {
		key, value string
		keys       []string
		what       string
	}{
		{k.cfg, "", plain, "bitmap"},
		{k.bitmap, "", plain, "bitmap"},
		{k.hold, "hello", plain, "bitmap"},
		{k.hold, "", plain, "bitmap"},
		{k.log, "precious", plain, "bitmap"},
		{k.log, "", plain, "bitmap"},
		{k.gens, "", window, "generations"},
	} {
		before := rdb.Dump(ctx, c.key).Val()
		if c.key == k.gens {
			require.NoError(t, rdb.ZRem(ctx, k.gens, "mitzbloom/redisfilter").Err())
		} else {
			require.NoError(t, rdb.Set(ctx, c.key, c.value, 0).Err())
		}
		_, err := eval(t, rdb, "inspect", c.keys, c.what)
		assertFails(t, err, redisfilter.ErrNotFilter, c.key+" holds "+c.value)
		assert.ErrorContains(t, err, c.key)
		require.NoError(t, rdb.Del(ctx, c.key).Err())
		if before != "" {
			require.NoError(t, rdb.Restore(ctx, c.key, 0, before).Err(), c.key)
		}
	}
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
		keys := []string{k.cfg, data, k.hold, k.log}
		if what == "generations" {
			keys = keys[:3]
		}
		res, err := eval(t, rdb, "create", keys, found, scriptConfig, 8, foundLen, what, "42")
		require.NoError(t, err)
		return res.([]any)
	}
	t.Run("creates", func(t *testing.T) {
		k := newScriptKeys(t)
		assert.Equal(t, []any{int64(1), scriptConfig}, create(k, k.bitmap, "", 0, "create"))
		assert.Equal(t, scriptConfig, rdb.Get(ctx, k.cfg).Val())
		assert.Equal(t, "\x00\x00\x00\x00\x00\x00\x00\x00", rdb.Get(ctx, k.bitmap).Val())
		assert.Equal(t, logOf("42", 0, ""), rdb.Get(ctx, k.log).Val(), "the change log starts, so that Puts name no missing key")
		assert.Equal(t, "mitzbloom", rdb.Get(ctx, k.hold).Val())
	})
	t.Run("never overwrites a bitmap", func(t *testing.T) {
		k := newScriptKeys(t)
		require.NoError(t, rdb.Set(ctx, k.cfg, "old", 0).Err())
		require.NoError(t, rdb.Set(ctx, k.bitmap, "123", 0).Err())
		assert.Equal(t, []any{int64(0), "old"}, create(k, k.bitmap, "old", 0, "create"), "a bitmap there since Open looked")
		_, err := eval(t, rdb, "create", []string{k.cfg, k.bitmap, k.hold, k.log}, "old", scriptConfig, 8, 3, "create", "42")
		assertFails(t, err, redisfilter.ErrNotFilter, "create over a bitmap")
		require.NoError(t, rdb.Set(ctx, k.bitmap, "", 0).Err())
		_, err = eval(t, rdb, "create", []string{k.cfg, k.bitmap, k.hold, k.log}, "old", scriptConfig, 8, 0, "create", "42")
		assertFails(t, err, redisfilter.ErrNotFilter, "create over an empty string")
		assert.Equal(t, "", rdb.Get(ctx, k.bitmap).Val())
		assert.Equal(t, "old", rdb.Get(ctx, k.cfg).Val())
	})
	t.Run("keeps a shard and its log", func(t *testing.T) {
		k := newScriptKeys(t)
		require.NoError(t, rdb.Set(ctx, k.cfg, "old", 0).Err())
		require.NoError(t, rdb.Set(ctx, k.bitmap, "12345678", 0).Err())
		require.NoError(t, rdb.Set(ctx, k.log, logOf("123", 4, offsets(1, 2)), 0).Err())
		assert.EqualValues(t, 1, create(k, k.bitmap, "old", 8, "keep")[0])
		assert.Equal(t, "12345678", rdb.Get(ctx, k.bitmap).Val(), "a shard that survived keeps its bits")
		assert.Equal(t, logOf("123", 4, offsets(1, 2)), rdb.Get(ctx, k.log).Val(), "and its log")
		assert.Equal(t, scriptConfig, rdb.Get(ctx, k.cfg).Val())
	})
	t.Run("adopts", func(t *testing.T) {
		k := newScriptKeys(t)
		require.NoError(t, rdb.Set(ctx, k.bitmap, "12345678", 0).Err())
		assert.EqualValues(t, 1, create(k, k.bitmap, "", 8, "adopt")[0])
		assert.Equal(t, "12345678", rdb.Get(ctx, k.bitmap).Val(), "an adopted bitmap keeps its bits")
		assert.Equal(t, scriptConfig, rdb.Get(ctx, k.cfg).Val())
		assert.Equal(t, logOf("42", 0, ""), rdb.Get(ctx, k.log).Val(), "its log starts again")
	})
	t.Run("window", func(t *testing.T) {
		k := newScriptKeys(t)
		assert.EqualValues(t, 1, create(k, k.gens, "", 0, "generations")[0])
		assert.Equal(t, []string{"mitzbloom/redisfilter"}, rdb.ZRange(ctx, k.gens, 0, -1).Val(), "the record starts with its mark")
		require.NoError(t, rdb.ZAdd(ctx, k.gens, redis.Z{Score: 1, Member: "a"}).Err())
		assert.EqualValues(t, 1, create(k, k.gens, scriptConfig, 1, "generations")[0])
		assert.EqualValues(t, 2, rdb.ZCard(ctx, k.gens).Val(), "a window's record is left alone")
	})
	t.Run("config changed meanwhile", func(t *testing.T) {
		k := newScriptKeys(t)
		require.NoError(t, rdb.Set(ctx, k.cfg, "other", 0).Err())
		assert.Equal(t, []any{int64(0), "other"}, create(k, k.bitmap, "", 0, "create"), "a config written since Open looked")
		require.NoError(t, rdb.Set(ctx, k.cfg, "", 0).Err())
		assert.Equal(t, []any{int64(0), ""}, create(k, k.bitmap, "", 0, "create"), "an empty string is not a missing config")
		assert.Equal(t, "", rdb.Get(ctx, k.cfg).Val())
		assert.Zero(t, rdb.Exists(ctx, k.bitmap).Val())
	})
	t.Run("bitmap changed meanwhile", func(t *testing.T) {
		k := newScriptKeys(t)
		require.NoError(t, rdb.Set(ctx, k.bitmap, "12345678", 0).Err())
		assert.Equal(t, []any{int64(0), ""}, create(k, k.bitmap, "", 0, "create"), "a bitmap created since Open looked")
		assert.Equal(t, "12345678", rdb.Get(ctx, k.bitmap).Val())
		assert.Zero(t, rdb.Exists(ctx, k.cfg).Val())
	})
	// A key Open would write holding what redisfilter did not write.
	for _, key := range []string{"hold", "log"} {
		t.Run(key+" taken", func(t *testing.T) {
			k := newScriptKeys(t)
			at := map[string]string{"hold": k.hold, "log": k.log}[key]
			require.NoError(t, rdb.Set(ctx, at, "precious", 0).Err())
			_, err := eval(t, rdb, "create", []string{k.cfg, k.bitmap, k.hold, k.log}, "", scriptConfig, 8, 0, "create", "42")
			assertFails(t, err, redisfilter.ErrNotFilter, key)
			assert.ErrorContains(t, err, at)
			assert.Equal(t, "precious", rdb.Get(ctx, at).Val())
			assert.Equal(t, []string{at}, keysMatching(t, rdb, k.bitmap+"*"), "nothing is written")
		})
	}
}

// offsets returns the change log's records of bit offsets.
func offsets(offs ...uint32) string {
	var b []byte
	for _, o := range offs {
		b = binary.BigEndian.AppendUint32(b, o)
	}
	return string(b)
}

// TestScriptLog checks the change log: what guard.lua appends for a Put
// that it lets through, its trimming, and what changes.lua reads
// of it, from positions the log holds and from positions it does not, at
// a reader's checkpoint, and before the end of the read.
func TestScriptLog(t *testing.T) {
	rdb := sharedClient(t)
	ctx := testContext(t)
	k := shardOf(t, rdb, "\x00\x00\x00\x00\x00\x00\x00\x00")
	unguard := func(cap int, offs ...uint32) {
		t.Helper()
		_, err := eval(t, rdb, "guard", k.guard(), scriptConfig, 8, "token", offsets(offs...), cap, "clear")
		require.NoError(t, err)
	}
	keys := []string{k.cfg, k.bitmap, k.log}
	// changes reads from pos, with a checkpoint at check of nheld bytes, and
	// the 8 bytes before the end of the read, and the bitmap's first 2
	// bytes if ranged.
	read := func(ranged bool, epoch string, pos int64, most int, check int64, nheld int) []any {
		t.Helper()
		args := []any{scriptConfig, 8, epoch, pos, most, check, nheld, 8}
		plainArgs := []any{scriptConfig, int64(8), epoch, pos, most, check, nheld, 8}
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
	changes := func(epoch string, pos int64, most int, check int64, nheld int) []any {
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

	// Positions of 1e14 and more, which Lua's own conversion of numbers
	// to strings would write as 1e+14, are written in full.
	const far = 99_999_999_999_996
	require.NoError(t, rdb.Set(ctx, k.log, logOf("7", far, offsets(10, 11, 12)), 0).Err())
	unguard(8, 13)
	assert.Equal(t, logOf("7", far+12, offsets(13)), rdb.Get(ctx, k.log).Val(), "cut at 100,000,000,000,008")
	assert.Equal(t, []any{"000000000000007", int64(far + 12), int64(far + 16), offsets(13)}, changes("000000000000007", far+12, 1000, 0, 0)[1:5])

	require.NoError(t, rdb.Set(ctx, k.cfg, strings.Replace(scriptConfig, "bits=64", "bits=128", 1), 0).Err())
	_, err := eval(t, rdb, "changes", keys, scriptConfig, 8, epoch, 20, 1000, 20, 8, 8)
	assertFails(t, err, redisfilter.ErrMismatch, "changes of another filter")
}
