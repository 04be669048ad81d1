package redisfilter_test

import (
	"bytes"
	"context"
	"fmt"
	"math/rand/v2"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mitzbloom/mitzbloom/bloom"
	"github.com/mitzbloom/mitzbloom/bloom/bloomtest"
	"github.com/mitzbloom/mitzbloom/bloom/raw"
	"github.com/mitzbloom/mitzbloom/funnel"
	"github.com/mitzbloom/mitzbloom/redisfilter"
	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// shardBytes is the shard size of the tests' sharded filters: small, so
// that they have many shards.
const shardBytes = 64 << 10

// openSharded opens a sharded filter of strings for n values at p = 0.01.
func openSharded(ctx context.Context, t *testing.T, rdb redis.UniversalClient, name string, n int64, opts ...redisfilter.Option) *redisfilter.Filter[string] {
	t.Helper()
	f, err := redisfilter.Open(ctx, rdb, name, funnel.String, n, 0.01, append([]redisfilter.Option{redisfilter.WithShardBytes(shardBytes)}, opts...)...)
	require.NoError(t, err)
	t.Cleanup(func() { f.Delete(context.Background()) })
	return f
}

// openShardedWindow opens a window of two generations of a minute for n
// strings at p = 0.01 in shards of shardBytes, deleted at the end of the
// test, and returns it with its current generation.
func openShardedWindow(ctx context.Context, t *testing.T, rdb redis.UniversalClient, clock bloom.Clock, n, shardBytes int64) (*redisfilter.Windowed[string], int64) {
	t.Helper()
	w, err := redisfilter.OpenWindowed(ctx, rdb, filterName(t), funnel.String, n, 0.01, time.Minute, 2,
		redisfilter.WithClock(clock), redisfilter.WithShardBytes(shardBytes))
	require.NoError(t, err)
	t.Cleanup(func() { w.Delete(context.Background()) })
	return w, w.Generation(clock.Now())
}

// concatenated returns the values of keys, concatenated.
func concatenated(ctx context.Context, t *testing.T, rdb redis.UniversalClient, keys []string) []byte {
	t.Helper()
	var all []byte
	for _, key := range keys {
		b, err := rdb.Get(ctx, key).Bytes()
		require.NoError(t, err, key)
		all = append(all, b...)
	}
	return all
}

// TestShardedFleet is TestFleet on a filter of ten shards of 64 KiB: the
// shards concatenated equal, bit for bit, a local filter of all the keys.
func TestShardedFleet(t *testing.T) {
	eachServer(t, func(t *testing.T, rdb redis.UniversalClient) {
		const replicas = 8
		perReplica := 3000
		if testing.Short() {
			perReplica = 500
		}
		ctx := testContext(t)
		name := filterName(t)
		r := rand.New(rand.NewPCG(31, 32))
		all := randomStrings(r, replicas*perReplica)
		const n = 500_000 // 599,072 bytes: 10 shards
		local, err := bloom.New(funnel.String, n, 0.01)
		require.NoError(t, err)
		for _, v := range all {
			local.Put(v)
		}
		filters := make([]*redisfilter.Filter[string], replicas)
		var wg sync.WaitGroup
		for i := range filters {
			// Every replica opens the filter at once, as separate
			// processes starting together would.
			wg.Go(func() {
				f, err := redisfilter.Open(ctx, rdb, name, funnel.String, n, 0.01, redisfilter.WithShardBytes(shardBytes))
				assert.NoError(t, err)
				filters[i] = f
			})
		}
		wg.Wait()
		require.NotContains(t, filters, (*redisfilter.Filter[string])(nil))
		t.Cleanup(func() { filters[0].Delete(context.Background()) })
		require.Len(t, filters[0].Keys(), 10)
		cfg, err := rdb.Get(ctx, filters[0].ConfigKeys()[0]).Result()
		require.NoError(t, err)
		for _, key := range filters[0].ConfigKeys() {
			other, err := rdb.Get(ctx, key).Result()
			require.NoError(t, err)
			assert.Equal(t, cfg, other, "every shard has the config of one creation")
		}

		errs := make(chan error, replicas)
		for i, f := range filters {
			keys := all[i*perReplica : (i+1)*perReplica]
			wg.Go(func() { errs <- replica(ctx, f, keys) })
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			assert.NoError(t, err)
		}

		if !bytes.Equal(wordsOf(t, local), concatenated(ctx, t, rdb, filters[0].Keys())) {
			t.Fatal("the shards concatenated differ from a local filter of all the keys")
		}
		snap, err := filters[0].Snapshot(ctx)
		require.NoError(t, err)
		assert.True(t, snap.Equal(local), "Snapshot of the sharded filter")
		count, err := filters[0].BitCount(ctx)
		require.NoError(t, err)
		assert.Equal(t, local.BitCount(), count, "BitCount")
		found, err := filters[3].MightContainMany(ctx, nil, all)
		require.NoError(t, err)
		assert.NotContains(t, found, false, "false negatives")

		// Merge and a Hybrid work shard by shard as well.
		more := randomStrings(r, 2000, all)
		extra, err := bloom.New(funnel.String, n, 0.01)
		require.NoError(t, err)
		extra.PutMany(more)
		require.NoError(t, filters[1].Merge(ctx, extra))
		require.NoError(t, local.PutAll(extra))
		h, err := redisfilter.NewHybrid(ctx, filters[2])
		require.NoError(t, err)
		assert.True(t, h.Copy().Equal(local), "a Hybrid starts from the merged shards")
		h.Put("hybrid")
		local.Put("hybrid")
		require.NoError(t, h.Sync(ctx))
		assert.True(t, bytes.Equal(wordsOf(t, local), concatenated(ctx, t, rdb, filters[0].Keys())), "the shards after Merge and Sync")
	})
}

// touches reports whether v has a bit in shard s of f.
func touches(f *redisfilter.Filter[string], v string, s int) bool {
	h1, h2 := raw.Sum128(funnel.String, v)
	for _, i := range raw.AppendIndexes(nil, f.Strategy(), h1, h2, f.NumHashFunctions(), f.BitSize()) {
		if i/(shardBytes*8) == int64(s) {
			return true
		}
	}
	return false
}

// TestShardLost deletes one shard's bitmap, then its config: every call
// whose bits touch the shard is ErrLost, every other one answers, and Open
// refuses the filter until WithRecreate.
func TestShardLost(t *testing.T) {
	eachServer(t, func(t *testing.T, rdb redis.UniversalClient) {
		ctx := testContext(t)
		name := filterName(t)
		f := openSharded(ctx, t, rdb, name, 300_000) // 6 shards
		require.Len(t, f.Keys(), 6)
		values := randomStrings(rand.New(rand.NewPCG(33, 34)), 400)
		require.NoError(t, f.PutMany(ctx, values))
		const lostShard = 2
		var hit, missed []string
		for _, v := range values {
			if touches(f, v, lostShard) {
				hit = append(hit, v)
			} else {
				missed = append(missed, v)
			}
		}
		require.NotEmpty(t, hit)
		require.NotEmpty(t, missed)

		for _, lose := range []string{"bitmap", "config"} {
			t.Run(lose, func(t *testing.T) {
				key := f.Keys()[lostShard]
				if lose == "config" {
					key = f.ConfigKeys()[lostShard]
				}
				saved, err := rdb.Dump(ctx, key).Result()
				require.NoError(t, err)
				require.NoError(t, rdb.Del(ctx, key).Err())
				t.Cleanup(func() { rdb.RestoreReplace(context.Background(), key, 0, saved) })

				for _, v := range hit[:20] {
					_, err := f.MightContain(ctx, v)
					require.ErrorIs(t, err, redisfilter.ErrLost, "MightContain of a value with a bit in the lost shard")
					_, err = f.Put(ctx, v)
					require.ErrorIs(t, err, redisfilter.ErrLost, "Put of a value with a bit in the lost shard")
				}
				_, err = f.MightContainMany(ctx, nil, values)
				require.ErrorIs(t, err, redisfilter.ErrLost, "MightContainMany")
				require.ErrorIs(t, f.PutMany(ctx, hit), redisfilter.ErrLost, "PutMany")
				found, err := f.MightContainMany(ctx, nil, missed)
				require.NoError(t, err, "values without a bit in the lost shard")
				assert.NotContains(t, found, false)
				_, err = f.Snapshot(ctx)
				require.ErrorIs(t, err, redisfilter.ErrLost, "Snapshot")
				_, err = f.BitCount(ctx)
				require.ErrorIs(t, err, redisfilter.ErrLost, "BitCount")
				_, err = redisfilter.Open(ctx, rdb, name, funnel.String, 300_000, 0.01, redisfilter.WithShardBytes(shardBytes))
				require.ErrorIs(t, err, redisfilter.ErrLost, "Open")
				t.Log(err)
				if lose == "bitmap" {
					// The Puts' guard left no piece of a bitmap behind.
					n, err := rdb.Exists(ctx, key).Result()
					require.NoError(t, err)
					assert.Zero(t, n, "a Put re-created part of the lost bitmap")
				}
			})
		}

		// WithRecreate starts the lost shard again, and no other, and the
		// Filters of before get ErrLost, not empty answers.
		require.NoError(t, rdb.Del(ctx, f.Keys()[lostShard]).Err())
		again, err := redisfilter.Open(ctx, rdb, name, funnel.String, 300_000, 0.01, redisfilter.WithShardBytes(shardBytes), redisfilter.WithRecreate())
		require.NoError(t, err)
		_, err = f.MightContainMany(ctx, nil, missed)
		require.ErrorIs(t, err, redisfilter.ErrLost, "a Filter of the filter before it was re-created")
		found, err := again.MightContainMany(ctx, nil, missed)
		require.NoError(t, err)
		assert.NotContains(t, found, false, "a value with no bit in the lost shard")
		snap, err := again.Snapshot(ctx)
		require.NoError(t, err)
		assert.True(t, allZero(wordsOf(t, snap)[lostShard*shardBytes:][:shardBytes]), "the shard created again")
	})
}

// allZero reports whether every byte of b is 0.
func allZero(b []byte) bool {
	for _, x := range b {
		if x != 0 {
			return false
		}
	}
	return true
}

// TestShardMismatch gives one shard the config of a filter with other
// parameters: calls touching it, and Open, are ErrMismatch.
func TestShardMismatch(t *testing.T) {
	eachServer(t, func(t *testing.T, rdb redis.UniversalClient) {
		ctx := testContext(t)
		name := filterName(t)
		f := openSharded(ctx, t, rdb, name, 300_000)
		values := randomStrings(rand.New(rand.NewPCG(35, 36)), 300)
		require.NoError(t, f.PutMany(ctx, values))
		key := f.ConfigKeys()[1]
		cfg, err := rdb.Get(ctx, key).Result()
		require.NoError(t, err)
		other := strings.Replace(cfg, " k=7 ", " k=8 ", 1)
		require.NotEqual(t, cfg, other)
		require.NoError(t, rdb.Set(ctx, key, other, 0).Err())

		var hit []string
		for _, v := range values {
			if touches(f, v, 1) {
				hit = append(hit, v)
			}
		}
		require.NotEmpty(t, hit)
		_, err = f.MightContainMany(ctx, nil, hit)
		require.ErrorIs(t, err, redisfilter.ErrMismatch, "MightContainMany")
		require.ErrorIs(t, f.PutMany(ctx, hit), redisfilter.ErrMismatch, "PutMany")
		_, err = f.Snapshot(ctx)
		require.ErrorIs(t, err, redisfilter.ErrMismatch, "Snapshot")
		_, err = redisfilter.Open(ctx, rdb, name, funnel.String, 300_000, 0.01, redisfilter.WithShardBytes(shardBytes))
		require.ErrorIs(t, err, redisfilter.ErrMismatch, "Open")
		t.Log(err)
		// Opened with another shard size, the filter is another one.
		require.NoError(t, rdb.Set(ctx, key, cfg, 0).Err())
		_, err = redisfilter.Open(ctx, rdb, name, funnel.String, 300_000, 0.01, redisfilter.WithShardBytes(2*shardBytes))
		require.ErrorIs(t, err, redisfilter.ErrMismatch, "Open with another shard size")
	})
}

// TestShardSlots checks that the shards of a filter are in distinct slots,
// each with its config in its slot: for 19 shards, each in its own of 19
// equal ranges of slots, so that the cluster's 3 masters, which serve
// equal ranges, hold 5 to 7 each (a shard whose range straddles two masters
// may go to either); for 293, more than evenShards, distinct slots on every
// master.
func TestShardSlots(t *testing.T) {
	rdb := sharedCluster(t)
	ctx := testContext(t)
	for _, c := range []struct {
		shards     int
		shardBytes int64
	}{{19, shardBytes}, {293, 4096}} {
		t.Run(fmt.Sprint(c.shards), func(t *testing.T) {
			f := openSharded(ctx, t, rdb, filterName(t), 1_000_000, redisfilter.WithShardBytes(c.shardBytes))
			require.Len(t, f.Keys(), c.shards)
			slots := map[int64]bool{}
			perMaster := map[string]int{}
			var k0 int64 // the range of shard 0's slot
			for i, key := range f.Keys() {
				slot, err := rdb.ClusterKeySlot(ctx, key).Result()
				require.NoError(t, err)
				cfgSlot, err := rdb.ClusterKeySlot(ctx, f.ConfigKeys()[i]).Result()
				require.NoError(t, err)
				assert.Equal(t, slot, cfgSlot, "shard %d's config is in another slot", i)
				assert.False(t, slots[slot], "shard %d shares slot %d", i, slot)
				slots[slot] = true
				if c.shards == 19 {
					for i == 0 && slot >= (k0+1)*16384/19 {
						k0++
					}
					k := (k0 + int64(i)) % 19
					lo, hi := k*16384/19, (k+1)*16384/19
					assert.True(t, slot >= lo && slot < hi, "shard %d in slot %d, not in range %d, [%d, %d)", i, slot, k, lo, hi)
				}
				node, err := rdb.MasterForKey(ctx, key)
				require.NoError(t, err)
				perMaster[node.Options().Addr]++
			}
			t.Logf("%d shards in %d slots, per master %v", len(f.Keys()), len(slots), perMaster)
			require.Len(t, perMaster, 3, "shards on every master")
			if c.shards == 19 {
				for addr, n := range perMaster {
					assert.True(t, n >= 5 && n <= 7, "master %s holds %d of 19 shards", addr, n)
				}
			}
		})
	}
}

// TestShardedWindow runs a window of sharded generations.
func TestShardedWindow(t *testing.T) {
	eachServer(t, func(t *testing.T, rdb redis.UniversalClient) {
		ctx := testContext(t)
		clock := bloomtest.NewClock(time.Now())
		w, gen := openShardedWindow(ctx, t, rdb, clock, 300_000, shardBytes)
		require.Len(t, w.GenerationKeys(gen), 6)
		r := rand.New(rand.NewPCG(37, 38))
		first, second := randomStrings(r, 300), randomStrings(r, 300)
		require.NoError(t, w.PutMany(ctx, first))
		clock.Advance(time.Minute)
		require.NoError(t, w.PutMany(ctx, second))
		found, err := w.MightContainMany(ctx, nil, append(first, second...))
		require.NoError(t, err)
		assert.NotContains(t, found, false, "both generations")

		local, err := bloom.New(funnel.String, 300_000, 0.01)
		require.NoError(t, err)
		local.PutMany(first)
		snap, err := w.Snapshot(ctx, gen)
		require.NoError(t, err)
		assert.True(t, snap.Equal(local), "Snapshot of the first generation")

		// A generation shard lost before its expiry is ErrLost.
		require.NoError(t, rdb.Del(ctx, w.GenerationKeys(gen)[4]).Err())
		_, err = w.MightContainMany(ctx, nil, first)
		require.ErrorIs(t, err, redisfilter.ErrLost)
		clock.Advance(time.Minute)
		// Out of the window, the generation is no longer read.
		_, err = w.MightContainMany(ctx, nil, first)
		require.NoError(t, err, "once the generation left the window")
	})
}

// TestShardedOpenErrors checks the shard size Open takes.
func TestShardedOpenErrors(t *testing.T) {
	rdb := sharedClient(t)
	ctx := testContext(t)
	for _, n := range []int64{-8, 12, 513 << 20} {
		_, err := redisfilter.Open(ctx, rdb, filterName(t), funnel.String, 1000, 0.01, redisfilter.WithShardBytes(n))
		assert.ErrorIs(t, err, bloom.ErrInvalidArgument, fmt.Sprint(n))
	}
	// A shard size at least the filter's keeps it in one string, {name}.
	f, err := redisfilter.Open(ctx, rdb, filterName(t), funnel.String, 1000, 0.01, redisfilter.WithShardBytes(1<<20))
	require.NoError(t, err)
	t.Cleanup(func() { f.Delete(context.Background()) })
	assert.Equal(t, []string{"{" + filterName(t) + "}"}, f.Keys())
}

// TestReplicaReads reads a sharded filter through a cluster client created
// with ReadOnly: the BITFIELD_RO commands, counted by INFO commandstats on
// every node, all go to replicas, and the answers are right.
func TestReplicaReads(t *testing.T) {
	rdb := sharedCluster(t, func(o *redis.ClusterOptions) { o.ReadOnly = true })
	ctx := testContext(t)
	waitReplicas(ctx, t, rdb)
	var mu sync.Mutex // ForEachShard calls its function for the nodes at once
	f := openSharded(ctx, t, rdb, filterName(t), 300_000)
	values := randomStrings(rand.New(rand.NewPCG(39, 40)), 500)
	require.NoError(t, f.PutMany(ctx, values))
	// Replication is asynchronous: wait until every replica has the puts.
	replicated(ctx, t, rdb, 1)
	require.NoError(t, rdb.ForEachShard(ctx, func(ctx context.Context, node *redis.Client) error {
		return node.ConfigResetStat(ctx).Err()
	}))
	found, err := f.MightContainMany(ctx, nil, values)
	require.NoError(t, err)
	assert.NotContains(t, found, false, "a replica lacks values put")
	calls := map[string]int{}
	require.NoError(t, rdb.ForEachShard(ctx, func(ctx context.Context, node *redis.Client) error {
		info, err := node.Info(ctx, "commandstats", "replication").Result()
		if err != nil {
			return err
		}
		role := "replica"
		if strings.Contains(info, "role:master") {
			role = "master"
		}
		for line := range strings.Lines(info) {
			if rest, ok := strings.CutPrefix(line, "cmdstat_bitfield_ro:calls="); ok {
				var n int
				fmt.Sscan(strings.Split(rest, ",")[0], &n)
				mu.Lock()
				calls[role] += n
				mu.Unlock()
			}
		}
		return nil
	}))
	t.Logf("BITFIELD_RO calls: %v", calls)
	assert.Positive(t, calls["replica"], "no read reached a replica")
	assert.Zero(t, calls["master"], "reads reached masters")
}

// TestReadSteps reads a filter full enough that a value not put often has
// its first bit set, in batches of every size around the one from which a
// read is made in two steps, sharded and windowed, and compares every answer
// with local filters of the same puts.
func TestReadSteps(t *testing.T) {
	eachServer(t, func(t *testing.T, rdb redis.UniversalClient) {
		ctx := testContext(t)
		const n = 20_000 // 23,968 bytes: 6 shards of 4 KiB
		r := rand.New(rand.NewPCG(39, 40))
		values := randomStrings(r, n)
		probes := randomStrings(r, n, values)
		var mixed []string
		put := map[string]bool{}
		for i := range 2000 {
			mixed = append(mixed, values[i], probes[i])
			put[values[i]] = true
		}
		check := func(t *testing.T, read func([]string) ([]bool, error), want func(string) bool) {
			falsePositives := 0
			for _, size := range []int{1, 15, 16, 17, 1000, len(mixed)} {
				batch := mixed[:min(len(mixed), 20*size)]
				for start := 0; start < len(batch); start += size {
					vs := batch[start:min(len(batch), start+size)]
					got, err := read(vs)
					require.NoError(t, err)
					require.Len(t, got, len(vs))
					for i, v := range vs {
						require.Equal(t, want(v), got[i], "batches of %d: %q", size, v)
						if got[i] && !put[v] {
							falsePositives++
						}
					}
				}
			}
			assert.Positive(t, falsePositives, "no false positive: the filter is too empty to test much")
		}

		t.Run("filter", func(t *testing.T) {
			f, err := redisfilter.Open(ctx, rdb, filterName(t), funnel.String, n, 0.01, redisfilter.WithShardBytes(4096))
			require.NoError(t, err)
			t.Cleanup(func() { f.Delete(context.Background()) })
			require.Len(t, f.Keys(), 6)
			local, err := bloom.New(funnel.String, n, 0.01)
			require.NoError(t, err)
			local.PutMany(values)
			require.NoError(t, f.PutMany(ctx, values))
			check(t, func(vs []string) ([]bool, error) { return f.MightContainMany(ctx, nil, vs) }, local.MightContain)
		})

		t.Run("window", func(t *testing.T) {
			clock := bloomtest.NewClock(time.Now())
			w, _ := openShardedWindow(ctx, t, rdb, clock, n, 4096)
			older, err := bloom.New(funnel.String, n, 0.01)
			require.NoError(t, err)
			newer := older.Copy()
			half := len(values) / 2
			older.PutMany(values[:half])
			newer.PutMany(values[half:])
			require.NoError(t, w.PutMany(ctx, values[:half]))
			clock.Advance(time.Minute)
			require.NoError(t, w.PutMany(ctx, values[half:]))
			check(t, func(vs []string) ([]bool, error) { return w.MightContainMany(ctx, nil, vs) },
				func(v string) bool { return older.MightContain(v) || newer.MightContain(v) })
		})
	})
}
