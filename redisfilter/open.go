package redisfilter

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/mitzbloom/mitzbloom/redisfilter/internal/wire"
)

// Open reads every shard first, without writing, so that a read-only user
// opens an existing filter, and writes only to create a filter, and then
// only shards still as it read them. A filter's first shard, {name}, holds
// its config whatever its layout, so that every Open of a name meets every
// other there.
//
// A filter of several shards is created in steps: its first shard's config
// key is claimed (lua/claim.lua), then the other shards are created, from
// the last, and the first last, its config replacing the claim. So a
// filter whose first shard has its config is complete, one whose first
// shard holds a claim is being created, and one whose other shards exist
// without any config in the first has lost its first shard. An Open that
// finds a claim waits while it is renewed, and takes over one that it has
// seen unchanged for claimLease, by its own clock, finishing the creation it
// claimed; since no Filter could open a filter before it was complete, none
// has had a put.
const (
	// claimLease is how long a claim holds unless renewed: the creation
	// renews it before each shard, which takes some 10 ms to create, so
	// this is how long an abandoned creation delays the next Open.
	claimLease = 5 * time.Second
	// pollInterval is how often an Open waiting for another's creation looks
	// again.
	pollInterval = 50 * time.Millisecond
)

// A creation is what Open is to write.
type creation struct {
	cfg   string // the config of the filter
	claim bool   // claim the first shard before writing the others
	write []bool // the shards to write
}

// errWait reports a filter that another process is creating; errChanged, a
// filter that changed since Open read it.
var (
	errWait    = errors.New("redisfilter: filter is being created")
	errChanged = errors.New("redisfilter: filter changed while it was being created")
)

// A claimWatch is the claim an Open found in the first shard's config key,
// and since when, by the Open's clock.
type claimWatch struct {
	claim string
	since time.Time
}

// live reports whether cfg, the first shard's config, is a claim that is
// live: one renewed within claimLease, as far as w, which it updates, has
// seen, and not given up.
func (w *claimWatch) live(cfg string) bool {
	_, token, ok := parseClaim(cfg)
	if !ok {
		return false
	}
	if cfg != w.claim {
		*w = claimWatch{cfg, time.Now()}
	}
	return token != "0" && time.Since(w.since) < claimLease
}

// open finds the filter's config, or creates the filter, and records the
// config in c.
func (c *core[T]) open(ctx context.Context, s settings) error {
	if err := c.checkEviction(ctx, s); err != nil {
		return err
	}
	var watch claimWatch
	for attempt := 0; ; attempt++ {
		seen, err := c.inspect(ctx)
		if err != nil {
			return err
		}
		create, err := c.decide(seen, s, watch.live(seen[0].cfg))
		if errors.Is(err, ErrLost) {
			var settled bool
			seen, settled, err = c.inspectSettled(ctx)
			if err != nil {
				return err
			}
			if !settled && attempt < 10 {
				continue // a creation began or ended while Open read it
			}
			create, err = c.decide(seen, s, watch.live(seen[0].cfg))
		}
		if errors.Is(err, errWait) {
			if !wire.Sleep(ctx, pollInterval) {
				return c.wrap(ctx, "open", ctx.Err())
			}
			continue
		}
		if err != nil {
			return err
		}
		if create.write == nil {
			c.cfg = create.cfg
			return nil
		}
		err = c.create(ctx, seen, create)
		if errors.Is(err, errChanged) && attempt < 10+len(c.shards) {
			continue // another process created or changed it meanwhile
		}
		if err != nil {
			return c.wrap(ctx, "open", err)
		}
		c.cfg = create.cfg
		return nil
	}
}

// decide says, from what Open found, which config the filter is to have
// and what to write, or why it cannot be opened; live says whether the
// first shard holds a live claim.
func (c *core[T]) decide(seen []found, s settings, live bool) (creation, error) {
	first := seen[0]
	all := func(cfg string) (creation, error) {
		w := make([]bool, len(seen))
		for i := range w {
			w[i] = true
		}
		return creation{cfg: cfg, claim: len(seen) > 1, write: w}, nil
	}
	if claimed, _, ok := parseClaim(first.cfg); ok {
		switch {
		case paramsOf(claimed) != c.params && live:
			return creation{}, c.problemError("open", problem{kind: otherConfig, key: c.shards[0].cfgKey, detail: claimed})
		case live:
			return creation{}, errWait
		case paramsOf(claimed) != c.params:
			return all(newConfig(c.params, c.expected, c.fpp))
		}
		// Finish the abandoned creation: its complete shards stay.
		w := make([]bool, len(seen))
		for i, f := range seen {
			w[i] = i == 0 || f.cfg != claimed || !c.windowed && f.n != c.shards[i].nbytes()
		}
		return creation{cfg: claimed, claim: true, write: w}, nil
	}
	for i, f := range seen {
		if f.cfg != "" && paramsOf(f.cfg) != c.params {
			return creation{}, c.problemError("open", problem{kind: otherConfig, key: c.shards[i].cfgKey, detail: f.cfg})
		}
	}
	var problems []string
	fresh, ids := true, make(map[string]bool)
	for i, f := range seen {
		sh := &c.shards[i]
		if !c.windowed && f.n != 0 && f.n != sh.nbytes() {
			return creation{}, c.problemError("open", problem{kind: wrongLength, key: sh.key, detail: fmt.Sprintf("%d %d", f.n, sh.nbytes())})
		}
		fresh = fresh && f.cfg == "" && f.n == 0
		if f.cfg != "" {
			ids[f.cfg] = true
		}
		if f.cfg == "" || f.cfg != first.cfg || !c.windowed && f.n == 0 {
			problems = append(problems, c.incomplete(sh, f).explain())
		}
	}
	switch {
	case fresh:
		return all(newConfig(c.params, c.expected, c.fpp))
	case problems == nil:
		return creation{cfg: first.cfg}, nil
	case s.recreate:
		return all(newConfig(c.params, c.expected, c.fpp))
	case s.adopt && len(ids) <= 1 && c.adoptable(seen):
		cfg := newConfig(c.params, c.expected, c.fpp)
		for id := range ids {
			cfg = id
		}
		w := make([]bool, len(seen))
		for i, f := range seen {
			w[i] = f.cfg == ""
		}
		return creation{cfg: cfg, write: w}, nil
	}
	advice := "open it with WithRecreate to create again, empty, the shards that were lost (the others keep their bits), or rebuild it from a Hybrid's Sync"
	if c.adoptable(seen) && len(ids) <= 1 {
		advice = "if the bitmaps are this filter's, open it with WithAdopt to take them back; otherwise open it with WithRecreate to create again, empty, the shards that were lost"
	}
	if c.windowed {
		advice = "if the generations are this filter's, open it with WithAdopt to take them back; otherwise delete the filter's keys"
	}
	return creation{}, fmt.Errorf("%w: open %q: %s: the values put may be gone; %s", ErrLost, c.name, strings.Join(problems, "; "), advice)
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

// create writes what cr says, from the last shard to the first, claiming
// the first shard first if cr says so, and renewing the claim before each
// shard. It returns errChanged if a shard, or the claim, is not as Open
// found it. If ctx ends after it claimed the filter, it gives the claim up,
// so that the next Open need not wait for it to expire.
func (c *core[T]) create(ctx context.Context, seen []found, cr creation) (err error) {
	claim := seen[0].cfg
	renew := func() error {
		if !cr.claim {
			return nil
		}
		var ok bool
		claim, ok, err = c.claim(ctx, claim, cr.cfg, claimToken())
		if err == nil && !ok {
			err = errChanged
		}
		return err
	}
	if err := renew(); err != nil {
		return err
	}
	if cr.claim {
		defer func() {
			if err != nil && ctx.Err() != nil {
				rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), time.Second)
				defer cancel()
				_, _, _ = c.claim(rctx, claim, cr.cfg, "0")
			}
		}()
	}
	mode := "create"
	if c.windowed {
		mode = "generations"
	}
	for i := len(c.shards) - 1; i >= 0; i-- {
		if !cr.write[i] {
			continue
		}
		if i < len(c.shards)-1 {
			if err := renew(); err != nil {
				return err
			}
		}
		s, was := &c.shards[i], seen[i]
		if i == 0 {
			was.cfg = claim
		}
		// A bitmap of the shard's length keeps its bits, whatever is
		// created: a shard that survived a loss, or one WithAdopt takes
		// back. Its log goes on if the shard had a config, so that the
		// Hybrids that read it need not read it whole.
		what := mode
		if !c.windowed && was.n == s.nbytes() {
			what = "adopt"
			if seen[i].cfg != "" {
				what = "keep"
			}
		}
		keys := []string{s.cfgKey, s.dataKey(c.windowed), s.holdKey}
		if !c.windowed {
			keys = append(keys, s.logKey)
		}
		rep := c.runScript(ctx, createScript, wire.Write, []call{{s, keys, []any{was.cfg, cr.cfg, s.nbytes(), was.n, what, newEpoch()}}})[0]
		if rep.Err != nil {
			return rep.Err
		}
		if res, _ := rep.Val.([]any); len(res) == 0 || res[0] != int64(1) {
			return errChanged
		}
	}
	return nil
}

// lastToken is the last token claimToken returned.
var lastToken atomic.Int64

// claimToken returns the token of a claim renewed now: when it lapses, in
// Unix milliseconds of this process's clock, as the releases before read
// it (with the server's clock), and greater than every token before, so
// that each renewal changes the claim.
func claimToken() string {
	for {
		last := lastToken.Load()
		t := max(time.Now().Add(claimLease).UnixMilli(), last+1)
		if lastToken.CompareAndSwap(last, t) {
			return strconv.FormatInt(t, 10)
		}
	}
}

// claim runs claim.lua on the first shard: if its config key still holds
// found, it writes a claim for cfg with token (see lua/claim.lua), and
// returns it.
func (c *core[T]) claim(ctx context.Context, found, cfg, token string) (string, bool, error) {
	s := &c.shards[0]
	rep := c.runScript(ctx, claimScript, wire.Master, []call{{s, []string{s.cfgKey}, []any{found, cfg, token}}})[0]
	if rep.Err != nil {
		return found, false, rep.Err
	}
	res, _ := rep.Val.([]any)
	if len(res) != 2 {
		return found, false, fmt.Errorf("claim.lua answered %v", rep.Val)
	}
	claim, _ := res[1].(string)
	return claim, res[0] == int64(1), nil
}
