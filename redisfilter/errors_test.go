package redisfilter

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"syscall"
	"testing"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"

	"github.com/mitzbloom/mitzbloom/redisfilter/internal/wire"
	"github.com/mitzbloom/mitzbloom/strategy"
)

// replyError is an error reply as go-redis returns it.
type replyError string

func (e replyError) Error() string { return string(e) }

func (replyError) RedisError() {}

func testCore() *core[string] {
	params := filterParams{bitSize: 64, k: 1, strategy: strategy.Murmur128Mitz64, funnel: "funnel.String"}.String()
	return &core[string]{wire: wire.New(nil, wire.Wait{}, isProblem), name: "a b", params: params, cfg: params + " id=0123456789abcdef", lostAdvice: "; advice"}
}

func TestProblemOf(t *testing.T) {
	tests := []struct {
		reply string
		p     problem
	}{
		{"MITZBLOOM_NOCONFIG {a b}:config ", problem{kind: noConfig, key: "{a b}:config"}},
		{"MITZBLOOM_NOBITMAP {a b#3.7} ", problem{kind: noBitmap, key: "{a b#3.7}"}},
		{"MITZBLOOM_NOGENERATION {a b}:29470 ", problem{kind: noGeneration, key: "{a b}:29470"}},
		{"MITZBLOOM_LENGTH {a b} 5 8", problem{kind: wrongLength, key: "{a b}", detail: "5 8"}},
		{"MITZBLOOM_CONFIG {a b}:config mitzbloom/redisfilter v1 bits=64 id=1", problem{kind: otherConfig, key: "{a b}:config", detail: "mitzbloom/redisfilter v1 bits=64 id=1"}},
		{"MITZBLOOM_WRONGTYPE {a}:config WRONGTYPE Operation against a key", problem{kind: wrongType, key: "{a}:config", detail: "WRONGTYPE Operation against a key"}},
		{"EXECABORT Transaction discarded because of: MITZBLOOM_NOBITMAP {a} ", problem{kind: noBitmap, key: "{a}"}},
		{"OOM command not allowed when used memory > 'maxmemory'.", problem{}},
		{"WRONGTYPE Operation against a key holding the wrong kind of value", problem{}},
		{"ERR unknown command", problem{}},
		{"MITZBLOOM_UNKNOWN {a} x", problem{}},
	}
	for _, tc := range tests {
		assert.Equal(t, tc.p, problemOf(tc.reply), tc.reply)
	}
}

func TestCodesTable(t *testing.T) {
	seen := make(map[string]bool)
	for kind, c := range codes {
		if kind == int(none) {
			continue
		}
		assert.NotNil(t, c.sentinel, "kind %d has no sentinel", kind)
		if c.code != "" {
			assert.False(t, seen[c.code], "code %s twice", c.code)
			seen[c.code] = true
		}
	}
}

func TestWrap(t *testing.T) {
	c := testCore()
	tests := []struct {
		err      error
		sentinel error
		msg      string
	}{
		{problem{kind: noBitmap, key: "{a b}"}, ErrLost, `redisfilter: filter lost: put "a b": bitmap {a b} is missing (deleted, evicted, or lost in a restart without persistence); advice`},
		{replyError("MITZBLOOM_NOCONFIG {a b}:config "), ErrLost, `redisfilter: filter lost: put "a b": config key {a b}:config is missing; advice`},
		{replyError("MITZBLOOM_LENGTH {a b} 5 8"), ErrNotFilter, `redisfilter: key holds no filter: put "a b": {a b} holds 5 bytes, want 8`},
		{replyError("MITZBLOOM_CONFIG {a b}:config " + c.params + " id=fedcba9876543210"), ErrLost, "re-created since this Filter opened it"},
		{replyError("MITZBLOOM_CONFIG {a b}:config mitzbloom/redisfilter v1 bits=128 k=1 id=1 n=50 p=0.3"), ErrMismatch, fmt.Sprintf("{a b}:config holds a filter created for n = 50 at p = 0.3 (mitzbloom/redisfilter v1 bits=128 k=1), and this one is for n = %d at p = %g (%s): open it with the parameters it was created with (its n and p, and the strategy, funnel, shard size and window shown), or use another name", c.expected, c.fpp, c.params)},
		{replyError("MITZBLOOM_CONFIG {a b}:config hello"), ErrNotFilter, `{a b}:config holds "hello", not a config of redisfilter`},
		{replyError("OOM command not allowed"), ErrOutOfMemory, `redisfilter: Redis is out of memory: put "a b": OOM command not allowed`},
		{replyError("NOPERM no"), ErrNoPermission, "NOPERM no"},
		{replyError("TRYAGAIN later"), ErrTryAgain, "TRYAGAIN later"},
		{replyError("WRONGTYPE Operation"), ErrNotFilter, "WRONGTYPE Operation"},
	}
	for _, tc := range tests {
		err := c.wrap(context.Background(), "put", tc.err)
		assert.ErrorIs(t, err, tc.sentinel, "%v", tc.err)
		assert.ErrorContains(t, err, tc.msg)
	}
	other := c.wrap(context.Background(), "put", replyError("ERR something else"))
	for _, s := range []error{ErrLost, ErrMismatch, ErrNotFilter, ErrOutOfMemory, ErrNoPermission, ErrTryAgain} {
		assert.NotErrorIs(t, other, s)
	}
	var rerr replyError
	assert.True(t, errors.As(other, &rerr), "the reply stays in the chain")
	assert.Nil(t, c.wrap(context.Background(), "put", nil))
	deadline := c.wrap(context.Background(), "put", fmt.Errorf("read: %w", context.DeadlineExceeded))
	assert.ErrorIs(t, deadline, context.DeadlineExceeded)
	assert.ErrorIs(t, deadline, ErrUnavailable)

	// The network's errors and the client's.
	refused := &net.OpError{Op: "dial", Net: "tcp", Err: syscall.ECONNREFUSED}
	for _, tc := range []struct {
		err      error
		sentinel error
	}{
		{refused, ErrUnavailable},
		{&net.OpError{Op: "read", Net: "tcp", Err: syscall.ECONNRESET}, ErrUnavailable},
		{io.EOF, ErrUnavailable},
		{fmt.Errorf("reading reply: %w", io.ErrUnexpectedEOF), ErrUnavailable},
		{redis.ErrPoolTimeout, ErrUnavailable},
		{redis.ErrClosed, ErrClosed},
		{&net.OpError{Op: "read", Net: "tcp", Err: net.ErrClosed}, ErrClosed},
	} {
		err := c.wrap(context.Background(), "sync", tc.err)
		assert.ErrorIs(t, err, tc.sentinel, "%v", tc.err)
		assert.ErrorIs(t, err, tc.err, "%v: the cause stays in the chain", tc.err)
	}
	var opErr *net.OpError
	assert.True(t, errors.As(c.wrap(context.Background(), "sync", refused), &opErr), "errors.As finds the network's error")
	cancelled := c.wrap(context.Background(), "sync", fmt.Errorf("read: %w", context.Canceled))
	assert.ErrorIs(t, cancelled, context.Canceled)
	assert.NotErrorIs(t, cancelled, ErrUnavailable, "the caller's cancellation is not the server's")
	assert.NotErrorIs(t, cancelled, ErrClosed)
}
