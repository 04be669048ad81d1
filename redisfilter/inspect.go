package redisfilter

import (
	"context"
	"fmt"
)

// A found is what Open found of one shard with inspect.lua.
type found struct {
	cfg string // the config key's value, "" for none
	n   int64  // the bitmap's length, or for a window the generations recorded
	now int64  // the server's time, Unix ms
}

// inspect returns what inspect.lua finds of each shard, and of {name#0}, the
// first shard of a filter of several shards in the releases before this
// one.
func (c *core[T]) inspect(ctx context.Context) ([]found, found, error) {
	legacy := &shard{key: "{" + c.name + "#0}", cfgKey: "{" + c.name + "#0}:config"}
	calls := make([]call, len(c.shards), len(c.shards)+1)
	for i := range c.shards {
		calls[i] = c.inspectCall(&c.shards[i])
	}
	calls = append(calls, call{legacy, []string{legacy.cfgKey, legacy.key}, []any{"bitmap"}})
	seen, err := c.inspectCalls(ctx, calls)
	if err != nil {
		return nil, found{}, err
	}
	return seen[:len(c.shards)], seen[len(c.shards)], nil
}

// inspectSettled returns what inspect does, and whether it is settled: the
// same of the first shard read before and after it. inspect reads the
// shards on their nodes at once, but not at one instant, and a creation
// that began or ended while it read them can look like a loss: the first
// shard read before the claim and others after they were created, or
// others before they were created and the first after it was complete.
// Every creation writes the first shard first and last, so if it held the
// same before and after, the others are not being created.
func (c *core[T]) inspectSettled(ctx context.Context) (seen []found, legacy found, settled bool, err error) {
	first := []call{c.inspectCall(&c.shards[0])}
	before, err := c.inspectCalls(ctx, first)
	if err != nil {
		return nil, found{}, false, err
	}
	if seen, legacy, err = c.inspect(ctx); err != nil {
		return nil, found{}, false, err
	}
	after, err := c.inspectCalls(ctx, first)
	if err != nil {
		return nil, found{}, false, err
	}
	return seen, legacy, before[0].cfg == after[0].cfg, nil
}

// inspectCall returns the call of inspect.lua that reads shard s, and
// checks the keys Open would write.
func (c *core[T]) inspectCall(s *shard) call {
	if c.windowed {
		return call{s, []string{s.cfgKey, s.gensKey, s.holdKey}, []any{"generations"}}
	}
	return call{s, []string{s.cfgKey, s.key, s.holdKey, s.logKey, s.logState}, []any{"bitmap"}}
}

// inspectCalls runs calls of inspect.lua on the shards' masters.
func (c *core[T]) inspectCalls(ctx context.Context, calls []call) ([]found, error) {
	seen := make([]found, len(calls))
	for i, rep := range c.runScript(ctx, inspectScript, master, calls) {
		res, ok := rep.val.([]any)
		if rep.err == nil && (!ok || len(res) != 3) {
			rep.err = fmt.Errorf("inspect.lua answered %v", rep.val)
		}
		if rep.err != nil {
			return nil, c.wrap(ctx, "open", rep.err)
		}
		seen[i].cfg, _ = res[0].(string)
		seen[i].n, _ = res[1].(int64)
		seen[i].now, _ = res[2].(int64)
	}
	return seen, nil
}
