package bloomprom

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/mitzbloom/mitzbloom/redisfilter"
)

// TestCauseOf requires each failure to count under the first cause it
// wraps, a sentinel of redisfilter before the context's errors, and under
// "other" when it wraps none.
func TestCauseOf(t *testing.T) {
	label := func(err error) string {
		i := causeOf(err)
		if i == len(causes) {
			return otherCause
		}
		return causes[i].label
	}
	for _, c := range causes {
		if got := label(fmt.Errorf("redisfilter: sync %q: %w", "f", c.err)); got != c.label {
			t.Errorf("an error wrapping %v counts as %s, want %s", c.err, got, c.label)
		}
	}
	for err, want := range map[error]string{
		fmt.Errorf("%w: %w", redisfilter.ErrTryAgain, context.DeadlineExceeded): "try_again",
		fmt.Errorf("%w: %w", context.DeadlineExceeded, redisfilter.ErrLost):     "lost",
		errors.New("dial unix /tmp/redis.sock: connect: connection refused"):    "other",
	} {
		if got := label(err); got != want {
			t.Errorf("%v counts as %s, want %s", err, got, want)
		}
	}
	seen := map[string]bool{otherCause: true}
	for _, c := range causes {
		if seen[c.label] {
			t.Errorf("label %s twice", c.label)
		}
		seen[c.label] = true
	}
}
