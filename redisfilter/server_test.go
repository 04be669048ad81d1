package redisfilter_test

import (
	"context"
	"errors"
	"fmt"
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

// The tests run against a real redis-server. MITZBLOOM_REDIS_ADDR names one
// (host:port, or the path of a unix socket), as .ci/run sets it; otherwise
// TestMain starts its own on a loopback port if redis-server is on the PATH.
// Tests that stop and restart a server start their own with startRedis.
const addrEnv = "MITZBLOOM_REDIS_ADDR"

var shared struct {
	addr   string
	err    error  // why there is no server
	prefix string // of every key the tests make, so they can be removed
}

func TestMain(m *testing.M) {
	os.Exit(runTests(m))
}

func runTests(m *testing.M) int {
	shared.prefix = fmt.Sprintf("mitzbloom-test:%d:%d:", os.Getpid(), time.Now().UnixNano())
	if addr := os.Getenv(addrEnv); addr != "" {
		shared.addr = addr
	} else if _, err := exec.LookPath("redis-server"); err != nil {
		shared.err = fmt.Errorf("%s is not set and redis-server is not on the PATH", addrEnv)
	} else {
		srv, err := startRedis(true)
		if err != nil {
			shared.err = err
		} else {
			defer srv.stop()
			shared.addr = srv.addr()
		}
	}
	code := m.Run()
	if shared.err == nil {
		removeTestKeys()
	}
	return code
}

// removeTestKeys deletes what the tests left behind, which matters only
// when the server is not a throwaway one.
func removeTestKeys() {
	c := newClient(shared.addr)
	defer c.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	iter := c.Scan(ctx, 0, "{"+shared.prefix+"*", 1000).Iterator()
	for iter.Next(ctx) {
		c.Del(ctx, iter.Val())
	}
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
	err := shared.err
	var c *redis.Client
	if err == nil {
		c = newClient(shared.addr, opts...)
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		if perr := c.Ping(ctx).Err(); perr != nil {
			c.Close()
			err = fmt.Errorf("cannot reach Redis at %s: %w", shared.addr, perr)
		}
	}
	if err != nil {
		if isCI() {
			t.Fatalf("Redis tests cannot run in CI: %v; .ci/run installs the redis-server package and sets %s", err, addrEnv)
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
	path, err := exec.LookPath("redis-server")
	if err != nil {
		if isCI() {
			t.Fatalf("Redis fault tests cannot run in CI: redis-server is not on the PATH; .ci/run installs the redis-server package")
		}
		t.Skipf("skipping a Redis fault test: redis-server is not on the PATH; install the Debian package redis-server")
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
	name := fmt.Sprintf("%s%s#%d", shared.prefix, t.Name(), nameSeq.Add(1))
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
	// Not t.TempDir: a unix socket path must fit in 108 bytes.
	dir, err := os.MkdirTemp("", "redis")
	if err != nil {
		return nil, err
	}
	s := &redisServer{dir: dir}
	if tcp {
		if s.port, err = freePort(); err != nil {
			return nil, err
		}
	}
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

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
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
	s.cmd = exec.Command("redis-server", s.args...)
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
