package redisfilter

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/mitzbloom/mitzbloom/strategy"
	"github.com/redis/go-redis/v9"
)

const (
	// maxOpsPerCommand bounds the bits one BITFIELD sets or tests, times
	// the generations a window's read tests them in: Redis runs a
	// BITFIELD, as every command, with nothing else meanwhile, at about
	// 0.15–0.3 µs per bit, so one holds it for a millisecond at most.
	maxOpsPerCommand = 4096

	// maxOpsPerTrip bounds the bits of one round trip, so that a huge batch
	// is sent in pieces (of under 1 MiB) rather than encoded whole in
	// memory.
	maxOpsPerTrip = 16 * maxOpsPerCommand
)

// A target says what a batch does: put into a plain filter or into one
// generation of a window, or test values in a plain filter or in some
// generations of a window.
type target struct {
	put      bool
	windowed bool
	gens     []int64 // the generations put into (one) or read
	expireAt string  // when the generation put into expires, Unix ms
	now      int64   // Unix ms, for telling a lost generation from an expired one
}

// An entry is one bit of one value of a batch.
type entry struct {
	shard int
	value int   // its index in the round trip
	off   int64 // the bit's offset in the shard's bitmaps
}

// A unit is what one shard's part of a round trip sends to the shard's node:
// a Put's transaction, or a read's checks around its BITFIELD_RO commands.
type unit struct {
	shard *shard
	ents  []entry // the bits of its BITFIELDs, in order
	tx    bool    // sent within MULTI and EXEC
	cmds  [][]any
	res   []any // each command's reply: a value, nil for a nil reply, or a redis.Error
	err   error // an error that left no replies
}

// twoStepValues is the fewest values a read makes in two steps: first the
// first bit of every value, then the other bits of the values whose first
// bit is set. Guava stops at a value's first bit not set, and so does this:
// a value not in the filter costs the server one bit, or k if its first bit
// happens to be set (as about half of them are in a full filter), instead
// of k always, for a second round trip, which a batch this big pays for.
const twoStepValues = 16

// eval puts vs into the filter, or tests them, as t says, and appends one
// answer per value to dst: whether the value changed a bit, or whether it
// might be in the filter. On error it returns dst unchanged.
func (c *core[T]) eval(ctx context.Context, op string, t target, vs []T, dst []bool) ([]bool, error) {
	n0 := len(dst)
	ngens := 1
	if t.windowed && !t.put {
		ngens = len(t.gens)
	}
	perTrip := max(1, maxOpsPerTrip/(c.k*ngens))
	var idx []int64 // the bits of the trip's values, k each
	var ents []entry
	var notAll []bool // a value's bits not all set, per generation
	for start := 0; start < len(vs); start += perTrip {
		trip := vs[start:min(len(vs), start+perTrip)]
		idx = idx[:0]
		for _, v := range trip {
			h1, h2 := strategy.Sum128(c.funnel, v)
			idx = c.strategy.AppendIndexes(idx, h1, h2, c.k, c.bitSize)
		}
		notAll = slices.Grow(notAll[:0], len(trip)*ngens)[:len(trip)*ngens]
		clear(notAll)
		first := c.k // the bits of each value the first step reads
		if !t.put && len(trip) >= twoStepValues {
			first = 1
		}
		ents = ents[:0]
		for vi := range trip {
			ents = c.appendEntries(ents, vi, idx[vi*c.k:][:first])
		}
		err := c.step(ctx, t, ents, ngens, notAll)
		if err == nil && first < c.k {
			ents = ents[:0]
			for vi := range trip {
				if slices.Contains(notAll[vi*ngens:][:ngens], false) {
					ents = c.appendEntries(ents, vi, idx[vi*c.k+first:][:c.k-first])
				}
			}
			if len(ents) > 0 {
				err = c.step(ctx, t, ents, ngens, notAll)
			}
		}
		if err != nil {
			if cerr := ctx.Err(); cerr != nil && !errors.Is(err, cerr) {
				// A network timeout at the deadline.
				err = fmt.Errorf("%w: %w", cerr, err)
			}
			return dst[:n0], c.wrap(op, err)
		}
		for vi := range trip {
			if t.put {
				dst = append(dst, notAll[vi])
				continue
			}
			dst = append(dst, slices.Contains(notAll[vi*ngens:][:ngens], false))
		}
	}
	return dst, nil
}

// appendEntries appends to ents the entries of bits idx of value vi.
func (c *core[T]) appendEntries(ents []entry, vi int, idx []int64) []entry {
	for _, i := range idx {
		s := int(i / c.shardBits)
		ents = append(ents, entry{shard: s, value: vi, off: (i - c.shards[s].first) ^ 63})
	}
	return ents
}

// step puts or tests the bits ents, in one round trip per node, and records
// the answers in notAll.
func (c *core[T]) step(ctx context.Context, t target, ents []entry, ngens int, notAll []bool) error {
	if len(c.shards) > 1 {
		slices.SortFunc(ents, func(a, b entry) int { return cmp.Compare(a.shard, b.shard) })
	}
	perCommand := max(1, maxOpsPerCommand/ngens)
	var units []*unit
	for from := 0; from < len(ents); {
		to := from + 1
		for to < len(ents) && to-from < perCommand && ents[to].shard == ents[from].shard {
			to++
		}
		units = append(units, c.unit(&c.shards[ents[from].shard], ents[from:to], t))
		from = to
	}
	c.send(ctx, units, t.put)
	for _, u := range units {
		if err := c.answer(u, t, ngens, notAll); err != nil {
			return err
		}
	}
	return nil
}

// unit returns the commands that put or test the bits ents of shard s.
func (c *core[T]) unit(s *shard, ents []entry, t target) *unit {
	u := &unit{shard: s, ents: ents}
	bitfield := func(cmd, key string, set bool) []any {
		per, op := 3, "GET"
		if set {
			per, op = 4, "SET"
		}
		args := make([]any, 0, 2+per*len(ents))
		args = append(args, cmd, key)
		for i := range ents {
			// A pointer boxes without allocating, and go-redis sends
			// it in decimal.
			args = append(args, op, "u1", &ents[i].off)
			if set {
				args = append(args, "1")
			}
		}
		return args
	}
	if t.put {
		// EVAL's number of keys, then the keys.
		key, expireAt := s.key, "0"
		keys := []any{3, s.cfgKey, key, s.holdKey}
		if t.windowed {
			key, expireAt = s.genKey(t.gens[0]), t.expireAt
			keys = []any{4, s.cfgKey, s.gensKey, key, s.holdKey}
		}
		guard := append([]any{"EVAL", guardScript}, keys...)
		guard = append(guard, c.cfg, s.nbytes(), expireAt)
		u.tx = true
		u.cmds = [][]any{guard, bitfield("BITFIELD", key, true), append([]any{"EVAL", unguardScript}, keys...)}
		return u
	}
	keys := []string{s.key}
	if t.windowed {
		keys = keys[:0]
		for _, g := range t.gens {
			keys = append(keys, s.genKey(g))
		}
	}
	// The config and the lengths are read before and after the bits: a
	// filter's identity never comes back once changed and bits are never
	// cleared, so if both agree the bits are the filter's.
	u.cmds = append(u.cmds, []any{"GET", s.cfgKey})
	for _, k := range keys {
		u.cmds = append(u.cmds, []any{"STRLEN", k})
		if t.windowed {
			u.cmds = append(u.cmds, []any{"ZSCORE", s.gensKey, k})
		}
	}
	for _, k := range keys {
		u.cmds = append(u.cmds, bitfield("BITFIELD_RO", k, false))
	}
	u.cmds = append(u.cmds, []any{"GET", s.cfgKey})
	for _, k := range keys {
		u.cmds = append(u.cmds, []any{"STRLEN", k})
	}
	return u
}

// answer checks the replies of u and records them in notAll: for a put,
// whether each value changed a bit; for a read, whether each value has a bit
// not set, per generation.
func (c *core[T]) answer(u *unit, t target, ngens int, notAll []bool) error {
	if u.err != nil {
		return u.err
	}
	for _, r := range u.res {
		if err, ok := r.(error); ok {
			return err
		}
	}
	bits := func(r any) ([]any, error) {
		b, ok := r.([]any)
		if !ok || len(b) != len(u.ents) {
			return nil, fmt.Errorf("BITFIELD of %s answered %T with %d values for %d bits", u.shard.key, r, len(b), len(u.ents))
		}
		return b, nil
	}
	if t.put {
		old, err := bits(u.res[1])
		if err != nil {
			return err
		}
		for i, e := range u.ents {
			if old[i] == int64(0) {
				notAll[e.value] = true // changed
			}
		}
		return nil
	}
	per := 1 // commands per key before the bits
	if t.windowed {
		per = 2
	}
	after := 1 + (per+1)*ngens // the second GET
	for _, cfg := range []any{u.res[0], u.res[after]} {
		if cfg == nil {
			return errLost("config key " + u.shard.cfgKey + " is missing")
		}
		if cfg != c.cfg {
			return scriptError(errCode + "MISMATCH " + fmt.Sprint(cfg))
		}
	}
	want := u.shard.nbytes()
	for g := range ngens {
		key := u.shard.key
		if t.windowed {
			key = u.shard.genKey(t.gens[g])
		}
		before, _ := u.res[1+per*g].(int64)
		later, _ := u.res[after+1+g].(int64)
		switch {
		case before == want && later == want:
			b, err := bits(u.res[1+per*ngens+g])
			if err != nil {
				return err
			}
			for i, e := range u.ents {
				if b[i] == int64(0) {
					notAll[e.value*ngens+g] = true
				}
			}
			continue
		case before != 0 && before != want || later != 0 && later != want:
			return scriptError(fmt.Sprintf("%sNOTFILTER %s holds %d bytes, want %d", errCode, key, max(before, later), want))
		case !t.windowed:
			return errLost("bitmap " + key + " is missing")
		}
		if expires := u.res[2+per*g]; expires != nil && parseMillis(expires) > t.now {
			return errLost("window generation " + key + " is missing before its expiry")
		}
		// A generation not created in this shard, or expired: none of
		// its values has a bit here.
		for _, e := range u.ents {
			notAll[e.value*ngens+g] = true
		}
	}
	return nil
}

// scriptError is an error of the form the scripts return, which wrap maps
// to a sentinel.
type scriptError string

func (e scriptError) Error() string { return string(e) }

func (scriptError) RedisError() {}

func errLost(detail string) scriptError { return scriptError(errCode + "LOST " + detail) }

// parseMillis returns a sorted-set score of Unix milliseconds, which RESP3
// answers as a double and RESP2 as a string.
func parseMillis(score any) int64 {
	switch s := score.(type) {
	case float64:
		return int64(s)
	case string:
		ms, _ := strconv.ParseFloat(s, 64)
		return int64(ms)
	}
	return 0
}

// send sends units, each to its shard's node: on a cluster, the master for a
// put, and for a read a replica if the client was created with ReadOnly,
// chosen as go-redis chooses one; in one pipeline per node, the nodes in
// parallel, so a batch costs one round trip per node. A unit whose node
// answers MOVED, ASK or the like is sent again through go-redis's routing,
// which follows redirections and retries with backoff.
func (c *core[T]) send(ctx context.Context, units []*unit, write bool) {
	cl, ok := c.rdb.(*redis.ClusterClient)
	if !ok {
		sendTo(ctx, c.rdb, units)
		return
	}
	replicas := !write && cl.Options().ReadOnly
	byNode := make(map[*redis.Client][]*unit)
	for _, u := range units {
		var node *redis.Client
		var err error
		if replicas {
			node, err = cl.SlaveForKey(ctx, u.shard.key)
		} else {
			node, err = cl.MasterForKey(ctx, u.shard.key)
		}
		if err != nil {
			u.err = err
			continue
		}
		byNode[node] = append(byNode[node], u)
	}
	var wg sync.WaitGroup
	for node, us := range byNode {
		if len(byNode) == 1 {
			sendTo(ctx, node, us)
			break
		}
		wg.Go(func() { sendTo(ctx, node, us) })
	}
	wg.Wait()
	reloaded := false
	for _, u := range units {
		// A read, which may be sent again safely, also after a network
		// error: a replica that died is still in the client's map until
		// its next reload, and go-redis's own routing falls back to the
		// master.
		var rerr redis.Error
		retry := u.err != nil && (redirected(u.err) || replicas && !errors.As(u.err, &rerr) && ctx.Err() == nil)
		if !retry {
			continue
		}
		if !reloaded {
			cl.ReloadState(ctx)
			reloaded = true
		}
		u.err, u.res = nil, nil
		cmds := make([]*redis.Cmd, len(u.cmds))
		add := func(p redis.Pipeliner) error {
			for i, args := range u.cmds {
				cmds[i] = p.Do(ctx, args...)
			}
			return nil
		}
		if u.tx {
			_, _ = cl.TxPipelined(ctx, add)
		} else {
			_, _ = cl.Pipelined(ctx, add)
		}
		for _, cmd := range cmds {
			u.record(cmd)
		}
	}
}

// sendTo sends units to one server in one pipeline, a unit's transaction
// within MULTI and EXEC.
func sendTo(ctx context.Context, r redis.Cmdable, units []*unit) {
	pipe := r.Pipeline()
	cmds := make([][]*redis.Cmd, len(units))
	execs := make([]*redis.Cmd, len(units))
	for i, u := range units {
		if u.tx {
			pipe.Do(ctx, "MULTI")
		}
		for _, args := range u.cmds {
			cmds[i] = append(cmds[i], pipe.Do(ctx, args...))
		}
		if u.tx {
			execs[i] = pipe.Do(ctx, "EXEC")
		}
	}
	// Each command carries its own error.
	_, _ = pipe.Exec(ctx)
	for i, u := range units {
		if !u.tx {
			for _, cmd := range cmds[i] {
				u.record(cmd)
			}
			continue
		}
		// A command refused when queued (MOVED, OOM, NOPERM) makes EXEC
		// fail, and says why.
		for _, cmd := range cmds[i] {
			if err := cmd.Err(); err != nil && u.err == nil && !strings.HasPrefix(err.Error(), "QUEUED") {
				u.err = err
			}
		}
		res, err := execs[i].Slice()
		if u.err == nil && err != nil {
			u.err = err
		}
		if u.err == nil {
			if len(res) != len(u.cmds) {
				u.err = fmt.Errorf("EXEC answered %d replies for %d commands", len(res), len(u.cmds))
			}
			u.res = res
		}
	}
}

// record appends cmd's reply to u's, or sets u's error if cmd got no reply.
func (u *unit) record(cmd *redis.Cmd) {
	v, err := cmd.Result()
	var rerr redis.Error
	switch {
	case errors.Is(err, redis.Nil):
		u.res = append(u.res, nil)
	case err == nil:
		u.res = append(u.res, v)
	case errors.As(err, &rerr) && !redirected(err):
		u.res = append(u.res, err)
	case u.err == nil:
		u.err = err
	}
}

// redirections are the codes of the errors redirected reports.
var redirections = []string{"MOVED ", "ASK ", "TRYAGAIN ", "CLUSTERDOWN ", "LOADING ", "READONLY ", "MASTERDOWN "}

// redirected reports whether err is one that a cluster client handles by
// following the slot to another node, or retrying there.
func redirected(err error) bool {
	msg := err.Error()
	for _, code := range redirections {
		if strings.HasPrefix(msg, code) {
			return true
		}
	}
	return false
}
