package redisfilter_test

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
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

// waitTimeout is the WithWait timeout of the tests.
const waitTimeout = 200 * time.Millisecond

// masterWithReplica starts a server of the test's own with a replica, and
// waits until the replica has synced.
func masterWithReplica(t testing.TB) (master, replica *redistest.Server) {
	t.Helper()
	redistest.Require(t)
	master, err := redistest.Start(true)
	require.NoError(t, err)
	t.Cleanup(master.Stop)
	replica, err = redistest.Start(true, "--replicaof", "127.0.0.1", strconv.Itoa(master.Port()))
	require.NoError(t, err)
	t.Cleanup(replica.Stop)
	c := newClient(replica.Socket())
	defer c.Close()
	waitReplication(context.Background(), t, c, "master_link_status", "up")
	return master, replica
}

// waits is a go-redis hook that keeps the arguments of the WAIT commands
// that a client sends, as text.
type waits struct {
	mu   sync.Mutex
	args []string
}

func (h *waits) DialHook(next redis.DialHook) redis.DialHook { return next }

func (h *waits) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error { h.note(cmd); return next(ctx, cmd) }
}

func (h *waits) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error {
		for _, cmd := range cmds {
			h.note(cmd)
		}
		return next(ctx, cmds)
	}
}

func (h *waits) note(cmd redis.Cmder) {
	if cmd.Name() == "wait" {
		h.mu.Lock()
		h.args = append(h.args, fmt.Sprint(cmd.Args()[1:]...))
		h.mu.Unlock()
	}
}

// take returns the arguments kept since the last take.
func (h *waits) take() []string {
	h.mu.Lock()
	defer h.mu.Unlock()
	args := h.args
	h.args = nil
	return args
}

// TestWait checks WithWait with a real replica: writes return nil while the
// replica keeps up, and while it is stopped (SIGSTOP) they return an error
// wrapping ErrNotReplicated, having sent WAIT with the timeout of WithWait
// (which Redis keeps), with their bits set on the master.
func TestWait(t *testing.T) {
	master, replica := masterWithReplica(t)
	rdb := newClient(master.Addr())
	t.Cleanup(func() { rdb.Close() })
	sent := &waits{}
	rdb.AddHook(sent)
	ctx := testContext(t)
	for _, sharded := range []bool{false, true} {
		t.Run(fmt.Sprintf("sharded=%t", sharded), func(t *testing.T) {
			opts := []redisfilter.Option{redisfilter.WithWait(1, waitTimeout)}
			if sharded {
				opts = append(opts, redisfilter.WithShardBytes(shardBytes))
			}
			f, err := redisfilter.Open(ctx, rdb, filterName(t), funnel.String, 300_000, 0.01, opts...)
			require.NoError(t, err)
			h, err := redisfilter.NewHybrid(ctx, f)
			require.NoError(t, err)
			local, err := bloom.New(funnel.String, 300_000, 0.01)
			require.NoError(t, err)
			calls := map[string]func(v string) error{
				"Put":     func(v string) error { _, err := f.Put(ctx, v); return err },
				"PutMany": func(v string) error { return f.PutMany(ctx, []string{v, v + "'"}) },
				"Merge":   func(v string) error { local.Put(v); return f.Merge(ctx, local) },
				"Sync":    func(v string) error { h.Put(v); return h.Sync(ctx) },
			}
			for name, call := range calls {
				require.NoError(t, call(name+" running"), "%s with the replica running", name)
			}
			require.NoError(t, replica.Signal(syscall.SIGSTOP))
			sent.take()
			for name, call := range calls {
				err := call(name + " stopped")
				assert.ErrorIs(t, err, redisfilter.ErrNotReplicated, "%s with the replica stopped", name)
				args := sent.take()
				assert.NotEmpty(t, args, "%s sent no WAIT", name)
				for _, a := range args {
					assert.Equal(t, fmt.Sprint(1, waitTimeout.Milliseconds()), a, "%s: the arguments of WAIT", name)
				}
				ok, err := f.MightContain(ctx, name+" stopped")
				require.NoError(t, err)
				assert.True(t, ok, "%s set its bits on the master", name)
			}
			require.NoError(t, replica.Signal(syscall.SIGCONT))
			redistest.WaitFor(t, "a Put to be replicated after SIGCONT", time.Minute, func() (bool, error) {
				err := calls["Put"]("after")
				return err == nil, err
			})
			require.NoError(t, f.Delete(ctx))
		})
	}
	_, err := redisfilter.Open(ctx, rdb, filterName(t), funnel.String, 1000, 0.01, redisfilter.WithWait(0, time.Second))
	assert.ErrorIs(t, err, bloom.ErrInvalidArgument)
	_, err = redisfilter.Open(ctx, rdb, filterName(t), funnel.String, 1000, 0.01, redisfilter.WithWait(1, 0))
	assert.ErrorIs(t, err, bloom.ErrInvalidArgument)
}

// TestWaitFailover puts values under two filters of one master of a cluster
// of its own, one opened WithWait(1, …) and one without, stops the
// master's replica (SIGSTOP) and goes on putting for a second, then kills the
// master and lets the replica, a second behind, take over: every value
// whose put into the WithWait filter returned nil is there; of the other's,
// those of the last second are lost, though their puts returned nil.
func TestWaitFailover(t *testing.T) {
	cl, rdb := faultCluster(t)
	ctx := testContext(t)
	durable, err := redisfilter.Open(ctx, rdb, "durable", funnel.String, 1_000_000, 0.01, redisfilter.WithWait(1, waitTimeout))
	require.NoError(t, err)
	master, err := rdb.MasterForKey(ctx, durable.Keys()[0])
	require.NoError(t, err)
	var plain *redisfilter.Filter[string]
	for i := 0; plain == nil; i++ {
		name := "plain" + strconv.Itoa(i)
		node, err := rdb.MasterForKey(ctx, "{"+name+"}")
		require.NoError(t, err)
		if node.Options().Addr == master.Options().Addr {
			plain, err = redisfilter.Open(ctx, rdb, name, funnel.String, 1_000_000, 0.01)
			require.NoError(t, err)
		}
	}
	victim, replica := masterAndReplica(ctx, t, cl, master)

	acked := map[*redisfilter.Filter[string]][]string{}
	var untyped errorTally
	put := func(until time.Time) {
		for i := 0; time.Now().Before(until); i++ {
			for _, f := range []*redisfilter.Filter[string]{durable, plain} {
				batch := make([]string, 100)
				for j := range batch {
					batch[j] = fmt.Sprintf("%d-%d-%d", time.Now().UnixNano(), i, j)
				}
				cctx, cancel := context.WithTimeout(ctx, time.Second)
				err := f.PutMany(cctx, batch)
				untyped.note(err)
				if err == nil {
					acked[f] = append(acked[f], batch...)
				}
				cancel()
			}
		}
	}
	put(time.Now().Add(500 * time.Millisecond))
	before := len(acked[plain])
	require.NoError(t, replica.Signal(syscall.SIGSTOP))
	put(time.Now().Add(time.Second))
	t.Logf("acknowledged: %d WithWait, %d without (%d of them with the replica stopped)", len(acked[durable]), len(acked[plain]), len(acked[plain])-before)
	victim.Halt(syscall.SIGKILL)
	require.NoError(t, replica.Signal(syscall.SIGCONT))
	waitPromoted(ctx, t, replica)
	lost := map[*redisfilter.Filter[string]]int{}
	redistest.WaitFor(t, "reads to succeed after the promotion", 30*time.Second, func() (bool, error) {
		for _, f := range []*redisfilter.Filter[string]{durable, plain} {
			found, err := f.MightContainMany(ctx, nil, acked[f])
			if err != nil {
				return false, err
			}
			lost[f] = 0
			for _, ok := range found {
				if !ok {
					lost[f]++
				}
			}
		}
		return true, nil
	})
	t.Logf("lost after the failover: %d of %d WithWait, %d of %d without", lost[durable], len(acked[durable]), lost[plain], len(acked[plain]))
	assert.Zero(t, lost[durable], "values acknowledged WithWait were lost")
	assert.Positive(t, len(acked[durable]))
	untyped.check(t)
}

// masterAndReplica returns the server of cl that master is, and its
// replica.
func masterAndReplica(ctx context.Context, t *testing.T, cl *redistest.Cluster, master *redis.Client) (victim, replica *redistest.Server) {
	t.Helper()
	port := strings.TrimPrefix(master.Options().Addr, "127.0.0.1:")
	for _, n := range cl.Nodes {
		c := newClient(n.Socket())
		info, err := c.Info(ctx, "replication").Result()
		c.Close()
		require.NoError(t, err)
		if n.Addr() == master.Options().Addr {
			victim = n
		} else if strings.Contains(info, "role:slave") && strings.Contains(info, "master_port:"+port+"\r\n") {
			replica = n
		}
	}
	require.NotNil(t, victim)
	require.NotNil(t, replica, "no replica of the master")
	return victim, replica
}

// BenchmarkWait measures what WithWait(1, 1s) costs PutMany in keys/s, on a
// server of its own with a replica and on the shared cluster, batches of
// 256 new keys from 4 goroutines, beside the same puts without it.
func BenchmarkWait(b *testing.B) {
	master, _ := masterWithReplica(b)
	single := newClient(master.Addr())
	b.Cleanup(func() { single.Close() })
	for _, server := range []struct {
		name string
		rdb  func() redis.UniversalClient
	}{
		{"single", func() redis.UniversalClient { return single }},
		{"cluster", func() redis.UniversalClient {
			rdb := sharedCluster(b)
			waitReplicas(context.Background(), b, rdb)
			return rdb
		}},
	} {
		for _, wait := range []bool{false, true} {
			b.Run(fmt.Sprintf("%s/wait=%t", server.name, wait), func(b *testing.B) {
				ctx := context.Background()
				var opts []redisfilter.Option
				if wait {
					opts = append(opts, redisfilter.WithWait(1, time.Second))
				}
				f, err := redisfilter.Open(ctx, server.rdb(), filterName(b), funnel.String, 10_000_000, 0.01, opts...)
				require.NoError(b, err)
				b.Cleanup(func() { f.Delete(context.Background()) })
				var seq atomic.Int64
				b.SetParallelism(2) // 4 goroutines on 2 cores
				b.RunParallel(func(pb *testing.PB) {
					batch := make([]string, 256)
					for pb.Next() {
						for i := range batch {
							batch[i] = "k" + strconv.FormatInt(seq.Add(1), 10)
						}
						if err := f.PutMany(ctx, batch); err != nil {
							b.Error(err)
							return
						}
					}
				})
				reportKeys(b, b.N*256)
			})
		}
	}
}
