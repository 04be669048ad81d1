package redisfilter

import (
	"context"
	"encoding/hex"
	"fmt"
	"math/rand/v2"
	"time"

	"github.com/mitzbloom/mitzbloom/bloom"
	"github.com/mitzbloom/mitzbloom/funnel"
	"github.com/mitzbloom/mitzbloom/strategy"
	"github.com/redis/go-redis/v9"
)

// A Filter is a Bloom filter of values of type T kept in Redis, under the keys
// {name} and {name}:config (see the package documentation for the layout).
// The zero Filter is not usable; create one with [Open].
//
// A Filter holds no state of its own beyond its parameters: it is safe for
// concurrent use by multiple goroutines, and any number of Filters, in any
// number of processes, may share one filter in Redis. Each Put sets its bits
// in one atomic script, so a MightContain that starts after a Put returned
// sees them; as in Guava, two concurrent Puts of the same new value may both
// report a change.
type Filter[T any] struct {
	c   core[T]
	key string
}

// Open returns the filter called name in the Redis server or cluster that
// rdb talks to, for about expectedInsertions values with a false-positive
// probability of about fpp, sized as [bloom.New] sizes it. It creates the
// filter, empty and at its full size, if it does not exist, and otherwise
// checks that it was created with the same bit size, number of hash
// functions, strategy and funnel name: a filter with other parameters is an
// error wrapping [ErrMismatch], and a key under the filter's name that holds
// something else one wrapping [ErrNotFilter]. If the config key exists but
// the bitmap does not, Open re-creates the bitmap, empty.
//
// Open returns an error wrapping [bloom.ErrInvalidArgument] for arguments
// [bloom.New] rejects, an empty name, a nil rdb, or a funnel without a name
// (see [WithFunnelName]), and one wrapping [bloom.ErrTooLarge] for a filter of
// more than 2³² bits, which Redis cannot hold.
func Open[T any](ctx context.Context, rdb redis.UniversalClient, name string, f funnel.Funnel[T], expectedInsertions int64, fpp float64, opts ...Option) (*Filter[T], error) {
	c, err := newCore(rdb, name, f, expectedInsertions, fpp, "", newOptions(opts))
	if err != nil {
		return nil, err
	}
	filter := &Filter[T]{c: c, key: "{" + name + "}"}
	if err := c.open(ctx, filter.key); err != nil {
		return nil, err
	}
	return filter, nil
}

// Put adds v to f and reports whether any bit changed, which means v was
// certainly not in f before. It costs one round trip.
func (f *Filter[T]) Put(ctx context.Context, v T) (bool, error) {
	var changed [1]bool
	res, err := f.c.eval(ctx, "put", putScript, []string{f.c.cfgKey, f.key}, "0", []T{v}, changed[:0])
	return len(res) == 1 && res[0], err
}

// MightContain reports whether v might have been put in f; false means it
// certainly was not. It costs one round trip.
func (f *Filter[T]) MightContain(ctx context.Context, v T) (bool, error) {
	var found [1]bool
	res, err := f.c.eval(ctx, "mightContain", containsScript, []string{f.c.cfgKey, f.key}, "0", []T{v}, found[:0])
	return len(res) == 1 && res[0], err
}

// PutMany adds every value of vs to f, in one round trip for batches of up to
// 16·⌊4096/k⌋ values (see the package documentation). On error, some of the
// values may have been added.
func (f *Filter[T]) PutMany(ctx context.Context, vs []T) error {
	_, err := f.c.eval(ctx, "putMany", putScript, []string{f.c.cfgKey, f.key}, "0", vs, nil)
	return err
}

// MightContainMany appends to dst, for each value of vs in order, whether it
// might have been put in f, and returns the extended slice. It makes one
// round trip for batches of up to 16·⌊4096/k⌋ values. On error it returns dst
// unchanged.
func (f *Filter[T]) MightContainMany(ctx context.Context, dst []bool, vs []T) ([]bool, error) {
	return f.c.eval(ctx, "mightContainMany", containsScript, []string{f.c.cfgKey, f.key}, "0", vs, dst)
}

// Snapshot returns a local copy of f, read with one GET (in a transaction
// with the config key, to check it): a [bloom.Filter] with f's funnel that
// equals one built from the same puts, and that Guava would read from the
// same bytes prefixed with Guava's header. It allocates about twice
// BitSize()/8 bytes while it decodes.
func (f *Filter[T]) Snapshot(ctx context.Context) (*bloom.Filter[T], error) {
	return f.c.snapshot(ctx, f.key, false)
}

// mergeTTL bounds how long the bits Merge sends can outlive a Merge that
// fails between its two commands.
const mergeTTL = time.Minute

// mergeScript ORs KEYS[3], a temporary copy of a local filter's bits, into
// the bitmap KEYS[2] and deletes it, also when it fails.
var mergeScript = redis.NewScript(scriptPrelude("redis.call('DEL', KEYS[3])") + `
local len = redis.pcall('STRLEN', KEYS[2])
if type(len) == 'table' then return fail(len.err) end
if len == 0 then return fail('MITZBLOOM_NOTFOUND bitmap ' .. KEYS[2] .. ' is missing') end
if len ~= nbytes then
  return fail('MITZBLOOM_NOTFILTER ' .. KEYS[2] .. ' holds ' .. len .. ' bytes, want ' .. nbytes)
end
local tmp = redis.call('STRLEN', KEYS[3])
if tmp ~= nbytes then return fail('temporary key ' .. KEYS[3] .. ' holds ' .. tmp .. ' bytes, want ' .. nbytes) end
redis.call('BITOP', 'OR', KEYS[2], KEYS[2], KEYS[3])
redis.call('DEL', KEYS[3])
return 'OK'
`)

// Merge adds every value put in local to f, by ORing local's bits into f's
// with BITOP OR, as [bloom.Filter.PutAll] does locally. It sends the bits to
// a temporary key in f's hash slot and runs the OR in the same round trip.
// A local filter with another number of hash functions, bit size, strategy
// or funnel (see [funnel.Equal]) is an error wrapping [bloom.ErrIncompatible],
// and f is unchanged.
// Puts into local while Merge runs may or may not be merged.
func (f *Filter[T]) Merge(ctx context.Context, local *bloom.Filter[T]) error {
	if err := f.c.checkLocal(local); err != nil {
		return err
	}
	data, err := local.MarshalBinary()
	if err != nil {
		return f.c.wrap("merge", err)
	}
	var suffix [8]byte
	for i := range suffix {
		suffix[i] = byte(rand.Uint32())
	}
	tmp := f.key + ":merge:" + hex.EncodeToString(suffix[:])
	keys := []string{f.c.cfgKey, f.key, tmp}
	var merge *redis.Cmd
	_, err = f.c.rdb.Pipelined(ctx, func(pipe redis.Pipeliner) error {
		pipe.Set(ctx, tmp, data[6:], mergeTTL) // the words, without Guava's header
		merge = pipe.EvalSha(ctx, mergeScript.Hash(), keys, f.c.cfg, f.c.nbytes())
		return nil
	})
	if redis.HasErrorPrefix(merge.Err(), "NOSCRIPT") {
		// The bits are in Redis already; only the script was missing.
		err = mergeScript.Run(ctx, f.c.rdb, keys, f.c.cfg, f.c.nbytes()).Err()
	}
	return f.c.wrap("merge", err)
}

// bitCountScript counts the bits set in KEYS[2].
var bitCountScript = redis.NewScript(scriptPrelude("") + `
local len = redis.call('STRLEN', KEYS[2])
if len == 0 then return fail('MITZBLOOM_NOTFOUND bitmap ' .. KEYS[2] .. ' is missing') end
if len ~= nbytes then
  return fail('MITZBLOOM_NOTFILTER ' .. KEYS[2] .. ' holds ' .. len .. ' bytes, want ' .. nbytes)
end
return redis.call('BITCOUNT', KEYS[2])
`)

// BitCount returns the number of bits set in f, counted by Redis's BITCOUNT.
func (f *Filter[T]) BitCount(ctx context.Context) (int64, error) {
	n, err := bitCountScript.Run(ctx, f.c.rdb, []string{f.c.cfgKey, f.key}, f.c.cfg, f.c.nbytes()).Int64()
	return n, f.c.wrap("bitCount", err)
}

// Delete removes f's keys from Redis. Calls on f, and on other Filters of the
// same name, then return errors wrapping [ErrNotFound] until the filter is
// opened again.
func (f *Filter[T]) Delete(ctx context.Context) error {
	return f.c.wrap("delete", f.c.rdb.Del(ctx, f.key, f.c.cfgKey).Err())
}

// BitSize returns the number of bits in f, a multiple of 64.
func (f *Filter[T]) BitSize() int64 { return f.c.bitSize }

// NumHashFunctions returns k, the number of bits each value sets.
func (f *Filter[T]) NumHashFunctions() int { return f.c.k }

// Strategy returns the strategy f maps hashes to bits with.
func (f *Filter[T]) Strategy() strategy.Strategy { return f.c.strategy }

// Key returns the Redis key of f's bitmap, {name}.
func (f *Filter[T]) Key() string { return f.key }

// ConfigKey returns the Redis key of f's parameters, {name}:config.
func (f *Filter[T]) ConfigKey() string { return f.c.cfgKey }

// String returns a short description of f, such as
// `redisfilter.Filter{"users": funnel.String MURMUR128_MITZ_64 9600 bits, 7 hash functions}`.
func (f *Filter[T]) String() string {
	return fmt.Sprintf("redisfilter.Filter{%q: %v %v %d bits, %d hash functions}", f.c.name, f.c.fname, f.c.strategy, f.c.bitSize, f.c.k)
}
