// Package redistest starts the throwaway redis-servers and Redis Clusters
// that the repository's tests run against, and waits for what happens to
// them. It is for tests only: nothing else imports it.
//
// A server keeps nothing on disk unless its arguments say so, listens on a
// unix socket in a directory of its own and, if asked, on a loopback port
// in 17200-17999, and dies with the test binary however that ends.
//
// ServerEnv and CLIEnv name the commands run as redis-server and redis-cli
// (which joins and reshards the clusters), as words split at spaces: the
// program and the arguments that come before the tests' own, such as
// valkey-server, or a server unpacked from a package and run through its
// own loader, as CI runs Redis 8.0 and Valkey 8.1.
//
// Where redis-server or redis-cli is missing, Require skips a test, or
// fails it in CI (where CI is set in the environment), since there a
// missing Redis is a broken setup.
package redistest

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math/rand/v2"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// The environment variables that name the commands run as redis-server
// and redis-cli.
const (
	ServerEnv = "MITZBLOOM_REDIS_SERVER"
	CLIEnv    = "MITZBLOOM_REDIS_CLI"
)

// ServerCommand returns the command of redis-server, as ServerEnv names
// it, with args after it.
func ServerCommand(args ...string) *exec.Cmd { return commandOf(ServerEnv, "redis-server", args) }

// CLICommand returns the command of redis-cli, as CLIEnv names it, with
// args after it.
func CLICommand(args ...string) *exec.Cmd { return commandOf(CLIEnv, "redis-cli", args) }

func commandOf(env, name string, args []string) *exec.Cmd {
	words := strings.Fields(os.Getenv(env))
	if len(words) == 0 {
		words = []string{name}
	}
	return exec.Command(words[0], append(words[1:], args...)...)
}

// Look returns nil if the programs that ServerCommand and CLICommand run
// are there, and otherwise what is missing.
func Look() error {
	for _, c := range []struct{ env, name string }{{ServerEnv, "redis-server"}, {CLIEnv, "redis-cli"}} {
		prog := commandOf(c.env, c.name, nil).Args[0]
		if _, err := exec.LookPath(prog); err != nil {
			return fmt.Errorf("%s is not on the PATH (%s names the command): %w", prog, c.env, err)
		}
	}
	return nil
}

// IsCI reports whether the tests run in CI, where a missing Redis is a
// broken setup rather than a reason to skip.
func IsCI() bool { return os.Getenv("CI") != "" }

// Require skips t if Look finds a program missing, or fails it in CI.
func Require(t testing.TB) {
	t.Helper()
	if err := Look(); err != nil {
		if IsCI() {
			t.Fatalf("Redis tests cannot run in CI: %v; .ci/run installs the redis-server package", err)
		}
		t.Skipf("skipping a Redis test: %v; install the Debian package redis-server", err)
	}
}

// New starts a server on a unix socket with args, as Start does, and
// stops it when t ends. It skips or fails t as Require does when
// redis-server is missing, and fails t if the server does not start.
func New(t testing.TB, args ...string) *Server {
	t.Helper()
	Require(t)
	s, err := Start(false, args...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Stop)
	return s
}

// A Server is a redis-server process of the tests' own.
type Server struct {
	dir  string
	port int // 0 for none
	args []string
	cmd  *exec.Cmd
	done chan error
}

// Start starts a redis-server on a unix socket, and on a free loopback port
// if tcp is set, with persistence off unless args turn it on, and waits
// until it answers. The caller stops it.
func Start(tcp bool, args ...string) (*Server, error) {
	port := 0
	if tcp {
		var err error
		if port, err = FreePort(); err != nil {
			return nil, err
		}
	}
	return StartOn(port, args...)
}

// StartOn starts a redis-server as Start does, on port if it is not 0.
func StartOn(port int, args ...string) (*Server, error) {
	// Not t.TempDir: a unix socket path must fit in 108 bytes.
	dir, err := os.MkdirTemp("", "redis")
	if err != nil {
		return nil, err
	}
	s := &Server{dir: dir, port: port}
	s.args = append([]string{
		"--port", strconv.Itoa(s.port),
		"--bind", "127.0.0.1",
		"--unixsocket", s.Socket(),
		"--unixsocketperm", "700",
		"--dir", dir,
		"--logfile", filepath.Join(dir, "redis.log"),
		"--save", "",
		"--appendonly", "no",
		"--daemonize", "no",
	}, args...) // later arguments win
	if err := s.Restart(); err != nil {
		s.Stop()
		return nil, err
	}
	return s, nil
}

// FreePort returns a free loopback port in 17200-17999, the range the
// tests' own servers use.
func FreePort() (int, error) {
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

// Socket returns the path of the server's unix socket.
func (s *Server) Socket() string { return filepath.Join(s.dir, "redis.sock") }

// Port returns the server's loopback port, or 0 if it has none.
func (s *Server) Port() int { return s.port }

// Addr returns the loopback address if the server has a port, and its
// socket's otherwise.
func (s *Server) Addr() string {
	if s.port == 0 {
		return s.Socket()
	}
	return "127.0.0.1:" + strconv.Itoa(s.port)
}

// Running reports whether the server's process runs: it was not halted, or
// was restarted since.
func (s *Server) Running() bool { return s.cmd != nil }

// Restart starts the server's process, which must not be running, with
// its arguments and directory, and so with what it kept there if it kept
// anything; and waits until it answers PING.
func (s *Server) Restart() error {
	if s.cmd != nil {
		return errors.New("redis-server is running")
	}
	s.cmd = ServerCommand(s.args...)
	// A server outlives no test binary, not even one killed by -timeout.
	s.cmd.SysProcAttr = dieWithParent()
	if err := s.cmd.Start(); err != nil {
		s.cmd = nil
		return fmt.Errorf("starting redis-server: %w", err)
	}
	s.done = make(chan error, 1)
	go func(cmd *exec.Cmd, done chan<- error) { done <- cmd.Wait() }(s.cmd, s.done)
	var exited bool
	var exit error
	err := Poll(10*time.Second, func() (bool, error) {
		select {
		case exit = <-s.done:
			exited = true
			return true, nil
		default:
		}
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		_, err := s.Do(ctx, "PING")
		return err == nil, err
	})
	if exited {
		s.cmd = nil
		return fmt.Errorf("redis-server exited at start (%v): %s", exit, s.Log())
	}
	if err != nil {
		return fmt.Errorf("redis-server: %w; log: %s", err, s.Log())
	}
	return nil
}

// DropSyncFile removes the RDB file that the last full sync of a replica
// left in the server's directory, so that the server, restarted, comes
// back empty. Redis keeps that file even with persistence off (unless
// rdb-del-sync-files is yes) and loads it when it starts; a replica that
// loaded the file of a sync made before a filter was filled then resyncs
// partially, replaying its master's writes since, and until it has
// replayed them all serves the filter as it was then: its config and
// bitmaps, not all of its bits.
func (s *Server) DropSyncFile() error {
	err := os.Remove(filepath.Join(s.dir, "dump.rdb"))
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	return err
}

// Log returns what the server wrote to its log file.
func (s *Server) Log() string {
	b, _ := os.ReadFile(filepath.Join(s.dir, "redis.log"))
	return string(b)
}

// Stop shuts the server down (SIGTERM, which with persistence on writes the
// append-only file) and waits for it, as Halt does; then removes its
// directory.
func (s *Server) Stop() {
	s.Halt(syscall.SIGTERM)
	os.RemoveAll(s.dir)
}

// Halt ends the process with sig, and SIGCONT should a test have stopped
// it, and waits for it, killing it if it has not ended in 10 s. It keeps
// the server's directory, and so its data, for a Restart.
func (s *Server) Halt(sig syscall.Signal) {
	if s.cmd == nil {
		return
	}
	s.cmd.Process.Signal(sig)
	s.cmd.Process.Signal(syscall.SIGCONT)
	select {
	case <-s.done:
	case <-time.After(10 * time.Second):
		s.cmd.Process.Kill()
		<-s.done
	}
	s.cmd = nil
}

// Signal sends sig (SIGSTOP, SIGCONT) to the process without waiting.
func (s *Server) Signal(sig syscall.Signal) error {
	if s.cmd == nil {
		return errors.New("redis-server is not running")
	}
	return s.cmd.Process.Signal(sig)
}

// Do sends a command to the server on a connection of its own and returns
// its reply, which must be a status, an integer or a bulk string (nil as
// ""); an error reply is returned as an error. It needs no client library,
// which the module of the library does not require.
func (s *Server) Do(ctx context.Context, args ...string) (string, error) {
	var d net.Dialer
	conn, err := d.DialContext(ctx, "unix", s.Socket())
	if err != nil {
		return "", err
	}
	defer conn.Close()
	if deadline, ok := ctx.Deadline(); ok {
		conn.SetDeadline(deadline)
	}
	var req strings.Builder
	fmt.Fprintf(&req, "*%d\r\n", len(args))
	for _, a := range args {
		fmt.Fprintf(&req, "$%d\r\n%s\r\n", len(a), a)
	}
	if _, err := io.WriteString(conn, req.String()); err != nil {
		return "", err
	}
	r := bufio.NewReader(conn)
	line, err := r.ReadString('\n')
	if err != nil {
		return "", err
	}
	line = strings.TrimSuffix(line, "\r\n")
	switch {
	case strings.HasPrefix(line, "+"), strings.HasPrefix(line, ":"):
		return line[1:], nil
	case strings.HasPrefix(line, "-"):
		return "", fmt.Errorf("%s: %s", args[0], line[1:])
	case strings.HasPrefix(line, "$"):
		n, err := strconv.Atoi(line[1:])
		if err != nil || n < 0 {
			return "", err
		}
		b := make([]byte, n+2)
		if _, err := io.ReadFull(r, b); err != nil {
			return "", err
		}
		return string(b[:n]), nil
	}
	return "", fmt.Errorf("%s: a reply Do does not read: %q", args[0], line)
}
