package redisfilter_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mitzbloom/mitzbloom/funnel"
	"github.com/mitzbloom/mitzbloom/redisfilter"
)

// TestForeignKeys puts a value that redisfilter did not write, of every
// type, at each key that Open of a plain filter, a sharded one (its first
// and last shards) and a window would write, before the filter exists: Open
// is refused with ErrNotFilter naming the key, the key is as it was, and no
// other key of the filter was written.
func TestForeignKeys(t *testing.T) {
	eachServer(t, func(t *testing.T, rdb redis.UniversalClient) {
		ctx := testContext(t)
		sharded := []redisfilter.Option{redisfilter.WithShardBytes(shardBytes)}
		kinds := []struct {
			name   string
			shards []int // the shards whose keys are tried
			// open opens the filter, and returns the keys of its shards
			// that Open writes.
			open func(name string) ([][]string, error)
		}{
			{"plain", []int{0}, func(name string) ([][]string, error) {
				f, err := redisfilter.Open(ctx, rdb, name, funnel.String, 1000, 0.01)
				return plainKeys(f), err
			}},
			{"sharded", []int{0, 5}, func(name string) ([][]string, error) {
				f, err := redisfilter.Open(ctx, rdb, name, funnel.String, 300_000, 0.01, sharded...)
				return plainKeys(f), err
			}},
			{"window", []int{0}, func(name string) ([][]string, error) {
				_, err := redisfilter.OpenWindowed(ctx, rdb, name, funnel.String, 1000, 0.01, time.Minute, 2)
				return [][]string{{"{" + name + "}:config", "{" + name + "}:generations", "{" + name + "}:hold"}}, err
			}},
		}
		for _, kind := range kinds {
			name := filterName(t) + "-" + kind.name
			all, err := kind.open(name)
			require.NoError(t, err)
			for _, shard := range all {
				for _, k := range shard {
					require.NoError(t, rdb.Del(ctx, k).Err())
				}
			}
			require.Empty(t, keysOf(t, rdb, name))
			for _, s := range kind.shards {
				for _, k := range all[s] {
					for _, typ := range []string{"string", "hash", "list", "set", "zset"} {
						if strings.HasSuffix(k, ":generations") && typ == "zset" {
							continue // what a window keeps there
						}
						foreignValue(ctx, t, rdb, k, typ)
						before, err := rdb.Dump(ctx, k).Result()
						require.NoError(t, err)
						_, err = kind.open(name)
						require.ErrorIs(t, err, redisfilter.ErrNotFilter, "%s at %s", typ, k)
						assert.ErrorContains(t, err, k, "the error names the key")
						after, err := rdb.Dump(ctx, k).Result()
						require.NoError(t, err)
						assert.Equal(t, before, after, "%s at %s changed", typ, k)
						assert.Equal(t, []string{k}, keysOf(t, rdb, name), "Open wrote keys before it refused %s at %s", typ, k)
						require.NoError(t, rdb.Del(ctx, k).Err())
					}
				}
			}
		}
	})
}

// plainKeys returns the keys of each shard of f that Open writes.
func plainKeys(f *redisfilter.Filter[string]) [][]string {
	if f == nil {
		return nil
	}
	var keys [][]string
	for _, key := range f.Keys() {
		keys = append(keys, []string{key + ":config", key, key + ":hold", key + ":changes", key + ":changes-state"})
	}
	return keys
}

// keysOf returns the keys of the filter called name.
func keysOf(t *testing.T, rdb redis.UniversalClient, name string) []string {
	return append(keysMatching(t, rdb, "{"+name+"}*"), keysMatching(t, rdb, "{"+name+"#*")...)
}

// foreignValue sets key to a value of type typ that redisfilter would not
// write: for a string, one of 5 bytes, which no key of a filter of 300,000
// values holds.
func foreignValue(ctx context.Context, t *testing.T, rdb redis.UniversalClient, key, typ string) {
	t.Helper()
	var err error
	switch typ {
	case "string":
		err = rdb.Set(ctx, key, "hello", 0).Err()
	case "hash":
		err = rdb.HSet(ctx, key, "a", "b").Err()
	case "list":
		err = rdb.RPush(ctx, key, "a").Err()
	case "set":
		err = rdb.SAdd(ctx, key, "a").Err()
	case "zset":
		err = rdb.ZAdd(ctx, key, redis.Z{Score: 1, Member: "a"}).Err()
	}
	require.NoError(t, err)
}
