package redistest

import (
	"context"
	"errors"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestServer starts a server, talks to it, halts it, restarts it and
// stops it: each step must do what it says, and Do must read each kind of
// reply it claims to.
func TestServer(t *testing.T) {
	s := New(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"PING"}, "PONG"},
		{[]string{"SET", "k", "v\r\nw"}, "OK"},
		{[]string{"GET", "k"}, "v\r\nw"},
		{[]string{"GET", "missing"}, ""},
		{[]string{"INCR", "n"}, "1"},
	} {
		got, err := s.Do(ctx, c.args...)
		if err != nil || got != c.want {
			t.Errorf("%q: %q, %v; want %q", c.args, got, err, c.want)
		}
	}
	if _, err := s.Do(ctx, "INCR", "k"); err == nil || !strings.Contains(err.Error(), "not an integer") {
		t.Errorf("an error reply: %v", err)
	}
	if _, err := s.Do(ctx, "LRANGE", "l", "0", "-1"); err == nil {
		t.Error("Do read an array reply")
	}

	s.Halt(syscall.SIGKILL)
	if s.Running() {
		t.Fatal("running after Halt")
	}
	if _, err := s.Do(ctx, "PING"); err == nil {
		t.Fatal("a halted server answers")
	}
	if err := s.Restart(); err != nil {
		t.Fatal(err)
	}
	if err := s.Restart(); err == nil {
		t.Error("Restart of a running server")
	}
	if got, err := s.Do(ctx, "GET", "k"); err != nil || got != "" {
		t.Errorf("a server without persistence kept %q (%v)", got, err)
	}

	// A frozen server is thawed to stop.
	if err := s.Signal(syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	s.Stop()
	if s.Running() {
		t.Error("running after Stop")
	}
}

// TestStartFails requires a server that cannot start to say why.
func TestStartFails(t *testing.T) {
	Require(t)
	s, err := Start(false, "--no-such-option", "x")
	if err == nil {
		s.Stop()
		t.Fatal("a server with an unknown option started")
	}
	if !strings.Contains(err.Error(), "exited") {
		t.Errorf("the error: %v", err)
	}
}

// TestCluster starts a cluster of 3 masters without replicas: every node
// is ready, and serves all the slots.
func TestCluster(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a cluster")
	}
	cl := NewCluster(t, 3, 0)
	if len(cl.Addrs()) != 3 {
		t.Fatalf("%d nodes", len(cl.Addrs()))
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	for _, n := range cl.Nodes {
		info, err := n.Do(ctx, "CLUSTER", "INFO")
		if err != nil || !strings.Contains(info, "cluster_slots_assigned:16384") {
			t.Errorf("%s: %v %s", n.Addr(), err, info)
		}
	}
}

// TestPoll requires Poll to return nil once cond holds, and the last
// reason otherwise.
func TestPoll(t *testing.T) {
	n := 0
	if err := Poll(time.Minute, func() (bool, error) { n++; return n == 3, nil }); err != nil || n != 3 {
		t.Errorf("Poll: %v after %d calls", err, n)
	}
	why := errors.New("not yet")
	err := Poll(50*time.Millisecond, func() (bool, error) { return false, why })
	if !errors.Is(err, why) {
		t.Errorf("Poll: %v", err)
	}
}
