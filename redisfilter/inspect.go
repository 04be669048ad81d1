package redisfilter

import (
	"context"
	"fmt"

	"github.com/mitzbloom/mitzbloom/redisfilter/internal/wire"
)

// A found is what Open found of one shard with inspect.lua.
type found struct {
	cfg string // the config key's value, "" for none
	n   int64  // the bitmap's length, or for a window the generations recorded
}

// inspect returns what inspect.lua finds of each shard.
func (c *core[T]) inspect(ctx context.Context) ([]found, error) {
	calls := make([]call, len(c.shards))
	for i := range c.shards {
		calls[i] = c.inspectCall(&c.shards[i])
	}
	return c.inspectCalls(ctx, calls)
}

// inspectSettled returns what inspect does, and whether it is settled: the
// same of the first shard read before and after it. inspect reads the
// shards on their nodes at once, but not at one instant, and a creation
// that began or ended while it read them can look like a loss: the first
// shard read before the claim and others after they were created, or
// others before they were created and the first after it was complete.
// Every creation writes the first shard first and last, so if it held the
// same before and after, the others are not being created.
func (c *core[T]) inspectSettled(ctx context.Context) (seen []found, settled bool, err error) {
	first := []call{c.inspectCall(&c.shards[0])}
	before, err := c.inspectCalls(ctx, first)
	if err != nil {
		return nil, false, err
	}
	if seen, err = c.inspect(ctx); err != nil {
		return nil, false, err
	}
	after, err := c.inspectCalls(ctx, first)
	if err != nil {
		return nil, false, err
	}
	return seen, before[0].cfg == after[0].cfg, nil
}

// inspectCall returns the call of inspect.lua that reads shard s, and
// checks the keys Open would write.
func (c *core[T]) inspectCall(s *shard) call {
	if c.windowed {
		return call{s, []string{s.cfgKey, s.gensKey, s.holdKey}, []any{"generations"}}
	}
	return call{s, []string{s.cfgKey, s.key, s.holdKey, s.logKey}, []any{"bitmap"}}
}

// inspectCalls runs calls of inspect.lua on the shards' masters.
func (c *core[T]) inspectCalls(ctx context.Context, calls []call) ([]found, error) {
	seen := make([]found, len(calls))
	for i, rep := range c.runScript(ctx, inspectScript, wire.Master, calls) {
		res, ok := rep.Val.([]any)
		if rep.Err == nil && (!ok || len(res) != 2) {
			rep.Err = fmt.Errorf("inspect.lua answered %v", rep.Val)
		}
		if rep.Err != nil {
			return nil, c.wrap(ctx, "open", rep.Err)
		}
		seen[i].cfg, _ = res[0].(string)
		seen[i].n, _ = res[1].(int64)
	}
	return seen, nil
}
