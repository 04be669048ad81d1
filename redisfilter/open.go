package redisfilter

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"
)

// A found is what Open found of one shard with inspect.lua: its config (""
// for none) and the length of its bitmap, or for a window the number of
// generations its record holds.
type found struct {
	cfg string
	n   int64
}

// errPending reports a filter whose shards Open found in a state that
// another process creating or re-creating it passes through.
var errPending = errors.New("redisfilter: filter is being created")

// open finds the filter's config, or creates the filter, and records the
// config in c. It reads first, without writing, so that a read-only user
// opens an existing filter; it writes only to create, and then only the
// shards that did not change since it read. It creates shards from the last
// to the first, so that a filter whose first shard has its config is
// complete, and one that has some shards but not the first is being
// created, which it waits for.
func (c *core[T]) open(ctx context.Context, s settings) error {
	if err := c.checkEviction(ctx, s); err != nil {
		return err
	}
	data, bitmap := "bitmap", "create"
	if c.windowed {
		data, bitmap = "generations", "generations"
	}
	waits := 10 + len(c.shards)
	for attempt := 0; ; attempt++ {
		calls := make([]call, len(c.shards))
		for i := range c.shards {
			calls[i] = call{[]string{c.shards[i].cfgKey, c.shards[i].dataKey(c.windowed)}, []any{data}}
		}
		seen := make([]found, len(c.shards))
		for i, cmd := range c.runScript(ctx, inspectScript, calls) {
			res, err := cmd.Slice()
			if err != nil {
				return c.wrap("open", err)
			}
			seen[i].cfg, _ = res[0].(string)
			seen[i].n, _ = res[1].(int64)
		}
		cfg, write, err := c.decide(seen, s)
		if errors.Is(err, errPending) && attempt < waits {
			select {
			case <-ctx.Done():
				return c.wrap("open", ctx.Err())
			case <-time.After(50 * time.Millisecond):
			}
			continue
		}
		if err != nil {
			return err
		}
		done := true
		for i := len(c.shards) - 1; i >= 0 && done; i-- {
			if !write[i] {
				continue
			}
			sh, was := &c.shards[i], seen[i]
			what := bitmap
			if !c.windowed && was.cfg == "" && was.n != 0 {
				what = "adopt"
			}
			keys := []string{sh.cfgKey, calls[i].keys[1], sh.holdKey}
			res, err := c.runScript(ctx, createScript, []call{{keys, []any{was.cfg, cfg, sh.nbytes(), was.n, what}}})[0].Slice()
			if err != nil {
				return c.wrap("open", err)
			}
			ok, _ := res[0].(int64)
			done = ok == 1
		}
		if done {
			c.cfg = cfg
			return nil
		}
		if attempt == waits {
			return fmt.Errorf("redisfilter: open %q: the filter changed under every attempt to create it", c.name)
		}
		// Another process created or changed it meanwhile: look again.
	}
}

// decide returns the config an opened filter is to have, given what Open
// found of each shard, and which shards to write it to (creating their
// bitmaps, or re-creating them, or adopting them).
func (c *core[T]) decide(seen []found, s settings) (string, []bool, error) {
	write := make([]bool, len(seen))
	ids := make(map[string]bool)
	fresh, complete := true, true
	var lost []string
	for i, f := range seen {
		if f.cfg != "" && paramsOf(f.cfg) != c.params {
			return "", nil, c.problemError("open", problem{kind: otherConfig, key: c.shards[i].cfgKey, detail: f.cfg})
		}
	}
	for i, f := range seen {
		sh := &c.shards[i]
		if !c.windowed && f.n != 0 && f.n != sh.nbytes() {
			return "", nil, c.problemError("open", problem{kind: wrongLength, key: sh.key, detail: fmt.Sprintf("%d %d", f.n, sh.nbytes())})
		}
		if f.cfg != "" {
			ids[f.cfg] = true
		}
		fresh = fresh && f.cfg == "" && f.n == 0
		ok := f.cfg != "" && f.cfg == seen[0].cfg && (c.windowed || f.n != 0)
		complete = complete && ok
		if !ok {
			lost = append(lost, c.incomplete(sh, f).explain())
		}
	}
	all := func() []bool {
		for i := range write {
			write[i] = true
		}
		return write
	}
	switch {
	case fresh:
		return newConfig(c.params), all(), nil
	case complete:
		return seen[0].cfg, write, nil
	case s.recreate:
		return newConfig(c.params), all(), nil
	case s.adopt && len(ids) <= 1 && c.adoptable(seen):
		cfg := newConfig(c.params)
		for id := range ids {
			cfg = id
		}
		for i, f := range seen {
			write[i] = f.cfg == ""
		}
		return cfg, write, nil
	case len(seen) > 1 && (seen[0].cfg == "" || len(ids) > 1) && c.pending(seen):
		return "", nil, errPending
	}
	advice := "open it with WithRecreate to start it again empty, or rebuild it from a Hybrid's Sync"
	if c.adoptable(seen) && len(ids) <= 1 {
		advice = "if the bitmaps are this filter's, open it with WithAdopt to take them back; otherwise open it with WithRecreate to start it again empty"
	}
	if c.windowed {
		advice = "if the generations are this filter's, open it with WithAdopt to take them back; otherwise delete the filter's keys"
	}
	return "", nil, fmt.Errorf("%w: open %q: %s: the values put may be gone; %s", ErrLost, c.name, strings.Join(lost, "; "), advice)
}

// incomplete returns what is wrong with a shard s that Open found
// incomplete as f.
func (c *core[T]) incomplete(s *shard, f found) problem {
	switch {
	case f.cfg == "" && f.n == 0 && c.windowed:
		return problem{kind: noConfig, key: s.cfgKey}
	case f.cfg == "" && f.n == 0:
		return problem{kind: noShard, key: s.key}
	case f.cfg == "" && c.windowed:
		return problem{kind: orphanGenerations, key: s.cfgKey, detail: fmt.Sprint(f.n)}
	case f.cfg == "":
		return problem{kind: orphanBitmap, key: s.key}
	case f.n == 0 && !c.windowed:
		return problem{kind: noBitmap, key: s.key}
	}
	return problem{kind: otherCreation, key: s.cfgKey}
}

// adoptable reports whether every shard has its bitmap (or for a window,
// whether any has recorded generations), for WithAdopt to take back.
func (c *core[T]) adoptable(seen []found) bool {
	some := false
	for _, f := range seen {
		if !c.windowed && f.n == 0 {
			return false
		}
		some = some || f.n != 0
	}
	return some
}

// pending reports whether every shard Open found is either absent or
// complete, as while another process creates the filter or re-creates it.
func (c *core[T]) pending(seen []found) bool {
	for _, f := range seen {
		absent := f.cfg == "" && f.n == 0
		complete := f.cfg != "" && (c.windowed || f.n != 0)
		if !absent && !complete {
			return false
		}
	}
	return true
}
