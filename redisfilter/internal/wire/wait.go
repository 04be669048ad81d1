package wire

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/redis/go-redis/v9"
)

// A Wait is how many replicas must confirm a write, and how long to wait
// for them; none for the zero Wait.
type Wait struct {
	Replicas int
	Timeout  time.Duration
}

// Check reports what is wrong with w, the arguments of WithWait, for rdb.
func (w Wait) Check(rdb redis.UniversalClient) error {
	switch {
	case w == Wait{}:
		return nil
	case w.Replicas < 1:
		return fmt.Errorf("WithWait: the number of replicas (%d) must be at least 1", w.Replicas)
	case w.Timeout < time.Millisecond || w.Timeout%time.Millisecond != 0:
		return fmt.Errorf("WithWait: the timeout (%v) must be a positive whole number of milliseconds", w.Timeout)
	}
	switch rdb.(type) {
	case *redis.Client, *redis.ClusterClient:
		return nil
	}
	return fmt.Errorf("WithWait: a %T cannot send WAIT on the connection of a write; use a *redis.Client or a *redis.ClusterClient", rdb)
}

// confirm sends WAIT on conn, the connection of the writes to node, and
// returns an error wrapping ErrNotReplicated unless enough replicas
// acknowledged them in time.
func (w Wait) confirm(ctx context.Context, conn *redis.Conn, node string) error {
	n, err := conn.Wait(ctx, w.Replicas, w.Timeout).Result()
	if err != nil {
		return fmt.Errorf("%w: WAIT on %s: %w", ErrNotReplicated, node, err)
	}
	if n < int64(w.Replicas) {
		return fmt.Errorf("%w: %d of %d replicas of %s acknowledged the write within %v", ErrNotReplicated, n, w.Replicas, node, w.Timeout)
	}
	return nil
}

// Unconfirmed gathers what a write sent in several parts could not have
// confirmed. The bits of a part that the Wait could not confirm are set, so
// the parts after it are sent all the same, and the write reports the first
// such error once every part is sent.
type Unconfirmed struct{ Err error }

// Keep returns nil for an err wrapping ErrNotReplicated, which it keeps if
// it is the first, and err otherwise.
func (u *Unconfirmed) Keep(err error) error {
	if errors.Is(err, ErrNotReplicated) {
		u.Err = cmp.Or(u.Err, err)
		return nil
	}
	return err
}
