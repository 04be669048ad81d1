package redisfilter_test

import (
	"context"
	"errors"
	"fmt"
	"math/bits"
	"math/rand/v2"
	"os"
	"os/exec"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mitzbloom/mitzbloom/bloom"
	"github.com/mitzbloom/mitzbloom/funnel"
	"github.com/mitzbloom/mitzbloom/internal/redistest"
	"github.com/mitzbloom/mitzbloom/redisfilter"
)

// An Open that finds a claim takes the creation over once it has seen the
// claim unchanged for claimLease. recoverWithin bounds how long an Open
// takes to finish or start over a creation that another abandoned: the
// lease, and the creation. These bounds are not of speed: an Open that
// waited for a creation nobody makes waits at least the lease, and one
// that never took over would wait for ever.
const (
	claimLease    = 5 * time.Second
	recoverWithin = 3 * claimLease
)

// cancelAfter is a go-redis hook that cancels a context when the client
// has sent n commands or pipelines, and optionally slows every one down.
type cancelAfter struct {
	n      int64
	cancel context.CancelFunc
	sent   atomic.Int64
	delay  time.Duration
}

func (h *cancelAfter) DialHook(next redis.DialHook) redis.DialHook { return next }

func (h *cancelAfter) count() {
	if h.sent.Add(1) == h.n {
		h.cancel()
	}
	// A slow client, whose every command takes delay longer: a duration
	// is what it stands for.
	time.Sleep(h.delay)
}

func (h *cancelAfter) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error { h.count(); return next(ctx, cmd) }
}

func (h *cancelAfter) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error { h.count(); return next(ctx, cmds) }
}

// assertUsable checks that the filter called name opens, within
// recoverWithin, and is complete: puts are read back, by this Filter and by
// another.
func assertUsable(ctx context.Context, t *testing.T, rdb redis.UniversalClient, name string, n int64, opts ...redisfilter.Option) {
	t.Helper()
	start := time.Now()
	f, err := redisfilter.Open(ctx, rdb, name, funnel.String, n, 0.01, opts...)
	took := time.Since(start)
	require.NoError(t, err, "the next Open")
	assert.Less(t, took, recoverWithin, "the next Open took %v", took)
	values := randomStrings(rand.New(rand.NewPCG(uint64(len(name)), 41)), 200)
	require.NoError(t, f.PutMany(ctx, values))
	g, err := redisfilter.Open(ctx, rdb, name, funnel.String, n, 0.01, opts...)
	require.NoError(t, err)
	found, err := g.MightContainMany(ctx, nil, values)
	require.NoError(t, err)
	assert.NotContains(t, found, false)
	_, err = g.Snapshot(ctx)
	require.NoError(t, err)
}

// TestOpenCancelled cancels an Open that creates a filter of four shards
// after each of the commands it sends in turn: every cancelled Open returns
// an error wrapping context.Canceled, and the next Open, not cancelled,
// finishes the creation or starts it over, within recoverWithin, never
// waiting for a creation nobody is making nor failing with an untyped
// error, as it did when a creation could be left half done.
func TestOpenCancelled(t *testing.T) {
	eachServer(t, func(t *testing.T, shared redis.UniversalClient) {
		ctx := testContext(t)
		for n := int64(1); ; n++ {
			name := fmt.Sprintf("%s.%d", filterName(t), n)
			cctx, cancel := context.WithCancel(ctx)
			hook := &cancelAfter{n: n, cancel: cancel}
			var rdb redis.UniversalClient
			switch s := shared.(type) {
			case *redis.ClusterClient:
				cl := newClusterClient(s.Options().Addrs)
				cl.OnNewNode(func(node *redis.Client) { node.AddHook(hook) })
				cl.AddHook(hook)
				rdb = cl
			case *redis.Client:
				c := newClient(s.Options().Addr)
				c.AddHook(hook)
				rdb = c
			}
			_, err := redisfilter.Open(cctx, rdb, name, funnel.String, 4000, 0.01, redisfilter.WithShardBytes(1200))
			cancel()
			rdb.Close()
			if err == nil {
				t.Logf("Open sent %d commands or pipelines", hook.sent.Load())
				require.Greater(t, n, int64(5), "Open was never cancelled")
				return
			}
			require.ErrorIs(t, err, context.Canceled, "after %d commands", n)
			assertUsable(ctx, t, shared, name, 4000, redisfilter.WithShardBytes(1200))
		}
	})
}

// TestOpenCreatorKilled kills, with SIGKILL, a process in the middle of
// creating a filter of many shards: the next Open takes its creation over
// once its claim expires, and finishes it.
func TestOpenCreatorKilled(t *testing.T) {
	eachServer(t, func(t *testing.T, rdb redis.UniversalClient) {
		ctx := testContext(t)
		name := filterName(t)
		addrs := ""
		switch s := rdb.(type) {
		case *redis.ClusterClient:
			addrs = "cluster=" + strings.Join(s.Options().Addrs, ",")
		case *redis.Client:
			addrs = "single=" + s.Options().Addr
		}
		cmd := exec.Command(os.Args[0], "-test.run=^TestCreatorProcess$")
		cmd.Env = append(os.Environ(), creatorEnv+"="+addrs+" "+name)
		require.NoError(t, cmd.Start())
		done := make(chan error, 1)
		go func() { done <- cmd.Wait() }()
		t.Cleanup(func() { cmd.Process.Kill() })
		// Kill it once it has claimed the filter and created a shard.
		first := "{" + name + "}:config"
		redistest.WaitFor(t, "the creator to claim the filter and make shards", 30*time.Second, func() (bool, error) {
			select {
			case err := <-done:
				t.Fatalf("the creator ended before it was killed: %v", err)
			default:
			}
			claim, err := rdb.Get(ctx, first).Result()
			return strings.HasPrefix(claim, "creating ") && len(keysMatching(t, rdb, "{"+name+"#*}:config")) > 2, err
		})
		require.NoError(t, cmd.Process.Kill())
		<-done
		assertUsable(ctx, t, rdb, name, creatorValues, redisfilter.WithShardBytes(creatorShardBytes))
	})
}

const (
	creatorEnv        = "MITZBLOOM_TEST_CREATOR"
	creatorValues     = 200_000
	creatorShardBytes = 4096
)

// TestCreatorProcess is the process TestOpenCreatorKilled kills: it creates
// a filter of 59 shards, slowly.
func TestCreatorProcess(t *testing.T) {
	spec := os.Getenv(creatorEnv)
	if spec == "" {
		t.Skip("run by TestOpenCreatorKilled")
	}
	addrs, name, _ := strings.Cut(spec, " ")
	kind, list, _ := strings.Cut(addrs, "=")
	slow := &cancelAfter{cancel: func() {}, delay: 100 * time.Millisecond}
	var rdb redis.UniversalClient
	if kind == "cluster" {
		cl := newClusterClient(strings.Split(list, ","))
		cl.OnNewNode(func(node *redis.Client) { node.AddHook(slow) })
		rdb = cl
	} else {
		c := newClient(list)
		c.AddHook(slow)
		rdb = c
	}
	_, err := redisfilter.Open(context.Background(), rdb, name, funnel.String, creatorValues, 0.01, redisfilter.WithShardBytes(creatorShardBytes))
	t.Fatalf("the creator was not killed: Open returned %v", err)
}

// TestLostFirstShard removes the first shard of a filter of several, as a
// master that restarted without persistence loses it: Open says the filter
// is lost and that WithRecreate starts it again, rather than waiting for a
// creation that is not happening and failing with an untyped error; with
// WithRecreate it opens, the first shard empty and the others with their
// bits.
func TestLostFirstShard(t *testing.T) {
	eachServer(t, func(t *testing.T, rdb redis.UniversalClient) {
		ctx := testContext(t)
		name := filterName(t)
		f := openSharded(ctx, t, rdb, name, 300_000)
		require.NoError(t, f.PutMany(ctx, []string{"a", "b"}))
		require.NoError(t, rdb.Del(ctx, "{"+name+"}", "{"+name+"}:config", "{"+name+"}:hold").Err())

		start := time.Now()
		_, err := redisfilter.Open(ctx, rdb, name, funnel.String, 300_000, 0.01, redisfilter.WithShardBytes(shardBytes))
		require.ErrorIs(t, err, redisfilter.ErrLost)
		assert.ErrorContains(t, err, "WithRecreate")
		assert.Less(t, time.Since(start), claimLease, "Open waited for a creation")
		_, err = f.Snapshot(ctx)
		assert.ErrorIs(t, err, redisfilter.ErrLost)

		g, err := redisfilter.Open(ctx, rdb, name, funnel.String, 300_000, 0.01, redisfilter.WithShardBytes(shardBytes), redisfilter.WithRecreate())
		require.NoError(t, err)
		n, err := g.BitCount(ctx)
		require.NoError(t, err)
		var want int
		for _, b := range wordsOf(t, mustLocal(t, 300_000, "a", "b"))[shardBytes:] {
			want += bits.OnesCount8(b)
		}
		require.Positive(t, want)
		assert.EqualValues(t, want, n, "the bits of the shards that survived")
		_, err = f.Snapshot(ctx)
		assert.ErrorIs(t, err, redisfilter.ErrLost, "a Filter of the lost filter")
	})
}

// TestTypedNilClient checks that a nil *redis.Client or *redis.ClusterClient
// is an argument error, not a panic.
func TestTypedNilClient(t *testing.T) {
	ctx := context.Background()
	for _, rdb := range []redis.UniversalClient{(*redis.Client)(nil), (*redis.ClusterClient)(nil), nil} {
		_, err := redisfilter.Open(ctx, rdb, "x", funnel.String, 100, 0.01)
		assert.True(t, errors.Is(err, bloom.ErrInvalidArgument), "%T: %v", rdb, err)
		_, err = redisfilter.OpenWindowed(ctx, rdb, "x", funnel.String, 100, 0.01, time.Hour, 2)
		assert.True(t, errors.Is(err, bloom.ErrInvalidArgument), "%T: %v", rdb, err)
	}
}
