package redisfilter

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
)

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
		assert.True(t, redirected(replyError(msg)), msg)
	}
	for _, msg := range []string{"ERR unknown", "OOM command not allowed", "MOVEDX 1", "NOPERM", "i/o timeout"} {
		assert.False(t, redirected(errors.New(msg)), msg)
	}
}
