package redisfilter

import (
	"fmt"
	"time"

	"github.com/mitzbloom/mitzbloom/bloom"
	"github.com/mitzbloom/mitzbloom/bloom/raw"
	"github.com/mitzbloom/mitzbloom/strategy"

	"github.com/mitzbloom/mitzbloom/redisfilter/internal/wire"
)

// An Option configures [Open] and [OpenWindowed]. [WithStrategy],
// [WithLegacyHashCount] and [WithClock] set the filter's own parameters, as
// the options of package bloom of the same names do for [bloom.New]; the
// others say how the filter is kept in Redis. The zero Option changes
// nothing.
//
// Option is a type of its own rather than [bloom.Option], so that an
// option given where it does not apply, such as WithShardBytes to
// bloom.New or bloom.WithGrowth to Open, does not compile.
type Option struct {
	apply func(*settings)
}

// settings is what a list of Options sets.
type settings struct {
	// filter are the filter's parameters, as bloom's functions take them.
	filter        []bloom.Option
	allowEviction bool
	recreate      bool
	adopt         bool
	shardBytes    int64
	wait          wire.Wait
	logBytes      int64
}

// own returns the Option that sets what set sets.
func own(set func(*settings)) Option { return Option{set} }

// settingsOf returns what opts set: the filter's parameters, as
// [raw.Configure] reads the bloom options they hold, and this package's
// settings.
func settingsOf(opts []Option) (raw.Config, settings) {
	s := settings{logBytes: defaultLogBytes}
	for _, o := range opts {
		if o.apply != nil {
			o.apply(&s)
		}
	}
	return raw.Configure(s.filter...), s
}

// WithStrategy selects the strategy that maps hashes to bits, as
// [bloom.WithStrategy] does for bloom.New. The default is
// [strategy.Murmur128Mitz64]. The strategy is part of the filter's
// parameters: every process must open it with the same.
func WithStrategy(st strategy.Strategy) Option {
	return own(func(s *settings) { s.filter = append(s.filter, bloom.WithStrategy(st)) })
}

// WithLegacyHashCount computes the number of hash functions as Guava 31.x
// and earlier do, as [bloom.WithLegacyHashCount] does for bloom.New. The
// default is current Guava's rule.
func WithLegacyHashCount() Option {
	return own(func(s *settings) { s.filter = append(s.filter, bloom.WithLegacyHashCount()) })
}

// WithClock makes a [Windowed] filter tell the current generation with c's
// Now, as [bloom.WithClock] does for a bloom.Rotating; it never uses c's
// AfterFunc. The default is the system's clock; tests pass a
// [github.com/mitzbloom/mitzbloom/bloom/bloomtest.Clock]. Open ignores it.
func WithClock(c bloom.Clock) Option {
	return own(func(s *settings) { s.filter = append(s.filter, bloom.WithClock(c)) })
}

// WithEvictionAllowed lets Open and OpenWindowed use a server whose
// maxmemory-policy may evict the filter's keys, which they refuse otherwise
// with an error wrapping [ErrEvictable]. Evicted bits are then reported as
// errors wrapping [ErrLost], never as false answers.
func WithEvictionAllowed() Option {
	return own(func(s *settings) { s.allowEviction = true })
}

// WithRecreate lets Open start a lost filter again: one whose config key
// exists but whose bitmap, or one shard's, is gone. Only what was lost is
// created again, empty: every shard that still holds its bitmap keeps its
// bits, so that the values that survived the loss still answer true. The
// filter gets a new identity: every other Filter of the name then gets
// errors wrapping [ErrLost], never empty answers, until it is opened again.
// Without it Open returns an error wrapping ErrLost.
func WithRecreate() Option {
	return own(func(s *settings) { s.recreate = true })
}

// WithAdopt lets Open take an existing bitmap whose config key is gone as
// the filter's, if its length is the one the parameters give, and write the
// config key again. Without it Open returns an error wrapping [ErrLost]. Only
// the length can be checked: adopt a bitmap only if it was created with the
// same parameters. OpenWindowed adopts the recorded generations likewise.
func WithAdopt() Option {
	return own(func(s *settings) { s.adopt = true })
}

// WithShardBytes stores the filter in shards of n bytes each (the last may
// be shorter), each a Redis string in its own hash slot, so that a Redis
// Cluster spreads the filter, its memory and its work over its nodes. n must
// be a positive multiple of 8 and at most 512 MiB, Redis's limit for a
// string; an n at least the filter's size keeps it in one string. Without
// it a filter of up to 16 MiB is one string, and a larger one is sharded in
// shards of 16 MiB, which Redis creates in 10 to 20 ms each, or up to 60 ms
// where the kernel maps fresh memory slowly; smaller shards hold it for
// less as Open creates them, in proportion to their size, for more work per
// batch, which touches more shards. The shard size is part of the filter's
// parameters: every process must open it with the same.
func WithShardBytes(n int64) Option {
	return own(func(s *settings) { s.shardBytes = n })
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
	return own(func(s *settings) { s.wait = wire.Wait{Replicas: replicas, Timeout: timeout} })
}

// Each shard of a plain filter keeps a change log (lua/log.lua): the
// offsets of the bits that every Put, PutMany, Merge and Hybrid push
// changed, appended in the same atomic step as the bits, oldest dropped
// first. A Hybrid reads it from where it read up to last time, and so its
// Sync moves what changed since, rather than the whole filter.
const (
	// defaultLogBytes is the most bytes a shard's change log holds without
	// WithChangeLog: 262,144 bits set.
	defaultLogBytes = 1 << 20
	minLogBytes     = 4 << 10
	maxLogBytes     = 512 << 20
)

// WithChangeLog sets the most bytes of records, n, that each shard's change
// log holds in Redis; the default is 1 MiB. A shard's log holds at most a
// quarter of the shard's bytes whatever n, so that it never takes more of
// Redis's memory than the shard's bitmap: Redis may give a string that
// grows up to twice its length. Every Put, PutMany, Merge and Hybrid push
// appends 4 bytes for each bit it changes (none for a bit already set) to
// the log of the shard it is in, and a log that outgrows its size drops its
// oldest half. A [Hybrid] whose Sync finds that the log dropped what it had
// not read yet reads the whole shard instead, which then costs at most 4
// times what the log would: the size bounds the bits set in a shard, across
// the fleet, between two Syncs of one Hybrid that its Sync moves as a
// change. n must be between 4 KiB and 512 MiB. Processes may use different
// sizes; the log follows the last writer's.
func WithChangeLog(n int64) Option {
	return own(func(s *settings) { s.logBytes = n })
}

// checkLogBytes reports what is wrong with n, the argument of WithChangeLog.
func checkLogBytes(n int64) error {
	if n < minLogBytes || n > maxLogBytes {
		return fmt.Errorf("WithChangeLog: the log's size (%d bytes) must be between %d and %d", n, minLogBytes, maxLogBytes)
	}
	return nil
}
