package redisfilter

import (
	"context"
	"fmt"
	"reflect"
	"strings"

	"github.com/mitzbloom/mitzbloom/bloom"
	"github.com/mitzbloom/mitzbloom/bloom/raw"
	"github.com/mitzbloom/mitzbloom/funnel"
	"github.com/mitzbloom/mitzbloom/strategy"
	"github.com/redis/go-redis/v9"

	"github.com/mitzbloom/mitzbloom/redisfilter/internal/wire"
)

// core is what Filter and Windowed share: the parameters, the shards, and
// the config that records them.
type core[T any] struct {
	wire   *wire.Wire // carries the commands and scripts, through the client
	name   string
	funnel funnel.Funnel[T]
	fname  string // the funnel's name in the config
	// expected, fpp and sizing are Open's arguments, which size a local
	// copy as the filter is sized.
	expected int64
	fpp      float64
	sizing   []bloom.Option
	strategy strategy.Strategy
	k        int
	bitSize  int64
	// shards are the filter's strings, of shardBits bits each but maybe
	// the last; one, {name}, for a filter not sharded.
	shards    []shard
	shardBits int64
	windowed  bool
	params    string // the config key's value without its identity
	// cfg is the config keys' value, the same in every shard, its identity
	// included, as Open found or created it; only a Hybrid, which has a
	// core of its own, changes it after that, when it re-creates a lost
	// filter.
	cfg string
	// lostAdvice ends the message of an ErrLost error: what to do.
	lostAdvice string
	logBytes   int64 // the most bytes a shard's change log holds
}

// newCore validates the arguments of Open and OpenWindowed, sizes the
// filter and lays out its shards. window is appended to the config, "" for
// a plain filter.
func newCore[T any](rdb redis.UniversalClient, name string, f funnel.Funnel[T], expectedInsertions int64, fpp float64, window string, filter raw.Config, s settings) (core[T], error) {
	var c core[T]
	switch v := reflect.ValueOf(rdb); {
	case rdb == nil || v.Kind() == reflect.Pointer && v.IsNil():
		return c, fmt.Errorf("%w: Redis client is nil (%T)", bloom.ErrInvalidArgument, rdb)
	case f == nil:
		return c, fmt.Errorf("%w: funnel is nil", bloom.ErrInvalidArgument)
	}
	if _, ok := rdb.(*redis.Ring); ok {
		return c, fmt.Errorf("%w: a redis.Ring is not supported: it shards keys itself, without the hash slots a filter's keys share; use a Client or a ClusterClient", bloom.ErrInvalidArgument)
	}
	if err := validName(name); err != nil {
		return c, fmt.Errorf("%w: %v", bloom.ErrInvalidArgument, err)
	}
	if err := s.wait.Check(rdb); err != nil {
		return c, fmt.Errorf("%w: %v", bloom.ErrInvalidArgument, err)
	}
	if err := checkLogBytes(s.logBytes); err != nil {
		return c, fmt.Errorf("%w: %v", bloom.ErrInvalidArgument, err)
	}
	// A funnel cannot be stored: its name stands for it, the same in every
	// process, which what fmt prints for a function is not.
	named, ok := f.(fmt.Stringer)
	if !ok || named.String() == "" {
		return c, fmt.Errorf("%w: funnel %T has no name; wrap it with funnel.Named, as in funnel.Named(\"orders/v1\", f), and open the filter with the same name in every process", bloom.ErrInvalidArgument, f)
	}
	bitSize, k, err := bloom.Size(expectedInsertions, fpp, s.filter...)
	if err != nil {
		return c, err
	}
	shardBytes, err := shardBytesFor(bitSize/8, s.shardBytes)
	if err != nil {
		return c, fmt.Errorf("%w: %v", bloom.ErrInvalidArgument, err)
	}
	params := filterParams{bitSize: bitSize, k: k, strategy: filter.Strategy, funnel: named.String(), window: window}
	if shardBytes*8 < bitSize {
		params.shardBytes = shardBytes
	}
	return core[T]{
		wire:      wire.New(rdb, s.wait, isProblem),
		name:      name,
		funnel:    f,
		fname:     params.funnel,
		expected:  expectedInsertions,
		fpp:       fpp,
		sizing:    s.filter,
		strategy:  filter.Strategy,
		k:         k,
		bitSize:   bitSize,
		shards:    layout(name, bitSize, shardBytes),
		shardBits: shardBytes * 8,
		windowed:  window != "",
		params:    params.String(),
		logBytes:  s.logBytes,
	}, nil
}

// configKeys returns the shards' config keys, in order.
func (c *core[T]) configKeys() []string {
	keys := make([]string, len(c.shards))
	for i := range c.shards {
		keys[i] = c.shards[i].cfgKey
	}
	return keys
}

// delete runs delete.lua on each shard, with the call that del returns,
// and reports the keys it left, which hold what redisfilter did not write.
func (c *core[T]) delete(ctx context.Context, del func(s int) call) error {
	calls := make([]call, len(c.shards))
	for i := range c.shards {
		calls[i] = del(i)
	}
	var left []string
	for _, rep := range c.runScript(ctx, deleteScript, wire.Write, calls) {
		if rep.Err != nil {
			return c.wrap(ctx, "delete", rep.Err)
		}
		keys, _ := rep.Val.([]any)
		for _, k := range keys {
			left = append(left, fmt.Sprint(k))
		}
	}
	if len(left) > 0 {
		return fmt.Errorf("%w: delete %q: left %s, which redisfilter did not write: delete them, or leave them", ErrNotFilter, c.name, strings.Join(left, ", "))
	}
	return nil
}
