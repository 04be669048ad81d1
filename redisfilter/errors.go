package redisfilter

import "errors"

// Errors returned by this package about the filter in Redis wrap one of
// these, so callers can test for them with errors.Is. Errors for bad
// arguments wrap [bloom.ErrInvalidArgument], for a filter too large for Redis
// [bloom.ErrTooLarge], and for merging an incompatible local filter
// [bloom.ErrIncompatible]. Errors from Redis and the network are returned
// wrapped, so errors.Is finds context.DeadlineExceeded among them, and the
// Redis errors an operator must act on also wrap one of the Err* sentinels
// below that name them.
var (
	// ErrMismatch reports a filter stored in Redis with parameters (bit size,
	// number of hash functions, strategy, funnel name, window) other than
	// those it was opened with. The message shows both. Open the filter with
	// its parameters, or under another name.
	ErrMismatch = errors.New("redisfilter: parameters do not match")

	// ErrLost reports a filter that existed and lost its bits: its bitmap,
	// a window generation that should exist, or its config key is gone
	// (deleted, evicted, flushed, or lost with a restart of a server that
	// does not persist its data), or the filter was re-created since this
	// Filter opened it. A call that gets it answers nothing, since any
	// answer could be a false "never seen". The message says what is gone
	// and what to do: [WithRecreate] starts a lost filter again empty,
	// [WithAdopt] takes a bitmap whose config key is gone back, and a Filter
	// of a re-created filter must be opened again.
	ErrLost = errors.New("redisfilter: filter lost")

	// ErrEvictable reports a server whose maxmemory-policy may evict the
	// filter's keys: allkeys-* for every filter, and volatile-* as well for
	// a windowed one, whose bitmaps have an expiry. Evicted bits become
	// [ErrLost] errors. Set the policy to noeviction (or volatile-* for a
	// plain filter), or open with [WithEvictionAllowed].
	ErrEvictable = errors.New("redisfilter: server may evict the filter")

	// ErrNotFilter reports a key that holds something other than a filter: a
	// value of another type or a string of the wrong length. Delete the key
	// or use another name.
	ErrNotFilter = errors.New("redisfilter: key holds no filter")

	// ErrOutOfMemory wraps Redis's OOM error: the server is at its
	// maxmemory under noeviction and refuses writes. Reads (MightContain,
	// MightContainMany, Snapshot, BitCount) still work; raise maxmemory or
	// free memory for Put, PutMany, Merge and Open to work again.
	ErrOutOfMemory = errors.New("redisfilter: Redis is out of memory")

	// ErrNoPermission wraps Redis's NOPERM error: the ACL user lacks a
	// command or key pattern the call needs. The package documentation lists
	// what each kind of call needs.
	ErrNoPermission = errors.New("redisfilter: no permission")

	// ErrTryAgain wraps Redis Cluster's TRYAGAIN error: the filter's slot
	// is being migrated and a Put names keys of it some of which have moved
	// and some not, so neither node can run it. go-redis's ClusterClient has retried it with backoff
	// (ClusterOptions.MaxRedirects times, 3 by default) and follows ASK
	// redirections itself. Retry after the migration ends; no answer was
	// given, so none is wrong.
	ErrTryAgain = errors.New("redisfilter: slot is migrating")

	// ErrCrossSlot wraps Redis Cluster's CROSSSLOT error. Every command and
	// script names the keys of one shard, which share a hash slot, so it
	// means keys were renamed or the client is not a cluster client; it is
	// a bug to report.
	ErrCrossSlot = errors.New("redisfilter: keys in different slots")
)
