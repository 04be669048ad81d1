package redisfilter

import (
	"context"
	"fmt"

	"github.com/mitzbloom/mitzbloom/bloom"
	"github.com/mitzbloom/mitzbloom/funnel"
	"github.com/mitzbloom/mitzbloom/strategy"
	"github.com/redis/go-redis/v9"
)

// A Filter is a Bloom filter of values of type T kept in Redis, under the keys
// {name} and {name}:config, or for a sharded filter {name#s} and
// {name#s}:config for each shard s (see the package documentation for the
// layout).
// The zero Filter is not usable; create one with [Open].
//
// A Filter holds no state of its own beyond its parameters: it is safe for
// concurrent use by multiple goroutines, and any number of Filters, in any
// number of processes, may share one filter in Redis. Each Put sets its bits
// in one atomic script, so a MightContain that starts after a Put returned
// sees them; as in Guava, two concurrent Puts of the same new value may both
// report a change.
type Filter[T any] struct {
	c core[T]
}

// Open returns the filter called name in the Redis server or cluster that
// rdb talks to, for about expectedInsertions values with a false-positive
// probability of about fpp, sized as [bloom.New] sizes it. It creates the
// filter, empty and at its full size, if it does not exist, and otherwise
// checks that it was created with the same parameters: bit size, number of
// hash functions, strategy, funnel name and shard size. A filter of the
// name with other parameters, or a window of the name, is an error wrapping
// [ErrMismatch], and a key under the filter's name that holds something
// else one wrapping [ErrNotFilter].
//
// Open never re-creates a filter that lost its bits: if the config key
// exists but the bitmap does not, it returns an error wrapping [ErrLost],
// unless [WithRecreate] is given; if the bitmap exists but the config key
// does not, likewise unless [WithAdopt] is given. It refuses, with an error
// wrapping [ErrEvictable], a server whose maxmemory-policy may evict the
// filter's keys, unless [WithEvictionAllowed] is given. Opening an existing
// filter only reads, so a read-only user can do it.
//
// Open returns an error wrapping [bloom.ErrInvalidArgument] for arguments
// [bloom.New] rejects, a nil rdb, a funnel without a name (one with no
// String method, such as a [funnel.Func]: wrap it with [funnel.Named]), or a
// name that is empty, longer than 256 bytes, or
// holds '{', '}', '#' or a control character, or a shard size
// [WithShardBytes] rejects. A filter of more than 16 MiB is sharded (see the
// package documentation); a process that opens it while another creates it
// waits for the creation, and one that finds a creation abandoned finishes
// it once it has seen the creation make no step for 5 s. A redis.Ring is not supported.
func Open[T any](ctx context.Context, rdb redis.UniversalClient, name string, f funnel.Funnel[T], expectedInsertions int64, fpp float64, opts ...Option) (*Filter[T], error) {
	params, s := settingsOf(opts)
	c, err := newCore(rdb, name, f, expectedInsertions, fpp, "", params, s)
	if err != nil {
		return nil, err
	}
	filter := &Filter[T]{c: c}
	if err := filter.c.open(ctx, s); err != nil {
		return nil, err
	}
	filter.c.lostAdvice = "; the values put are gone: open the filter with WithRecreate to create again what was lost, or let a Hybrid's Sync rebuild it; a Filter of a re-created filter must be opened again"
	return filter, nil
}

// Put adds v to f and reports whether any bit changed, which means v was
// certainly not in f before. It costs one round trip.
func (f *Filter[T]) Put(ctx context.Context, v T) (bool, error) {
	var changed [1]bool
	res, err := f.c.run(ctx, &batch{op: "put", put: true}, []T{v}, changed[:0])
	return len(res) == 1 && res[0], err
}

// MightContain reports whether v might have been put in f; false means it
// certainly was not. It costs one round trip.
func (f *Filter[T]) MightContain(ctx context.Context, v T) (bool, error) {
	var found [1]bool
	res, err := f.c.run(ctx, &batch{op: "mightContain"}, []T{v}, found[:0])
	return len(res) == 1 && res[0], err
}

// PutMany adds every value of vs to f. In batches of up to ⌊65536/k⌋
// values, it puts fewer than 16 in one round trip per node; from 16 on, it
// first reads them as MightContainMany does, on the masters, in one or two
// round trips, and then puts those it did not find, in one more (see the
// package documentation). On error, some of the values may have been
// added.
func (f *Filter[T]) PutMany(ctx context.Context, vs []T) error {
	_, err := f.c.run(ctx, &batch{op: "putMany", put: true}, vs, nil)
	return err
}

// MightContainMany appends to dst, for each value of vs in order, whether it
// might have been put in f, and returns the extended slice. For batches of
// up to ⌊65536/k⌋ values it makes one round trip per node, or two from 16
// values on: the first bit of every value, then the other bits of those
// whose first bit is set (see the package documentation). On error it
// returns dst unchanged.
func (f *Filter[T]) MightContainMany(ctx context.Context, dst []bool, vs []T) ([]bool, error) {
	return f.c.run(ctx, &batch{op: "mightContainMany"}, vs, dst)
}

// Snapshot returns a local copy of f: a [bloom.Filter] with f's funnel that
// equals one built from the same puts, and that Guava would read from the
// same bytes prefixed with Guava's header. It reads the bitmap in chunks of
// 1 MiB, each with GETRANGE in a read-only script that checks the config,
// so that it works for a read-only user, on a replica, and on a server out
// of memory, and holds the server for about a millisecond at a time. Bits
// are only ever set, and a filter re-created meanwhile is an error, so the
// copy holds every value put before Snapshot started, and maybe some put
// while it ran. It allocates about twice BitSize()/8 bytes.
func (f *Filter[T]) Snapshot(ctx context.Context) (*bloom.Filter[T], error) {
	return f.c.snapshot(ctx, 0, 0)
}

// Merge adds every value put in local to f, by ORing local's bits into f's,
// as [bloom.Filter.PutAll] does locally: in chunks of 1 MiB, each ORed in
// one script (with BITOP through two temporary keys in f's hash slot, which
// the script deletes), 4 per round trip; chunks of local with no bit set
// are not sent. A local filter with another number of hash
// functions, bit size, strategy or funnel (see [funnel.Equal]) is an error
// wrapping [bloom.ErrIncompatible], and f is unchanged. Puts into local
// while Merge runs may or may not be merged; on error, some chunks may have
// been merged.
func (f *Filter[T]) Merge(ctx context.Context, local *bloom.Filter[T]) error {
	return f.c.merge(ctx, local, nil)
}

// BitCount returns the number of bits set in f, counted by Redis's
// BITCOUNT in chunks, each in a read-only script that checks the config.
func (f *Filter[T]) BitCount(ctx context.Context) (int64, error) {
	counts, err := f.c.bitCounts(ctx, "bitCount", []int64{0}, 0)
	if err != nil {
		return 0, err
	}
	return counts[0], nil
}

// Delete removes f's keys from Redis: those that redisfilter wrote, as
// the marks it writes tell, each shard's in one atomic step. A key of the
// filter's that holds what redisfilter did not write is left as it is, and
// Delete returns an error wrapping [ErrNotFilter] that names it. Calls on
// f, and on other Filters of the same name, then return errors wrapping
// [ErrLost] until the filter is opened again.
func (f *Filter[T]) Delete(ctx context.Context) error {
	return f.c.delete(ctx, func(i int) call {
		s := &f.c.shards[i]
		return call{s, []string{s.cfgKey, s.key, s.holdKey, s.logKey}, []any{"bitmap"}}
	})
}

// BitSize returns the number of bits in f, a multiple of 64.
func (f *Filter[T]) BitSize() int64 { return f.c.bitSize }

// NumHashFunctions returns k, the number of bits each value sets.
func (f *Filter[T]) NumHashFunctions() int { return f.c.k }

// Strategy returns the strategy f maps hashes to bits with.
func (f *Filter[T]) Strategy() strategy.Strategy { return f.c.strategy }

// Keys returns the Redis keys of f's bitmaps, in order: {name} for a filter
// of one string, and {name}, {name#1}, {name#2} and so on (or {name#s.j},
// where the slot of {name#s} is not one the layout gives shard s: see the
// package documentation) for a sharded one. Their values, concatenated, are
// the words of Guava's writeTo stream.
func (f *Filter[T]) Keys() []string {
	keys := make([]string, len(f.c.shards))
	for i := range f.c.shards {
		keys[i] = f.c.shards[i].key
	}
	return keys
}

// ConfigKeys returns the Redis keys of f's parameters, one per shard in the
// order of Keys: the bitmap's key followed by ":config".
func (f *Filter[T]) ConfigKeys() []string { return f.c.configKeys() }

// String returns a short description of f, such as
// `redisfilter.Filter{"users": funnel.String MURMUR128_MITZ_64 9600 bits, 7 hash functions}`.
func (f *Filter[T]) String() string {
	return fmt.Sprintf("redisfilter.Filter{%q: %v %v %d bits, %d hash functions}", f.c.name, f.c.fname, f.c.strategy, f.c.bitSize, f.c.k)
}
