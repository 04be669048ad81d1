package redisfilter

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/redis/go-redis/v9"
)

// A waitPolicy is what WithWait asks: how many replicas must confirm a
// write, and how long to wait for them; none for the zero waitPolicy.
type waitPolicy struct {
	replicas int
	timeout  time.Duration
}

// WithWait makes the writes of the filter durable across a failover: Put,
// PutMany, Merge, a [Hybrid]'s Sync when it pushes, and Open when it creates
// the filter return nil only after Redis's WAIT, sent on the very
// connection that carried the writes, confirms that at least replicas
// replicas of every node written have them, waiting at most timeout on each
// node, the nodes in parallel. Otherwise they return an error wrapping
// [ErrNotReplicated]: the bits are set on the master, but not confirmed. A
// write that a cluster redirected to another node while its slot moved is
// never confirmed, since go-redis chose the connection it went on.
//
// Without WithWait, a write returns when its master has it. Redis
// replicates asynchronously, so a master that fails before its replicas
// received a write loses it, and the replica promoted in its place answers
// false for the values it held, with no error.
//
// replicas must be at least 1, and timeout a positive whole number of
// milliseconds; the call's context must leave room for it. A WAIT holds its
// connection, not the server.
func WithWait(replicas int, timeout time.Duration) Option {
	return own(func(s *settings) { s.wait = waitPolicy{replicas, timeout} })
}

// check reports what is wrong with w, an argument of WithWait.
func (w waitPolicy) check(rdb redis.UniversalClient) error {
	switch {
	case w == waitPolicy{}:
		return nil
	case w.replicas < 1:
		return fmt.Errorf("WithWait: the number of replicas (%d) must be at least 1", w.replicas)
	case w.timeout < time.Millisecond || w.timeout%time.Millisecond != 0:
		return fmt.Errorf("WithWait: the timeout (%v) must be a positive whole number of milliseconds", w.timeout)
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
func (w waitPolicy) confirm(ctx context.Context, conn *redis.Conn, node string) error {
	n, err := conn.Wait(ctx, w.replicas, w.timeout).Result()
	if err != nil {
		return fmt.Errorf("%w: WAIT on %s: %w", ErrNotReplicated, node, err)
	}
	if n < int64(w.replicas) {
		return fmt.Errorf("%w: %d of %d replicas of %s acknowledged the write within %v", ErrNotReplicated, n, w.replicas, node, w.timeout)
	}
	return nil
}

// unconfirmed gathers what a write sent in several parts could not have
// confirmed. The bits of a part that WithWait could not confirm are set, so
// the parts after it are sent all the same, and the write reports the first
// such error once every part is sent.
type unconfirmed struct{ err error }

// keep returns nil for an err wrapping ErrNotReplicated, which it keeps if
// it is the first, and err otherwise.
func (u *unconfirmed) keep(err error) error {
	if errors.Is(err, ErrNotReplicated) {
		u.err = cmp.Or(u.err, err)
		return nil
	}
	return err
}
