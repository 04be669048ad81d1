package main

import (
	"bufio"
	"context"
	"encoding/json"
	"flag"
	"io"
	"net/http"
	"regexp"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestRun starts the program as main does, on a port the system picks,
// fetches /stats, and stops it by cancelling its context.
func TestRun(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	logr, logw := io.Pipe()
	done := make(chan error, 1)
	go func() {
		done <- run(ctx, []string{"-listen", "127.0.0.1:0", "-window", "30s", "-expected", "5000", "-fpp", "0.001"}, logw)
		logw.Close()
	}()
	lines := bufio.NewScanner(logr)
	require.True(t, lines.Scan(), "no log line")
	addr := regexp.MustCompile(`listening on (\S+);`).FindStringSubmatch(lines.Text())
	require.NotNil(t, addr, "first log line: %s", lines.Text())
	go func() { _, _ = io.Copy(io.Discard, logr) }()

	resp, err := http.Get("http://" + addr[1] + "/stats")
	require.NoError(t, err)
	var s Stats
	require.NoError(t, json.NewDecoder(resp.Body).Decode(&s))
	resp.Body.Close()
	assert.Zero(t, s.Tunnels.Total)
	assert.Zero(t, s.Destinations.Filter.Current.FillRatio)
	// The empty previous generation counts as one -window old.
	assert.GreaterOrEqual(t, s.Clients.Filter.Previous.AgeSeconds, 30.0)

	cancel()
	assert.NoError(t, <-done)
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
	} {
		err := run(context.Background(), c.args, io.Discard)
		if assert.Error(t, err, "%q", c.args) {
			assert.Contains(t, err.Error(), c.want, "%q", c.args)
		}
	}
	assert.ErrorIs(t, run(context.Background(), []string{"-h"}, io.Discard), flag.ErrHelp)
}
