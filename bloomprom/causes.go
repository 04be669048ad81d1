package bloomprom

import (
	"context"
	"errors"
	"sync/atomic"

	"github.com/mitzbloom/mitzbloom/redisfilter"
)

// causes is the one table of the errors that the failures of a Hybrid's
// Syncs and of the reads of a filter in Redis are counted under, as the
// value of the label error: a failure counts under the first entry whose
// error it wraps (errors.Is), and under "other" if none. The sentinels of
// redisfilter come before the context's errors, which a failure may also
// wrap, so that the cause an operator can act on wins.
var causes = []struct {
	label string
	err   error
}{
	{"lost", redisfilter.ErrLost},
	{"mismatch", redisfilter.ErrMismatch},
	{"not_filter", redisfilter.ErrNotFilter},
	{"out_of_memory", redisfilter.ErrOutOfMemory},
	{"no_permission", redisfilter.ErrNoPermission},
	{"try_again", redisfilter.ErrTryAgain},
	{"not_replicated", redisfilter.ErrNotReplicated},
	{"evictable", redisfilter.ErrEvictable},
	{"unavailable", redisfilter.ErrUnavailable},
	{"closed", redisfilter.ErrClosed},
	{"deadline_exceeded", context.DeadlineExceeded},
	{"canceled", context.Canceled},
}

// otherCause is the label of a failure that wraps none of causes' errors.
const otherCause = "other"

// causeOf returns the index in causes of err's cause, or len(causes) for
// "other".
func causeOf(err error) int {
	for i, c := range causes {
		if errors.Is(err, c.err) {
			return i
		}
	}
	return len(causes)
}

// causeLabels returns the label values of a filter's failures by cause,
// {name, cause}, in the order of causes and "other" last, made once so
// that a scrape does not build them.
func causeLabels(name string) [][]string {
	labels := make([][]string, len(causes)+1)
	for i, c := range causes {
		labels[i] = []string{name, c.label}
	}
	labels[len(causes)] = []string{name, otherCause}
	return labels
}

// syncCounts counts what a Hybrid's Syncs did, from the SyncStats that
// AfterSync hands it, in the goroutine of each Sync; a scrape reads them.
type syncCounts struct {
	syncs, sent, received, fullPushes, shardPulls atomic.Int64
	failures                                      []atomic.Int64 // by cause, as causeLabels
}

func newSyncCounts() *syncCounts {
	return &syncCounts{failures: make([]atomic.Int64, len(causes)+1)}
}

// add counts the Sync that st describes.
func (c *syncCounts) add(st redisfilter.SyncStats) {
	c.syncs.Add(1)
	c.sent.Add(st.Sent)
	c.received.Add(st.Received)
	if st.FullPush {
		c.fullPushes.Add(1)
	}
	c.shardPulls.Add(int64(st.FullPulls))
	if st.Err != nil {
		c.failures[causeOf(st.Err)].Add(1)
	}
}
