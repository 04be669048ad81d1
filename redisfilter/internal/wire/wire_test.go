package wire

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
)

// replyError is an error reply as go-redis returns it.
type replyError string

func (e replyError) Error() string { return string(e) }

func (replyError) RedisError() {}

func TestRedirected(t *testing.T) {
	for _, msg := range []string{
		"MOVED 3999 127.0.0.1:6381",
		"ASK 3999 127.0.0.1:6381",
		"TRYAGAIN Multiple keys request during rehashing of slot",
		"CLUSTERDOWN The cluster is down",
		"LOADING Redis is loading the dataset in memory",
		"READONLY You can't write against a read only replica.",
		"MASTERDOWN Link with MASTER is down and replica-serve-stale-data is set to 'no'.",
	} {
		assert.True(t, Redirected(replyError(msg)), msg)
	}
	for _, msg := range []string{"ERR unknown", "OOM command not allowed", "MOVEDX 1", "NOPERM", "i/o timeout"} {
		assert.False(t, Redirected(errors.New(msg)), msg)
	}
}
