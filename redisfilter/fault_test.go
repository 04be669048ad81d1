package redisfilter_test

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"net"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/mitzbloom/mitzbloom/bloom"
	"github.com/mitzbloom/mitzbloom/funnel"
	"github.com/mitzbloom/mitzbloom/internal/redistest"
	"github.com/mitzbloom/mitzbloom/redisfilter"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The fault tests run their own redis-server, which they kill, freeze and
// restart. A call must end at its context's deadline, never hang: the
// clients of the servers they freeze have no timeouts of their own, so
// that a call that did not end at its deadline would never end, and a call
// that has not returned hangAfter past its deadline is taken to hang. That
// is generous, since the machine may be busy: the point is that calls end,
// not how fast.
const (
	callTimeout = 300 * time.Millisecond
	hangAfter   = time.Minute
)

// noTimeouts makes a client wait for a reply as long as its context lets
// it.
func noTimeouts(o *redis.Options) { o.ReadTimeout, o.WriteTimeout = -1, -1 }

// returns calls call and returns what it returns, and fails t if call has
// not returned hangAfter past callTimeout.
func returns[T any](t *testing.T, call func() (T, error)) (T, error) {
	t.Helper()
	return redistest.Returns(t, callTimeout+hangAfter, call)
}

// sentinels are the errors of the package: every error of a call wraps one
// of them, but for the caller's cancellation of its context.
var sentinels = []error{
	redisfilter.ErrMismatch, redisfilter.ErrLost, redisfilter.ErrEvictable, redisfilter.ErrNotFilter,
	redisfilter.ErrOutOfMemory, redisfilter.ErrNoPermission, redisfilter.ErrTryAgain, redisfilter.ErrNotReplicated,
	redisfilter.ErrUnavailable, redisfilter.ErrClosed,
}

// An errorTally counts the errors of calls that wrap none of the package's
// sentinels, and keeps a few for the failure's message.
type errorTally struct {
	mu      sync.Mutex
	n       int
	samples []string
}

// note counts err if it is not nil and wraps none of sentinels.
func (e *errorTally) note(err error) {
	if err == nil || slices.ContainsFunc(sentinels, func(s error) bool { return errors.Is(err, s) }) {
		return
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	e.n++
	if len(e.samples) < 5 {
		e.samples = append(e.samples, err.Error())
	}
}

// check fails t if an error counted.
func (e *errorTally) check(t *testing.T) {
	t.Helper()
	e.mu.Lock()
	defer e.mu.Unlock()
	assert.Zero(t, e.n, "errors that wrap none of the package's sentinels, such as %q", e.samples)
}

// faultCluster starts a cluster of the test's own, 3 masters with a replica
// each, and returns it with a client, both stopped when t ends, once every
// master's replica is online.
func faultCluster(t *testing.T, opts ...func(*redis.ClusterOptions)) (*redistest.Cluster, *redis.ClusterClient) {
	t.Helper()
	cl := redistest.NewCluster(t, 3, 1)
	rdb := newClusterClient(cl.Addrs(), opts...)
	t.Cleanup(func() { rdb.Close() })
	waitReplicas(testContext(t), t, rdb)
	return cl, rdb
}

// load runs goroutines that call f in a loop, each call with its own
// deadline, until finish. phase tells what the server is doing: calls made
// while it is down must fail, and every call must end in time.
type load struct {
	f     *redisfilter.Filter[string]
	phase atomic.Int32 // one of the phase constants
	stop  chan struct{}
	wg    sync.WaitGroup

	mu      sync.Mutex
	put     []string // values whose Put or PutMany returned nil
	okDown  int      // calls that succeeded although the server was down all along
	late    []string // calls that returned hangAfter past their deadline
	oks     map[int32]int
	errs    map[int32]int
	samples []string // errors outside phaseDown, to log
	untyped errorTally
	// unavailable counts the errors of calls made while the server was
	// down all along that wrap ErrUnavailable and the network's error.
	unavailable int
}

const (
	phaseUp int32 = iota
	phaseDown
	phaseRestarting // the server may or may not answer yet
	phaseRestarted
)

func startLoad(f *redisfilter.Filter[string], goroutines int) *load {
	l := &load{f: f, stop: make(chan struct{}), errs: map[int32]int{}, oks: map[int32]int{}}
	for g := range goroutines {
		l.wg.Go(func() { l.run(g) })
	}
	return l
}

func (l *load) run(g int) {
	r := rand.New(rand.NewPCG(uint64(g), 21))
	for i := 0; ; i++ {
		select {
		case <-l.stop:
			return
		default:
		}
		phase := l.phase.Load()
		ctx, cancel := context.WithTimeout(context.Background(), callTimeout)
		start := time.Now()
		var (
			err error
			put []string
		)
		switch i % 5 {
		case 0:
			v := fmt.Sprintf("g%d-%d", g, i)
			if _, err = l.f.Put(ctx, v); err == nil {
				put = []string{v}
			}
		case 1:
			batch := make([]string, 64)
			for j := range batch {
				batch[j] = fmt.Sprintf("g%d-%d-%d", g, i, j)
			}
			if err = l.f.PutMany(ctx, batch); err == nil {
				put = batch
			}
		case 2:
			_, err = l.f.MightContain(ctx, fmt.Sprintf("g%d-%d", g, r.IntN(i+1)))
		case 3:
			_, err = l.f.MightContainMany(ctx, nil, []string{"a", "b", "c"})
		case 4:
			_, err = l.f.Snapshot(ctx)
		}
		elapsed := time.Since(start)
		downThroughout := phase == phaseDown && l.phase.Load() == phaseDown
		cancel()
		l.mu.Lock()
		l.put = append(l.put, put...)
		if elapsed > callTimeout+hangAfter {
			l.late = append(l.late, fmt.Sprintf("call %d took %v (err %v)", i%5, elapsed, err))
		}
		l.untyped.note(err)
		var nerr *net.OpError
		if downThroughout && errors.Is(err, redisfilter.ErrUnavailable) && errors.As(err, &nerr) {
			l.unavailable++
		}
		if err != nil {
			l.errs[phase]++
			if phase != phaseDown && len(l.samples) < 10 {
				l.samples = append(l.samples, fmt.Sprintf("phase %d call %d after %v: %v", phase, i%5, elapsed, err))
			}
		} else {
			l.oks[phase]++
			if downThroughout {
				l.okDown++
			}
		}
		l.mu.Unlock()
		if err != nil {
			// Do not spin: a refused connection fails at once. A pause
			// of the load's own, not a wait for anything.
			time.Sleep(5 * time.Millisecond)
		}
	}
}

// finish stops the load, and fails t if a call it made does not return.
func (l *load) finish(t *testing.T) {
	t.Helper()
	close(l.stop)
	returns(t, func() (struct{}, error) { l.wg.Wait(); return struct{}{}, nil })
}

// waitCalls waits, for a bounded time, until n more calls of the given
// outcome than before have been made in phase.
func (l *load) waitCalls(t *testing.T, phase int32, failed bool, n int) {
	t.Helper()
	count := func() int {
		l.mu.Lock()
		defer l.mu.Unlock()
		if failed {
			return l.errs[phase]
		}
		return l.oks[phase]
	}
	want := count() + n
	redistest.WaitFor(t, fmt.Sprintf("%d calls with failed=%t in phase %d", n, failed, phase), 30*time.Second, func() (bool, error) {
		return count() >= want, nil
	})
}

// TestFaultServerKilled kills the server under 8 goroutines of calls: every
// call made while it is down fails within its deadline, nothing hangs or
// panics; once it is restarted, calls succeed again, and every value whose
// Put succeeded is there, since the server syncs its append-only file on
// every write.
func TestFaultServerKilled(t *testing.T) {
	srv := redistest.New(t, "--appendonly", "yes", "--appendfsync", "always")
	rdb := newClient(srv.Addr(), noTimeouts)
	t.Cleanup(func() { rdb.Close() })
	ctx := testContext(t)
	f, err := redisfilter.Open(ctx, rdb, "faults", funnel.String, 100000, 0.01)
	require.NoError(t, err)

	l := startLoad(f, 8)
	l.waitCalls(t, phaseUp, false, 50)
	srv.Halt(syscall.SIGKILL)
	l.phase.Store(phaseDown)
	l.waitCalls(t, phaseDown, true, 50)
	l.phase.Store(phaseRestarting)
	require.NoError(t, srv.Restart())
	l.phase.Store(phaseRestarted)
	l.waitCalls(t, phaseRestarted, false, 100)
	l.finish(t)

	t.Logf("calls up %d ok/%d failed, down %d failed, restarted %d ok/%d failed",
		l.oks[phaseUp], l.errs[phaseUp], l.errs[phaseDown], l.oks[phaseRestarted], l.errs[phaseRestarted])
	for _, s := range l.samples {
		t.Log(s)
	}
	assert.Zero(t, l.okDown, "calls succeeded while the server was down")
	assert.Empty(t, l.late, "calls hung past their deadline")
	l.untyped.check(t)
	assert.Positive(t, l.unavailable, "no call made while the server was down said it was unavailable, with the network's error")

	// Back to normal: every kind of call succeeds.
	_, err = f.Put(ctx, "after")
	require.NoError(t, err)
	require.NoError(t, f.PutMany(ctx, []string{"after1", "after2"}))
	_, err = f.Snapshot(ctx)
	require.NoError(t, err)
	found, err := f.MightContainMany(ctx, nil, l.put)
	require.NoError(t, err)
	missing := 0
	for _, ok := range found {
		if !ok {
			missing++
		}
	}
	assert.Zero(t, missing, "of %d values put successfully, %d are missing after the restart", len(l.put), missing)
}

// TestFaultServerFrozen stops the server process (SIGSTOP), so that it
// accepts connections and requests but never answers: every call must give
// up at its deadline, with an error that says so, on a client that would
// otherwise wait for ever. After SIGCONT calls succeed, and answer
// correctly: no reply to an abandoned request is taken for another's.
func TestFaultServerFrozen(t *testing.T) {
	srv := redistest.New(t)
	rdb := newClient(srv.Addr(), noTimeouts)
	t.Cleanup(func() { rdb.Close() })
	ctx := testContext(t)
	f, err := redisfilter.Open(ctx, rdb, "frozen", funnel.String, 10000, 0.01)
	require.NoError(t, err)
	values := randomStrings(rand.New(rand.NewPCG(22, 23)), 1000)
	require.NoError(t, f.PutMany(ctx, values[:500]))

	require.NoError(t, srv.Signal(syscall.SIGSTOP))
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for g := range 8 {
		wg.Go(func() {
			cctx, cancel := context.WithTimeout(context.Background(), callTimeout)
			defer cancel()
			var err error
			if g%2 == 0 {
				_, err = f.Put(cctx, values[500+g])
			} else {
				_, err = f.MightContainMany(cctx, nil, values[:10])
			}
			switch {
			case err == nil:
				err = errors.New("call succeeded against a frozen server")
			case !errors.Is(err, context.DeadlineExceeded) || !errors.Is(err, redisfilter.ErrUnavailable):
				err = fmt.Errorf("the error does not wrap context.DeadlineExceeded and ErrUnavailable: %w", err)
			default:
				t.Logf("goroutine %d: %v", g, err)
				err = nil
			}
			errs <- err
		})
	}
	returns(t, func() (struct{}, error) { wg.Wait(); return struct{}{}, nil })
	close(errs)
	for err := range errs {
		assert.NoError(t, err)
	}

	require.NoError(t, srv.Signal(syscall.SIGCONT))
	// The Puts that timed out may or may not have run: put them again.
	require.NoError(t, f.PutMany(ctx, values[500:508]))
	local, err := bloom.New(funnel.String, 10000, 0.01)
	require.NoError(t, err)
	for _, v := range values[:508] {
		local.Put(v)
	}
	for i := 0; i < 20; i++ {
		found, err := f.MightContainMany(ctx, nil, values)
		require.NoError(t, err)
		for j, ok := range found {
			require.Equal(t, local.MightContain(values[j]), ok, "answer for %q after the freeze", values[j])
		}
	}
	snap, err := f.Snapshot(ctx)
	require.NoError(t, err)
	assert.True(t, snap.Equal(local))
}

// TestFaultRestartWithoutPersistence restarts a server that keeps nothing:
// the filter is gone, calls say so, and a Hybrid's next Sync re-creates it
// from its local copy.
func TestFaultRestartWithoutPersistence(t *testing.T) {
	srv := redistest.New(t)
	rdb := newClient(srv.Addr())
	t.Cleanup(func() { rdb.Close() })
	ctx := testContext(t)
	f, err := redisfilter.Open(ctx, rdb, "lost", funnel.String, 1000, 0.01)
	require.NoError(t, err)
	h, err := redisfilter.NewHybrid(ctx, f)
	require.NoError(t, err)
	values := randomStrings(rand.New(rand.NewPCG(24, 25)), 100)
	for _, v := range values {
		h.Put(v)
	}
	require.NoError(t, h.Sync(ctx))

	srv.Halt(syscall.SIGTERM)
	require.NoError(t, srv.Restart())
	// The pool's connections died with the server; go-redis replaces them.
	_, err = f.Put(ctx, "x")
	require.ErrorIs(t, err, redisfilter.ErrLost)
	_, err = f.Snapshot(ctx)
	require.ErrorIs(t, err, redisfilter.ErrLost)

	require.NoError(t, h.Sync(ctx))
	_, err = f.MightContainMany(ctx, nil, values)
	require.ErrorIs(t, err, redisfilter.ErrLost, "a Filter opened before the loss")
	f, err = redisfilter.Open(ctx, rdb, "lost", funnel.String, 1000, 0.01)
	require.NoError(t, err)
	found, err := f.MightContainMany(ctx, nil, values)
	require.NoError(t, err)
	assert.NotContains(t, found, false, "the Hybrid did not restore its values")
}

// TestFaultFailover kills the master of a filter's slot in a cluster of
// its own (3 masters with a replica each, cluster-node-timeout 1 s), with
// a client of go-redis's default options but for ContextTimeoutEnabled and
// no periodic reload of the slot map: calls fail with an error at their
// deadline while no master serves the slot, never answer false for a value
// put and replicated before (WAIT), and succeed again after the replica is
// promoted, which they can only because the filter asks for the slot map
// on errors. It logs how long that took.
func TestFaultFailover(t *testing.T) {
	// go-redis reloads a slot map older than a minute on its own, which
	// would hide a filter that never asks.
	cl, rdb := faultCluster(t, func(o *redis.ClusterOptions) { o.ClusterStateReloadInterval = time.Hour })
	ctx := testContext(t)
	f, err := redisfilter.Open(ctx, rdb, "failover", funnel.String, 10_000, 0.01)
	require.NoError(t, err)
	values := make([]string, 1000)
	for i := range values {
		values[i] = "v" + strconv.Itoa(i)
	}
	require.NoError(t, f.PutMany(ctx, values))
	master, err := rdb.MasterForKey(ctx, f.Keys()[0])
	require.NoError(t, err)
	// Replication is asynchronous: only writes a replica acknowledged
	// survive the master's death. A replica still in its first sync
	// acknowledges late: WAIT a second at a time, under the client's read
	// timeout, for up to 20 s.
	acked := 0
	for try := 0; acked < 1 && try < 20; try++ {
		acked, err = master.Do(ctx, "WAIT", 1, 1000).Int()
		require.NoError(t, err)
	}
	require.Equal(t, 1, acked, "the replica did not acknowledge the puts")

	victim, replica := masterAndReplica(ctx, t, cl, master)
	replicaClient := newClient(replica.Socket())
	t.Cleanup(func() { replicaClient.Close() })

	var untyped errorTally
	killed := time.Now()
	victim.Halt(syscall.SIGKILL)
	var promoted, firstFailure, recovered time.Time
	failures := 0
	redistest.WaitFor(t, "calls to fail and then succeed again after the kill", time.Minute, func() (bool, error) {
		if promoted.IsZero() {
			if role, err := replication(ctx, replicaClient, "role"); err == nil && role == "master" {
				promoted = time.Now()
			}
		}
		callCtx, cancel := context.WithTimeout(ctx, callTimeout)
		found, err := returns(t, func() ([]bool, error) { return f.MightContainMany(callCtx, nil, values) })
		cancel()
		untyped.note(err)
		if err != nil {
			if firstFailure.IsZero() {
				firstFailure = time.Now()
				t.Logf("first error: %v", err)
			}
			failures++
			assert.Nil(t, found)
			return false, err
		}
		assert.NotContains(t, found, false, "a value put and replicated before the failover answered false")
		if !firstFailure.IsZero() {
			recovered = time.Now()
		}
		return !recovered.IsZero(), nil
	})
	// Calls succeed only once the replica is promoted, which the loop may
	// not have seen yet.
	waitPromoted(ctx, t, replica)
	if promoted.IsZero() {
		promoted = recovered
	}
	t.Logf("killed at 0; replica promoted at %v; calls failed from %v to %v (%d failures), %v after the promotion",
		promoted.Sub(killed).Round(time.Millisecond), firstFailure.Sub(killed).Round(time.Millisecond),
		recovered.Sub(killed).Round(time.Millisecond), failures, recovered.Sub(promoted).Round(time.Millisecond))
	untyped.check(t)
}

// TestFaultDeadlineTyped makes calls of every kind against a frozen server,
// with deadlines of many lengths: every error wraps ErrUnavailable and
// context.DeadlineExceeded, which some, ending in a network timeout at the
// deadline a moment before the context knew it was done, did not.
func TestFaultDeadlineTyped(t *testing.T) {
	srv := redistest.New(t)
	rdb := newClient(srv.Addr())
	t.Cleanup(func() { rdb.Close() })
	ctx := testContext(t)
	f, err := redisfilter.Open(ctx, rdb, "deadlines", funnel.String, 300_000, 0.01, redisfilter.WithShardBytes(shardBytes))
	require.NoError(t, err)
	local, err := bloom.New(funnel.String, 300_000, 0.01)
	require.NoError(t, err)
	local.Put("x")
	calls := []func(context.Context) error{
		func(ctx context.Context) error { _, err := f.Put(ctx, "x"); return err },
		func(ctx context.Context) error { return f.PutMany(ctx, []string{"x", "y", "z"}) },
		func(ctx context.Context) error { _, err := f.MightContain(ctx, "x"); return err },
		func(ctx context.Context) error {
			_, err := f.MightContainMany(ctx, nil, randomStrings(rand.New(rand.NewPCG(1, 2)), 40))
			return err
		},
		func(ctx context.Context) error { _, err := f.Snapshot(ctx); return err },
		func(ctx context.Context) error { _, err := f.BitCount(ctx); return err },
		func(ctx context.Context) error { return f.Merge(ctx, local) },
		func(ctx context.Context) error {
			_, err := redisfilter.Open(ctx, rdb, "deadlines", funnel.String, 300_000, 0.01, redisfilter.WithShardBytes(shardBytes))
			return err
		},
	}
	require.NoError(t, srv.Signal(syscall.SIGSTOP))
	defer srv.Signal(syscall.SIGCONT)
	var wg sync.WaitGroup
	untyped := make(chan string, 1000)
	for g := range 8 {
		wg.Go(func() {
			for i := range 25 {
				call := calls[(g+i)%len(calls)]
				cctx, cancel := context.WithTimeout(context.Background(), time.Duration(5+(g*25+i)%60)*time.Millisecond)
				err := call(cctx)
				cancel()
				if !errors.Is(err, context.DeadlineExceeded) || !errors.Is(err, redisfilter.ErrUnavailable) {
					untyped <- fmt.Sprintf("call %d: %v", (g+i)%len(calls), err)
				}
			}
		})
	}
	wg.Wait()
	close(untyped)
	var bad []string
	for s := range untyped {
		bad = append(bad, s)
	}
	assert.Empty(t, bad, "errors at a deadline that do not wrap context.DeadlineExceeded and ErrUnavailable")
}

// TestClientClosed closes a client while Hybrids sync through it and
// goroutines put through it: every call that fails then, and every call
// after, wraps ErrClosed.
func TestClientClosed(t *testing.T) {
	eachServer(t, func(t *testing.T, rdb redis.UniversalClient) {
		ctx := testContext(t)
		hs := deltaHybrids(ctx, t, rdb, 4)
		f, err := redisfilter.Open(ctx, rdb, filterName(t), funnel.String, 300_000, 0.01, redisfilter.WithShardBytes(shardBytes))
		require.NoError(t, err)
		var (
			wg              sync.WaitGroup
			closed          atomic.Bool
			succeeded       atomic.Int64
			mu              sync.Mutex
			errs, notClosed []string
		)
		for i, h := range hs {
			wg.Go(func() {
				r := rand.New(rand.NewPCG(uint64(i), 96))
				for j := 0; j < 20 || !closed.Load(); j++ {
					h.PutMany(randomStrings(r, 50))
					var err error
					if i%2 == 0 {
						err = h.Sync(ctx)
					} else {
						err = f.PutMany(ctx, randomStrings(r, 50))
					}
					if err == nil {
						succeeded.Add(1)
						continue
					}
					mu.Lock()
					errs = append(errs, err.Error())
					if !errors.Is(err, redisfilter.ErrClosed) {
						notClosed = append(notClosed, err.Error())
					}
					enough := closed.Load() && len(errs) > 40
					mu.Unlock()
					if enough {
						return
					}
				}
			})
		}
		// Close the client under calls of every kind.
		redistest.WaitFor(t, "calls to succeed before the close", time.Minute, func() (bool, error) {
			return succeeded.Load() >= int64(2*len(hs)), nil
		})
		require.NoError(t, rdb.Close())
		closed.Store(true)
		wg.Wait()
		t.Logf("%d errors, such as %q", len(errs), errs[:min(len(errs), 2)])
		assert.Empty(t, notClosed, "errors after the client was closed that do not wrap ErrClosed")
		_, err = f.MightContain(ctx, "x")
		assert.ErrorIs(t, err, redisfilter.ErrClosed)
	})
}
