package redisfilter

import (
	"fmt"

	"github.com/mitzbloom/mitzbloom/bloom"
	"github.com/mitzbloom/mitzbloom/internal/options"
)

// An Option configures [Open] and [OpenWindowed]. The options of package
// bloom set the filter's own parameters, as they do for [bloom.New]:
// [bloom.WithStrategy] (default MURMUR128_MITZ_64), [bloom.WithLegacyHashCount]
// (default: current Guava's rule), and, for a [Windowed] filter, which uses
// only its Now method, [bloom.WithClock] (default: the system clock; Open
// ignores it). The options below say how the filter is kept in Redis; the
// functions of package bloom refuse them.
type Option = bloom.Option

// settings is what this package's own options set.
type settings struct {
	allowEviction bool
	recreate      bool
	adopt         bool
	shardBytes    int64
	wait          waitPolicy
	logBytes      int64
}

// own returns the Option called name that sets what set sets.
func own(name string, set func(*settings)) Option {
	return func(s options.Settings) options.Settings {
		s.Others = append(s.Others, options.Other{Name: "redisfilter." + name, Value: set})
		return s
	}
}

// settingsOf returns what opts set: the filter's parameters, as bloom's
// functions take them, and this package's settings.
func settingsOf(opts []Option) (options.Settings, settings, error) {
	filter := options.Apply(opts)
	s := settings{logBytes: defaultLogBytes}
	for _, o := range filter.Others {
		set, ok := o.Value.(func(*settings))
		if !ok {
			return filter, s, fmt.Errorf("%w: %s is not an option of redisfilter", bloom.ErrInvalidArgument, o.Name)
		}
		set(&s)
	}
	filter.Others = nil
	if filter.PlainWrites {
		return filter, s, fmt.Errorf("%w: bloom.WithUnsynchronizedWrites is not an option of redisfilter: Redis sets bits atomically", bloom.ErrInvalidArgument)
	}
	return filter, s, nil
}

// WithEvictionAllowed lets Open and OpenWindowed use a server whose
// maxmemory-policy may evict the filter's keys, which they refuse otherwise
// with an error wrapping [ErrEvictable]. Evicted bits are then reported as
// errors wrapping [ErrLost], never as false answers.
func WithEvictionAllowed() Option {
	return own("WithEvictionAllowed", func(s *settings) { s.allowEviction = true })
}

// WithRecreate lets Open start a lost filter again: one whose config key
// exists but whose bitmap, or one shard's, is gone. Only what was lost is
// created again, empty: every shard that still holds its bitmap keeps its
// bits, so that the values that survived the loss still answer true. The
// filter gets a new identity: every other Filter of the name then gets
// errors wrapping [ErrLost], never empty answers, until it is opened again.
// Without it Open returns an error wrapping ErrLost.
func WithRecreate() Option {
	return own("WithRecreate", func(s *settings) { s.recreate = true })
}

// WithAdopt lets Open take an existing bitmap whose config key is gone as
// the filter's, if its length is the one the parameters give, and write the
// config key again. Without it Open returns an error wrapping [ErrLost]. Only
// the length can be checked: adopt a bitmap only if it was created with the
// same parameters. OpenWindowed adopts the recorded generations likewise.
func WithAdopt() Option {
	return own("WithAdopt", func(s *settings) { s.adopt = true })
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
	return own("WithShardBytes", func(s *settings) { s.shardBytes = n })
}
