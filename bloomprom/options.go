package bloomprom

import (
	"fmt"
	"time"

	"github.com/mitzbloom/mitzbloom/bloom"
)

// An Option is a setting of [Collector.Register] for one filter.
type Option func(*settings) error

// settings are the Options of one Register.
type settings struct {
	n       int64   // expected insertions, 0 if not given
	p       float64 // false-positive probability, 0 if not given
	timeout time.Duration
}

// defaultTimeout bounds the reads from Redis of one filter's statistics
// at a scrape, unless WithTimeout says otherwise: well within Prometheus's
// default scrape timeout of 10 s.
const defaultTimeout = 2 * time.Second

// WithSizing gives the expected insertions n and false-positive probability
// p that the filter was sized for: the arguments of bloom.New, of
// redisfilter.Open or OpenWindowed (a Hybrid's are those of the Filter it
// was made from), or of bloom.WithSizing for a Rotating or a Scalable that
// was read without them (of such a Scalable, only p is reported: the sizes
// of its stages depend on its growth too). A Rotating or a Scalable that
// knows its own needs none, and with one that differs Register returns an
// error.
//
// Without it, a filter that does not know its sizing has no
// mitzbloom_filter_expected_insertions, load_ratio or target_fpp, which
// the saturation alert needs.
func WithSizing(n int64, p float64) Option {
	return func(s *settings) error {
		if n <= 0 || !(p > 0 && p < 1) {
			return fmt.Errorf("%w: bloomprom: WithSizing(%d, %g): n must be positive and p in (0, 1)", bloom.ErrInvalidArgument, n, p)
		}
		s.n, s.p = n, p
		return nil
	}
}

// WithTimeout bounds the time a scrape waits for Redis to give the
// filter's statistics, 2 s by default; the filters of a scrape are read
// concurrently, so that the slowest bounds it. It applies to a
// redisfilter.Filter or Windowed, whose statistics are counted in Redis;
// the others are read from memory.
func WithTimeout(d time.Duration) Option {
	return func(s *settings) error {
		if d <= 0 {
			return fmt.Errorf("%w: bloomprom: WithTimeout(%v): the timeout must be positive", bloom.ErrInvalidArgument, d)
		}
		s.timeout = d
		return nil
	}
}
