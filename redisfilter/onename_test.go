package redisfilter_test

import (
	"context"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mitzbloom/mitzbloom/funnel"
	"github.com/mitzbloom/mitzbloom/redisfilter"
	"github.com/mitzbloom/mitzbloom/strategy"
)

// A kind of filter under a name: its layout and parameters.
type filterKind struct {
	name string
	open func(ctx context.Context, rdb redis.UniversalClient, name string) (io filterIO, err error)
}

// filterIO is what the test does with a filter of any kind.
type filterIO struct {
	put    func(ctx context.Context, vs []string) error
	read   func(ctx context.Context, vs []string) ([]bool, error)
	delete func(ctx context.Context) error
}

func plainKind(name string, n int64, p float64, opts ...redisfilter.Option) filterKind {
	return filterKind{name, func(ctx context.Context, rdb redis.UniversalClient, fname string) (filterIO, error) {
		f, err := redisfilter.Open(ctx, rdb, fname, funnel.String, n, p, opts...)
		if err != nil {
			return filterIO{}, err
		}
		return filterIO{f.PutMany, func(ctx context.Context, vs []string) ([]bool, error) { return f.MightContainMany(ctx, nil, vs) }, f.Delete}, nil
	}}
}

// filterKinds are kinds of filter that each differ from every other in one
// parameter at least, in each of the three layouts: one string, sharded by
// WithShardBytes, and sharded automatically past 16 MiB.
var filterKinds = []filterKind{
	plainKind("one string", 10_000, 0.01),
	plainKind("one string, n", 20_000, 0.01),
	plainKind("one string, p", 10_000, 0.001),
	plainKind("one string, strategy", 10_000, 0.01, redisfilter.WithStrategy(strategy.Murmur128Mitz32)),
	plainKind("one string, legacy hash count", 3, 0.01, redisfilter.WithLegacyHashCount()),
	plainKind("one string, hash count", 3, 0.01),
	{"one string, funnel", func(ctx context.Context, rdb redis.UniversalClient, name string) (filterIO, error) {
		f, err := redisfilter.Open(ctx, rdb, name, funnel.UnencodedChars, 10_000, 0.01)
		if err != nil {
			return filterIO{}, err
		}
		return filterIO{f.PutMany, func(ctx context.Context, vs []string) ([]bool, error) { return f.MightContainMany(ctx, nil, vs) }, f.Delete}, nil
	}},
	plainKind("sharded", 10_000, 0.01, redisfilter.WithShardBytes(1024)),
	plainKind("sharded, shard size", 10_000, 0.01, redisfilter.WithShardBytes(2048)),
	plainKind("sharded automatically", 20_000_000, 0.01),
	{"window", func(ctx context.Context, rdb redis.UniversalClient, name string) (filterIO, error) {
		w, err := redisfilter.OpenWindowed(ctx, rdb, name, funnel.String, 10_000, 0.01, time.Hour, 2)
		if err != nil {
			return filterIO{}, err
		}
		return filterIO{w.PutMany, func(ctx context.Context, vs []string) ([]bool, error) { return w.MightContainMany(ctx, nil, vs) }, w.Delete}, nil
	}},
}

// TestOneNameOneFilter opens a name as every kind of filter and then as
// every other: the second Open gets ErrMismatch, in both orders, on a
// single server and on a cluster, and the first filter still answers for
// its puts. Before a name's config had one place whatever the layout, the
// second Open of another layout succeeded and read none of the first's
// puts.
func TestOneNameOneFilter(t *testing.T) {
	eachServer(t, func(t *testing.T, rdb redis.UniversalClient) {
		ctx := testContext(t)
		values := []string{"a", "b", "c", "d"}
		for i, first := range filterKinds {
			for j, second := range filterKinds {
				if i == j {
					continue
				}
				t.Run(first.name+" then "+second.name, func(t *testing.T) {
					name := filterName(t)
					f, err := first.open(ctx, rdb, name)
					require.NoError(t, err)
					t.Cleanup(func() { f.delete(context.Background()) })
					require.NoError(t, f.put(ctx, values))
					g, err := second.open(ctx, rdb, name)
					if !assert.ErrorIs(t, err, redisfilter.ErrMismatch) {
						if err == nil {
							found, rerr := g.read(ctx, values)
							t.Logf("the second filter read the first's puts as %v (%v)", found, rerr)
						}
						return
					}
					found, err := f.read(ctx, values)
					require.NoError(t, err)
					assert.NotContains(t, found, false)
				})
			}
		}
	})
}
