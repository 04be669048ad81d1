package redisfilter_test

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"net"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/mitzbloom/mitzbloom/bloom"
	"github.com/mitzbloom/mitzbloom/funnel"
	"github.com/mitzbloom/mitzbloom/redisfilter"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The fault tests run their own redis-server, which they kill, freeze and
// restart. A call must never hang past its context's deadline, by more than
// callSlack, which is generous because the machine may be busy: the point is
// that calls end, not how fast.
const (
	callTimeout = 300 * time.Millisecond
	callSlack   = 2 * time.Second
)

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

// faultServer starts a server of the test's own and stops it when t ends.
func faultServer(t testing.TB, args ...string) *redisServer {
	t.Helper()
	requireRedisServer(t)
	srv, err := startRedis(false, args...)
	if err != nil {
		if isCI() {
			t.Fatalf("cannot start redis-server: %v", err)
		}
		t.Skipf("skipping a Redis fault test: cannot start redis-server: %v", err)
	}
	t.Cleanup(srv.stop)
	return srv
}

// faultCluster starts a cluster of the test's own, 3 masters with a replica
// each, and returns it with a client, both stopped when t ends, once every
// master's replica is online.
func faultCluster(t *testing.T, opts ...func(*redis.ClusterOptions)) (*redisCluster, *redis.ClusterClient) {
	t.Helper()
	requireRedisServer(t)
	cl, err := startCluster(3, 1)
	require.NoError(t, err)
	t.Cleanup(cl.stop)
	rdb := newClusterClient(cl.addrs(), opts...)
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
	late    []string // calls that overran their deadline
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
		if elapsed > callTimeout+callSlack {
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
			// Do not spin: a refused connection fails at once.
			time.Sleep(5 * time.Millisecond)
		}
	}
}

func (l *load) finish() {
	close(l.stop)
	l.wg.Wait()
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
	deadline := time.Now().Add(30 * time.Second)
	for count() < want {
		if time.Now().After(deadline) {
			t.Fatalf("phase %d: fewer than %d calls with failed=%t in 30 s", phase, n, failed)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// TestFaultServerKilled kills the server under 8 goroutines of calls: every
// call made while it is down fails within its deadline, nothing hangs or
// panics; once it is restarted, calls succeed again, and every value whose
// Put succeeded is there, since the server syncs its append-only file on
// every write.
func TestFaultServerKilled(t *testing.T) {
	srv := faultServer(t, "--appendonly", "yes", "--appendfsync", "always")
	rdb := newClient(srv.addr())
	t.Cleanup(func() { rdb.Close() })
	ctx := testContext(t)
	f, err := redisfilter.Open(ctx, rdb, "faults", funnel.String, 100000, 0.01)
	require.NoError(t, err)

	l := startLoad(f, 8)
	l.waitCalls(t, phaseUp, false, 50)
	srv.halt(syscall.SIGKILL)
	l.phase.Store(phaseDown)
	l.waitCalls(t, phaseDown, true, 50)
	l.phase.Store(phaseRestarting)
	require.NoError(t, srv.start())
	l.phase.Store(phaseRestarted)
	l.waitCalls(t, phaseRestarted, false, 100)
	l.finish()

	t.Logf("calls up %d ok/%d failed, down %d failed, restarted %d ok/%d failed",
		l.oks[phaseUp], l.errs[phaseUp], l.errs[phaseDown], l.oks[phaseRestarted], l.errs[phaseRestarted])
	for _, s := range l.samples {
		t.Log(s)
	}
	assert.Zero(t, l.okDown, "calls succeeded while the server was down")
	assert.Empty(t, l.late, "calls overran their deadline")
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
// up at its deadline. After SIGCONT calls succeed, and answer correctly: no
// reply to an abandoned request is taken for another's.
func TestFaultServerFrozen(t *testing.T) {
	srv := faultServer(t)
	rdb := newClient(srv.addr())
	t.Cleanup(func() { rdb.Close() })
	ctx := testContext(t)
	f, err := redisfilter.Open(ctx, rdb, "frozen", funnel.String, 10000, 0.01)
	require.NoError(t, err)
	values := randomStrings(rand.New(rand.NewPCG(22, 23)), 1000)
	require.NoError(t, f.PutMany(ctx, values[:500]))

	require.NoError(t, srv.signal(syscall.SIGSTOP))
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for g := range 8 {
		wg.Go(func() {
			cctx, cancel := context.WithTimeout(context.Background(), callTimeout)
			defer cancel()
			start := time.Now()
			var err error
			if g%2 == 0 {
				_, err = f.Put(cctx, values[500+g])
			} else {
				_, err = f.MightContainMany(cctx, nil, values[:10])
			}
			if elapsed := time.Since(start); elapsed > callTimeout+callSlack {
				err = fmt.Errorf("call took %v (%w)", elapsed, err)
			} else if err == nil {
				err = errors.New("call succeeded against a frozen server")
			} else if !errors.Is(err, context.DeadlineExceeded) || !errors.Is(err, redisfilter.ErrUnavailable) {
				err = fmt.Errorf("the error does not wrap context.DeadlineExceeded and ErrUnavailable: %w", err)
			} else {
				t.Logf("goroutine %d: %v after %v", g, err, elapsed.Round(time.Millisecond))
				err = nil
			}
			errs <- err
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		assert.NoError(t, err)
	}

	require.NoError(t, srv.signal(syscall.SIGCONT))
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
	srv := faultServer(t)
	rdb := newClient(srv.addr())
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

	srv.halt(syscall.SIGTERM)
	require.NoError(t, srv.start())
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
// a client of go-redis's default options (and ContextTimeoutEnabled): calls
// fail with an error within
// their deadline while no master serves the slot, never answer false for a
// value put and replicated before (WAIT), and succeed again soon after the
// replica is promoted. It logs how long that took.
func TestFaultFailover(t *testing.T) {
	// go-redis's defaults, but for context deadlines: no faster reload of
	// the slot map is needed, since the filter asks for one on errors.
	cl, rdb := faultCluster(t)
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
	replicaClient := newClient(replica.socket())
	t.Cleanup(func() { replicaClient.Close() })

	var untyped errorTally
	killed := time.Now()
	victim.halt(syscall.SIGKILL)
	var promoted, firstFailure, recovered time.Time
	failures := 0
	for deadline := killed.Add(60 * time.Second); time.Now().Before(deadline) && recovered.IsZero(); time.Sleep(50 * time.Millisecond) {
		if promoted.IsZero() {
			if info, err := replicaClient.Info(ctx, "replication").Result(); err == nil && strings.Contains(info, "role:master") {
				promoted = time.Now()
			}
		}
		callCtx, cancel := context.WithTimeout(ctx, callTimeout)
		start := time.Now()
		found, err := f.MightContainMany(callCtx, nil, values)
		cancel()
		took := time.Since(start)
		assert.Less(t, took, callTimeout+callSlack, "a call outlived its deadline")
		untyped.note(err)
		if err != nil {
			if firstFailure.IsZero() {
				firstFailure = time.Now()
				t.Logf("first error: %v", err)
			}
			failures++
			assert.Nil(t, found)
			continue
		}
		assert.NotContains(t, found, false, "a value put and replicated before the failover answered false")
		if !firstFailure.IsZero() {
			recovered = time.Now()
		}
	}
	require.False(t, firstFailure.IsZero(), "no call failed while the slot had no master")
	require.False(t, promoted.IsZero(), "the replica was never promoted")
	require.False(t, recovered.IsZero(), "calls did not succeed again within 60 s of the kill")
	t.Logf("killed at 0; replica promoted at %v; calls failed from %v to %v (%d failures), %v after the promotion",
		promoted.Sub(killed).Round(time.Millisecond), firstFailure.Sub(killed).Round(time.Millisecond),
		recovered.Sub(killed).Round(time.Millisecond), failures, recovered.Sub(promoted).Round(time.Millisecond))
	assert.Less(t, recovered.Sub(promoted), 10*time.Second, "calls kept failing long after the promotion")
	untyped.check(t)
}

// TestFaultDeadlineTyped makes calls of every kind against a frozen server,
// with deadlines of many lengths: every error wraps ErrUnavailable and
// context.DeadlineExceeded, which some, ending in a network timeout at the
// deadline a moment before the context knew it was done, did not.
func TestFaultDeadlineTyped(t *testing.T) {
	srv := faultServer(t)
	rdb := newClient(srv.addr())
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
	require.NoError(t, srv.signal(syscall.SIGSTOP))
	defer srv.signal(syscall.SIGCONT)
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
		time.Sleep(100 * time.Millisecond)
		require.NoError(t, rdb.Close())
		closed.Store(true)
		wg.Wait()
		t.Logf("%d errors, such as %q", len(errs), errs[:min(len(errs), 2)])
		assert.Empty(t, notClosed, "errors after the client was closed that do not wrap ErrClosed")
		_, err = f.MightContain(ctx, "x")
		assert.ErrorIs(t, err, redisfilter.ErrClosed)
	})
}
