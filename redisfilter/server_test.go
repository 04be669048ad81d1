package redisfilter_test

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// The tests run against a real redis-server and a real Redis Cluster.
// MITZBLOOM_REDIS_ADDR names the server (host:port, or the path of a unix
// socket) and MITZBLOOM_REDIS_CLUSTER_ADDRS the cluster's nodes
// (comma-separated host:port); without them, the first test that needs a
// server or the cluster starts its own, on a unix socket and on loopback
// ports 17200-17999, if redis-server is on the PATH, and TestMain stops it
// when the tests end. Tests that stop and restart servers start their own
// with startRedis and startCluster. The tests of pure logic need neither.
//
// MITZBLOOM_REDIS_SERVER and MITZBLOOM_REDIS_CLI name the commands that the
// tests run as redis-server and redis-cli (which joins and reshards their
// clusters), as words split at spaces: the program and the arguments that
// come before the tests' own, such as valkey-server, or a server unpacked
// from a package run through its own loader, as CI runs Redis 8.0 and
// Valkey 8.1.
const (
	addrEnv    = "MITZBLOOM_REDIS_ADDR"
	clusterEnv = "MITZBLOOM_REDIS_CLUSTER_ADDRS"
	serverEnv  = "MITZBLOOM_REDIS_SERVER"
	cliEnv     = "MITZBLOOM_REDIS_CLI"
)

// serverCommand and cliCommand return the commands of redis-server and
// redis-cli, as serverEnv and cliEnv name them, with args after them.
func serverCommand(args ...string) *exec.Cmd { return commandOf(serverEnv, "redis-server", args) }
func cliCommand(args ...string) *exec.Cmd    { return commandOf(cliEnv, "redis-cli", args) }

func commandOf(env, name string, args []string) *exec.Cmd {
	words := strings.Fields(os.Getenv(env))
	if len(words) == 0 {
		words = []string{name}
	}
	return exec.Command(words[0], append(words[1:], args...)...)
}

// lookServer returns the path of the program that serverCommand runs, or
// why it is not there.
func lookServer() (string, error) {
	path, err := exec.LookPath(serverCommand().Args[0])
	if err != nil {
		return "", fmt.Errorf("%s is not on the PATH (%s names the command): %w", serverCommand().Args[0], serverEnv, err)
	}
	return path, nil
}

var shared struct {
	prefix string // of every key the tests make, so they can be removed

	serverOnce sync.Once
	addr       string
	err        error        // why there is no server
	server     *redisServer // started by the tests, or nil

	clusterOnce sync.Once
	cluster     []string
	clusterErr  error         // why there is no cluster
	ownCluster  *redisCluster // started by the tests, or nil
}

func TestMain(m *testing.M) {
	os.Exit(runTests(m))
}

func runTests(m *testing.M) int {
	shared.prefix = fmt.Sprintf("mitzbloom-test:%d:%d:", os.Getpid(), time.Now().UnixNano())
	code := m.Run()
	// Once.Do here makes the starts that never happened never happen.
	shared.serverOnce.Do(func() { shared.err = errors.New("the tests are over") })
	shared.clusterOnce.Do(func() { shared.clusterErr = errors.New("the tests are over") })
	if shared.server != nil {
		shared.server.stop()
	} else if shared.err == nil {
		c := newClient(shared.addr)
		removeTestKeys(c)
		c.Close()
	}
	if shared.ownCluster != nil {
		shared.ownCluster.stop()
	} else if shared.clusterErr == nil {
		c := newClusterClient(shared.cluster)
		c.ForEachMaster(context.Background(), func(_ context.Context, node *redis.Client) error {
			removeTestKeys(node)
			return nil
		})
		c.Close()
	}
	return code
}

// sharedServer returns the address of the server the tests share, starting
// it if the environment names none, or why there is none.
func sharedServer() (string, error) {
	shared.serverOnce.Do(func() {
		if shared.addr = os.Getenv(addrEnv); shared.addr != "" {
			return
		}
		if _, err := lookServer(); err != nil {
			shared.err = fmt.Errorf("%s is not set and %w", addrEnv, err)
			return
		}
		shared.server, shared.err = startRedis(true)
		if shared.err == nil {
			shared.addr = shared.server.addr()
		}
	})
	return shared.addr, shared.err
}

// sharedClusterAddrs returns the nodes of the cluster the tests share,
// starting one of 3 masters with a replica each if the environment names
// none, or why there is none.
func sharedClusterAddrs() ([]string, error) {
	shared.clusterOnce.Do(func() {
		if addrs := os.Getenv(clusterEnv); addrs != "" {
			shared.cluster = strings.Split(addrs, ",")
			return
		}
		if _, err := lookServer(); err != nil {
			shared.clusterErr = fmt.Errorf("%s is not set and %w", clusterEnv, err)
			return
		}
		shared.ownCluster, shared.clusterErr = startCluster(3, 1)
		if shared.clusterErr == nil {
			shared.cluster = shared.ownCluster.addrs()
		}
	})
	return shared.cluster, shared.clusterErr
}

// removeTestKeys deletes what the tests left behind, which matters only
// when the server is not a throwaway one.
func removeTestKeys(c *redis.Client) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	iter := c.Scan(ctx, 0, "{"+shared.prefix+"*", 1000).Iterator()
	for iter.Next(ctx) {
		c.Del(ctx, iter.Val())
	}
}

// newClusterClient returns a client of the cluster of addrs that honours
// context deadlines.
func newClusterClient(addrs []string, opts ...func(*redis.ClusterOptions)) *redis.ClusterClient {
	o := &redis.ClusterOptions{Addrs: addrs, ContextTimeoutEnabled: true}
	for _, opt := range opts {
		opt(o)
	}
	return redis.NewClusterClient(o)
}

// sharedCluster returns a client of the shared cluster, closed when t ends,
// skipping or failing t as sharedClient does when there is none.
func sharedCluster(t testing.TB, opts ...func(*redis.ClusterOptions)) *redis.ClusterClient {
	t.Helper()
	addrs, err := sharedClusterAddrs()
	var c *redis.ClusterClient
	if err == nil {
		c = newClusterClient(addrs, opts...)
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		if perr := c.ForEachShard(ctx, func(ctx context.Context, node *redis.Client) error { return node.Ping(ctx).Err() }); perr != nil {
			c.Close()
			err = fmt.Errorf("cannot reach the Redis Cluster at %v: %w", addrs, perr)
		}
	}
	if err != nil {
		if isCI() {
			t.Fatalf("Redis Cluster tests cannot run in CI: %v; .ci/run installs the redis-server package", err)
		}
		t.Skipf("skipping a Redis Cluster test: %v; install the Debian package redis-server, or set %s", err, clusterEnv)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// eachServer runs test as two subtests, "single" on the shared server and
// "cluster" on the shared cluster, each with a client of its own.
func eachServer(t *testing.T, test func(t *testing.T, rdb redis.UniversalClient)) {
	t.Run("single", func(t *testing.T) { test(t, sharedClient(t)) })
	t.Run("cluster", func(t *testing.T) { test(t, sharedCluster(t)) })
}

// keysMatching returns the keys that match pattern on every master of rdb.
func keysMatching(t testing.TB, rdb redis.UniversalClient, pattern string) []string {
	t.Helper()
	ctx := context.Background()
	var (
		mu  sync.Mutex
		all []string
	)
	collect := func(ctx context.Context, c redis.Cmdable) error {
		keys, err := c.Keys(ctx, pattern).Result()
		mu.Lock()
		all = append(all, keys...)
		mu.Unlock()
		return err
	}
	var err error
	if cl, ok := rdb.(*redis.ClusterClient); ok {
		err = cl.ForEachMaster(ctx, func(ctx context.Context, node *redis.Client) error { return collect(ctx, node) })
	} else {
		err = collect(ctx, rdb)
	}
	if err != nil {
		t.Fatalf("KEYS %s: %v", pattern, err)
	}
	return all
}

// newClient returns a client for addr that honours context deadlines, as
// the package documentation recommends.
func newClient(addr string, opts ...func(*redis.Options)) *redis.Client {
	o := &redis.Options{Addr: addr, ContextTimeoutEnabled: true}
	if strings.HasPrefix(addr, "/") {
		o.Network = "unix"
	}
	for _, opt := range opts {
		opt(o)
	}
	return redis.NewClient(o)
}

// sharedClient returns a client of the shared server, closed when t ends. It
// skips t if there is no server, unless CI is set: there a missing Redis is
// a broken setup.
func sharedClient(t testing.TB, opts ...func(*redis.Options)) *redis.Client {
	t.Helper()
	addr, err := sharedServer()
	var c *redis.Client
	if err == nil {
		c = newClient(addr, opts...)
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		if perr := c.Ping(ctx).Err(); perr != nil {
			c.Close()
			err = fmt.Errorf("cannot reach Redis at %s: %w", addr, perr)
		}
	}
	if err != nil {
		if isCI() {
			t.Fatalf("Redis tests cannot run in CI: %v; .ci/run installs the redis-server package", err)
		}
		t.Skipf("skipping a Redis test: %v; install the Debian package redis-server, or set %s", err, addrEnv)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// requireRedisServer returns the path of redis-server, skipping or failing t
// as sharedClient does when it is missing.
func requireRedisServer(t testing.TB) string {
	t.Helper()
	path, err := lookServer()
	if err != nil {
		if isCI() {
			t.Fatalf("Redis fault tests cannot run in CI: %v; .ci/run installs the redis-server package", err)
		}
		t.Skipf("skipping a Redis fault test: %v; install the Debian package redis-server", err)
	}
	return path
}

var (
	names   sync.Map // testing.TB → its filter name
	nameSeq atomic.Int64
)

// filterName returns a name no other test, run or -count repetition uses,
// the same one for every call of the same test.
func filterName(t testing.TB) string {
	if name, ok := names.Load(t); ok {
		return name.(string)
	}
	name := fmt.Sprintf("%s%s.%d", shared.prefix, t.Name(), nameSeq.Add(1))
	names.Store(t, name)
	return name
}

// A redisServer is a redis-server process of the tests' own, listening on a
// unix socket in its own directory, and on a loopback port if asked.
type redisServer struct {
	dir  string
	port int // 0 for none
	args []string
	cmd  *exec.Cmd
	done chan error
}

// startRedis starts a redis-server on a unix socket, and on a free loopback
// port if tcp is set, with persistence off unless args turn it on, and waits
// until it answers.
func startRedis(tcp bool, args ...string) (*redisServer, error) {
	port := 0
	if tcp {
		var err error
		if port, err = freePort(); err != nil {
			return nil, err
		}
	}
	return startRedisOn(port, args...)
}

// startRedisOn starts a redis-server as startRedis does, on port if it is
// not 0.
func startRedisOn(port int, args ...string) (*redisServer, error) {
	// Not t.TempDir: a unix socket path must fit in 108 bytes.
	dir, err := os.MkdirTemp("", "redis")
	if err != nil {
		return nil, err
	}
	s := &redisServer{dir: dir, port: port}
	s.args = append([]string{
		"--port", strconv.Itoa(s.port),
		"--bind", "127.0.0.1",
		"--unixsocket", s.socket(),
		"--unixsocketperm", "700",
		"--dir", dir,
		"--logfile", filepath.Join(dir, "redis.log"),
		"--save", "",
		"--appendonly", "no",
		"--daemonize", "no",
	}, args...) // later arguments win
	if err := s.start(); err != nil {
		s.stop()
		return nil, err
	}
	return s, nil
}

// freePort returns a free loopback port in 17200-17999, the range the
// tests' own servers use.
func freePort() (int, error) {
	for range 200 {
		port := 17200 + rand.IntN(800)
		l, err := net.Listen("tcp", "127.0.0.1:"+strconv.Itoa(port))
		if err == nil {
			l.Close()
			return port, nil
		}
	}
	return 0, errors.New("no free loopback port in 17200-17999")
}

func (s *redisServer) socket() string { return filepath.Join(s.dir, "redis.sock") }

// addr returns the loopback address if the server has a port, and its
// socket's otherwise.
func (s *redisServer) addr() string {
	if s.port == 0 {
		return s.socket()
	}
	return "127.0.0.1:" + strconv.Itoa(s.port)
}

func (s *redisServer) start() error {
	s.cmd = serverCommand(s.args...)
	// A server outlives no test binary, not even one killed by -timeout.
	s.cmd.SysProcAttr = dieWithParent()
	if err := s.cmd.Start(); err != nil {
		return fmt.Errorf("starting redis-server: %w", err)
	}
	s.done = make(chan error, 1)
	go func(cmd *exec.Cmd) { s.done <- cmd.Wait() }(s.cmd)
	c := newClient(s.socket())
	defer c.Close()
	deadline := time.Now().Add(10 * time.Second)
	for {
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		err := c.Ping(ctx).Err()
		cancel()
		if err == nil {
			return nil
		}
		select {
		case werr := <-s.done:
			s.cmd = nil
			return fmt.Errorf("redis-server exited at start (%v): %s", werr, s.log())
		default:
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("redis-server did not answer within 10 s: %w; log: %s", err, s.log())
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func (s *redisServer) log() string {
	b, _ := os.ReadFile(filepath.Join(s.dir, "redis.log"))
	return string(b)
}

// stop shuts the server down (SIGTERM, which with persistence on writes the
// append-only file) and waits for it; then removes its directory.
func (s *redisServer) stop() {
	s.halt(syscall.SIGTERM)
	os.RemoveAll(s.dir)
}

// halt ends the process with sig and waits for it, keeping its directory
// and so its data for a restart.
func (s *redisServer) halt(sig syscall.Signal) {
	if s.cmd == nil {
		return
	}
	s.cmd.Process.Signal(sig)
	select {
	case <-s.done:
	case <-time.After(10 * time.Second):
		s.cmd.Process.Kill()
		<-s.done
	}
	s.cmd = nil
}

// signal sends sig (SIGSTOP, SIGCONT) without waiting.
func (s *redisServer) signal(sig syscall.Signal) error {
	if s.cmd == nil {
		return errors.New("redis-server is not running")
	}
	return s.cmd.Process.Signal(sig)
}

func withPoolSize(n int) func(*redis.Options) {
	return func(o *redis.Options) { o.PoolSize = n }
}

// isCI reports whether the tests run in CI, where a missing Redis or Java is
// a broken setup rather than a reason to skip.
func isCI() bool { return os.Getenv("CI") != "" }

// A redisCluster is a Redis Cluster of the tests' own: redis-servers on free
// loopback ports (whose cluster bus ports, 10000 higher, are free too),
// joined with redis-cli --cluster create.
type redisCluster struct {
	nodes []*redisServer
}

// startCluster starts masters masters with replicas replicas each, and waits
// until every node serves every slot.
func startCluster(masters, replicas int) (*redisCluster, error) {
	cl := &redisCluster{}
	for range masters * (1 + replicas) {
		port, err := freeClusterPort()
		if err != nil {
			cl.stop()
			return nil, err
		}
		srv, err := startRedisOn(port, "--cluster-enabled", "yes",
			"--cluster-config-file", "nodes.conf", "--cluster-node-timeout", "1000")
		if err != nil {
			cl.stop()
			return nil, err
		}
		cl.nodes = append(cl.nodes, srv)
	}
	args := append([]string{"--cluster", "create"}, cl.addrs()...)
	args = append(args, "--cluster-replicas", strconv.Itoa(replicas), "--cluster-yes")
	if out, err := cliCommand(args...).CombinedOutput(); err != nil {
		cl.stop()
		return nil, fmt.Errorf("redis-cli --cluster create: %v: %s", err, out)
	}
	if err := cl.waitReady(30 * time.Second); err != nil {
		cl.stop()
		return nil, err
	}
	return cl, nil
}

// freeClusterPort returns a free loopback port whose bus port is free too.
func freeClusterPort() (int, error) {
	for range 100 {
		port, err := freePort()
		if err != nil {
			return 0, err
		}
		if l, err := net.Listen("tcp", "127.0.0.1:"+strconv.Itoa(port+10000)); err == nil {
			l.Close()
			return port, nil
		}
	}
	return 0, errors.New("no free port pair for a cluster node")
}

func (cl *redisCluster) addrs() []string {
	var addrs []string
	for _, n := range cl.nodes {
		addrs = append(addrs, n.addr())
	}
	return addrs
}

// waitReady waits until every running node reports cluster_state:ok.
func (cl *redisCluster) waitReady(timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	for _, n := range cl.nodes {
		if n.cmd == nil {
			continue
		}
		c := newClient(n.socket())
		for {
			info, err := c.ClusterInfo(context.Background()).Result()
			if err == nil && strings.Contains(info, "cluster_state:ok") {
				break
			}
			if time.Now().After(deadline) {
				c.Close()
				return fmt.Errorf("cluster node %s not ready in %v: %v %s", n.addr(), timeout, err, info)
			}
			time.Sleep(50 * time.Millisecond)
		}
		c.Close()
	}
	return nil
}

func (cl *redisCluster) stop() {
	for _, n := range cl.nodes {
		n.stop()
	}
}

// TestServerVersion logs the server that the tests run on, and the
// cluster's, as INFO server names them (Valkey names itself too).
func TestServerVersion(t *testing.T) {
	eachServer(t, func(t *testing.T, rdb redis.UniversalClient) {
		info, err := rdb.Info(testContext(t), "server").Result()
		if err != nil {
			t.Fatal(err)
		}
		for line := range strings.Lines(info) {
			if k, v, ok := strings.Cut(strings.TrimSpace(line), ":"); ok && (k == "redis_version" || k == "server_name" || k == "valkey_version") {
				t.Logf("%s %s", k, v)
			}
		}
	})
}
