package main

import (
	"bufio"
	"context"
	"encoding/json"
	"flag"
	"io"
	"net"
	"net/http"
	"os"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// startRun starts the program as main does, with args, and returns its
// log's first line and a function that stops it by cancelling its context.
func startRun(t *testing.T, args ...string) (string, func() error) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	logr, logw := io.Pipe()
	done := make(chan error, 1)
	go func() {
		done <- run(ctx, args, logw)
		logw.Close()
	}()
	lines := bufio.NewScanner(logr)
	require.True(t, lines.Scan(), "no log line")
	go func() { _, _ = io.Copy(io.Discard, logr) }()
	return lines.Text(), func() error {
		cancel()
		return <-done
	}
}

func getStatus(t *testing.T, u string) (int, []byte) {
	t.Helper()
	resp, err := http.Get(u)
	require.NoError(t, err)
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return resp.StatusCode, body
}

// TestRun starts the program on a port the system picks, fetches /stats,
// and stops it.
func TestRun(t *testing.T) {
	line, stop := startRun(t, "-listen", "127.0.0.1:0", "-window", "30s", "-expected", "5000", "-fpp", "0.001")
	addr := regexp.MustCompile(`msg=listening addr=(\S+) `).FindStringSubmatch(line)
	require.NotNil(t, addr, "first log line: %s", line)
	status, body := getStatus(t, "http://"+addr[1]+"/stats")
	require.Equal(t, http.StatusOK, status)
	var s statsJSON
	require.NoError(t, json.Unmarshal(body, &s))
	assert.Zero(t, s.Tunnels.Total)
	assert.Zero(t, s.Destinations.Filter.Current.FillRatio)
	assert.Nil(t, s.Clients.Filter.Previous, "no previous generation before the first rotation")
	assert.NoError(t, stop())
}

// TestRunAdmin serves /stats and /metrics on -admin only.
func TestRunAdmin(t *testing.T) {
	line, stop := startRun(t, "-listen", "127.0.0.1:0", "-admin", "127.0.0.1:0", "-allow-ports", "1-65535", "-allow-hosts", "127.0.0.1/32")
	addr := regexp.MustCompile(`msg=listening addr=(\S+) admin=(\S+) `).FindStringSubmatch(line)
	require.NotNil(t, addr, "first log line: %s", line)
	for _, path := range []string{"/stats", "/metrics"} {
		status, _ := getStatus(t, "http://"+addr[2]+path)
		assert.Equal(t, http.StatusOK, status, "admin %s", path)
		status, _ = getStatus(t, "http://"+addr[1]+path)
		assert.Equal(t, http.StatusNotFound, status, "proxy %s", path)
	}
	// The admin listener is the proxy itself too.
	conn, err := net.Dial("tcp", addr[1])
	require.NoError(t, err)
	defer conn.Close()
	_, err = io.WriteString(conn, "CONNECT "+addr[2]+" HTTP/1.1\r\nHost: "+addr[2]+"\r\n\r\n")
	require.NoError(t, err)
	resp, err := http.ReadResponse(bufio.NewReader(conn), &http.Request{Method: http.MethodConnect})
	require.NoError(t, err)
	assert.Equal(t, http.StatusForbidden, resp.StatusCode)
	_, body := getStatus(t, "http://"+addr[2]+"/stats")
	var s statsJSON
	require.NoError(t, json.Unmarshal(body, &s))
	assert.EqualValues(t, 1, s.Rejected["proxy_itself"], "although 127.0.0.1/32 and its port are allowed")
	assert.NoError(t, stop())
}

func TestRunArguments(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"-fpp", "1.5"}, "false positive probability (1.5) must be < 1.0"},
		{[]string{"-window", "0s"}, "window (0s) must be > 0"},
		{[]string{"-expected", "-3"}, "expected insertions (-3) must be >= 0"},
		{[]string{"-listen", "127.0.0.1:99999"}, "invalid port"},
		{[]string{"-window", "soon"}, `invalid value "soon" for flag -window`},
		{[]string{"extra"}, `unexpected arguments ["extra"]`},
		{[]string{"-allow-ports", "80-"}, "-allow-ports"},
		{[]string{"-allow-hosts", "10.0.0.0/99"}, "-allow-hosts"},
		{[]string{"-max-tunnels", "0"}, "must be > 0"},
		{[]string{"-idle-timeout", "-1s"}, "must be > 0"},
	} {
		err := run(context.Background(), c.args, io.Discard)
		if assert.Error(t, err, "%q", c.args) {
			assert.Contains(t, err.Error(), c.want, "%q", c.args)
		}
	}
	assert.ErrorIs(t, run(context.Background(), []string{"-h"}, io.Discard), flag.ErrHelp)
}

// TestRunArgumentsNameTheFlag checks that every mistake in the command line
// is a usageError that starts with the flag's name.
func TestRunArgumentsNameTheFlag(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"-fpp", "2"}, "-fpp: bloom: invalid argument: false positive probability (2.0) must be < 1.0"},
		{[]string{"-fpp", "0"}, "-fpp: "},
		{[]string{"-expected", "-3"}, "-expected: "},
		{[]string{"-window", "0s"}, "-window: "},
		{[]string{"-window", "soon"}, `invalid value "soon" for flag -window`},
		{[]string{"-max-conns", "-1"}, "-max-conns: -1 must be >= 0"},
		{[]string{"-max-tunnels", "0"}, "-max-tunnels: 0 must be > 0"},
		{[]string{"-max-client-tunnels", "-2"}, "-max-client-tunnels: -2 must be > 0"},
		{[]string{"-idle-timeout", "-1s"}, "-idle-timeout: -1s must be > 0"},
		{[]string{"-listen", "127.0.0.1:99999"}, "-listen: "},
		{[]string{"-listen", "nowhere"}, "-listen: "},
		{[]string{"-admin", "127.0.0.1"}, "-admin: "},
		{[]string{"-admin", "127.0.0.1:nosuchservice"}, "-admin: lookup tcp/nosuchservice: unknown port"},
		{[]string{"-listen", ":-1"}, "-listen: "},
		{[]string{"-allow-ports", "80-"}, "-allow-ports: "},
		{[]string{"-allow-hosts", "10.0.0.0/99"}, "-allow-hosts: "},
		{[]string{"-allow-machine=maybe"}, `invalid boolean value "maybe" for -allow-machine`},
		{[]string{"extra"}, `unexpected arguments ["extra"]`},
	} {
		err := run(context.Background(), c.args, io.Discard)
		var usage usageError
		if assert.ErrorAs(t, err, &usage, "%q", c.args) {
			assert.True(t, strings.HasPrefix(err.Error(), c.want), "%q: %v", c.args, err)
		}
	}
}

// TestExitStatus runs the program as a process: a mistake in the command
// line exits with 2 and names the flag, once; -h with 0; an address in use
// with 1.
func TestExitStatus(t *testing.T) {
	inUse, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	defer inUse.Close()
	for _, c := range []struct {
		args   []string
		status int
		want   string
	}{
		{[]string{"-fpp", "2"}, 2, "connectproxy: -fpp: bloom: invalid argument: false positive probability (2.0) must be < 1.0\n"},
		{[]string{"-max-conns", "x"}, 2, `invalid value "x" for flag -max-conns`},
		{[]string{"-listen", "127.0.0.1:99999"}, 2, "connectproxy: -listen: "},
		{[]string{"-admin", "127.0.0.1:nosuchservice"}, 2, "connectproxy: -admin: lookup tcp/nosuchservice: unknown port\n"},
		{[]string{"-h"}, 0, "Usage of connectproxy"},
		{[]string{"-listen", inUse.Addr().String()}, 1, "connectproxy: -listen: listen tcp " + inUse.Addr().String()},
	} {
		ch := startChild(t, nil, c.args...)
		assert.Equal(t, c.status, ch.wait(), "%q", c.args)
		assert.Contains(t, ch.log(), c.want, "%q", c.args)
		assert.LessOrEqual(t, strings.Count(ch.log(), "Usage of"), 1, "%q", c.args)
	}
}

// TestInterrupt sends the program, in a process of its own, SIGINT with a
// tunnel open: it logs that it is shutting down, closes the tunnel, logs
// that it stopped, and exits with status 0.
func TestInterrupt(t *testing.T) {
	echo := echoServer(t)
	_, port, _ := net.SplitHostPort(echo)
	c := startChild(t, nil, "-listen", "127.0.0.1:0", "-allow-ports", port, "-allow-hosts", "127.0.0.1", "-allow-machine")
	addr := c.listening(t)["addr"]
	conn, err := net.Dial("tcp", addr)
	require.NoError(t, err)
	defer conn.Close()
	_, err = io.WriteString(conn, connectRequest(echo))
	require.NoError(t, err)
	br := bufio.NewReader(conn)
	resp, err := http.ReadResponse(br, &http.Request{Method: http.MethodConnect})
	require.NoError(t, err)
	require.Equal(t, http.StatusOK, resp.StatusCode)

	require.NoError(t, c.cmd.Process.Signal(os.Interrupt))
	require.NoError(t, conn.SetReadDeadline(time.Now().Add(hangGuard)))
	_, err = io.ReadAll(br)
	assert.NoError(t, err, "the tunnel is closed")
	assert.Equal(t, 0, c.wait())
	assert.Contains(t, c.log(), `msg="shutting down" cause="signal interrupt" tunnels=1 connections=1`)
	assert.Contains(t, c.log(), `msg=stopped tunnels_total=1`)
}
