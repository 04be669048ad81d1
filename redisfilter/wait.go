package redisfilter

import (
	"time"

	"github.com/mitzbloom/mitzbloom/redisfilter/internal/wire"
)

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
	return own(func(s *settings) { s.wait = wire.Wait{Replicas: replicas, Timeout: timeout} })
}
