package redisfilter

import (
	"cmp"
	"context"
	"slices"

	"github.com/mitzbloom/mitzbloom/bloom/raw"
	"github.com/mitzbloom/mitzbloom/redisfilter/internal/wire"
)

// A batch of values (Put and MightContain are batches of one) is hashed
// locally and split: into round trips of at most maxBitsPerTrip bits, each
// in one or two steps (see twoStepValues), each step into one request per
// shard and per maxBitsPerCommand bits (request.go), sent in one pipeline per
// node (internal/wire).
const (
	// maxBitsPerCommand bounds the bits one BITFIELD sets or tests, times
	// the generations a window's read tests them in: Redis runs a
	// BITFIELD, as every command, with nothing else meanwhile, at about
	// 0.15–0.3 µs per bit, so one holds it for a millisecond at most.
	maxBitsPerCommand = 4096

	// maxBitsPerTrip bounds the bits of one round trip, so that a huge
	// batch is sent in pieces (of under 1 MiB) rather than encoded whole in
	// memory.
	maxBitsPerTrip = 16 * maxBitsPerCommand

	// twoStepValues is the fewest values a read makes in two steps: first
	// the first bit of every value, then the other bits of the values whose
	// first bit is set. Guava stops at a value's first bit not set, and so
	// does this: a value not in the filter costs the server one bit, or k
	// if its first bit happens to be set (as about half of them are in a
	// full filter), instead of k always, for a second round trip, which a
	// batch this big pays for.
	twoStepValues = 16
)

// A batch says what a call does, and to which bitmaps: put into a plain
// filter or into one generation of a window, or test values in a plain
// filter or in some generations of a window.
type batch struct {
	op       string // the method, for errors
	put      bool
	windowed bool
	gens     []int64 // the generation put into (one), or those read
	expireAt string  // when the generation put into expires, Unix ms
	now      int64   // the client's time, Unix ms: a generation recorded to expire later is lost, not expired
	// period and generations are a window's, for a put to tell the
	// generations it recorded from others (see lua/guard.lua).
	period, generations int64
	// master sends a read to the masters, for a put that tests its
	// values first; tested tells the guard of such a put to log its bits
	// as they are.
	master, tested bool
	// arena holds the arguments of a step's BITFIELDs; each step reuses
	// it, so that a call allocates them for its biggest step, not for
	// every value.
	arena []any
}

// A bit is one of the k bits of one value of a batch.
type bit struct {
	shard int
	value int   // the value's index in the round trip
	off   int64 // the bit's offset in the shard's bitmaps
}

// answers are what the bits of a round trip tell of its values.
type answers struct {
	ngens   int    // the generations a read tests; 1 for a put
	changed []bool // for a put, per value: a bit of it changed
	unset   []bool // for a read, per value and generation, at value*ngens+g: a bit of it is not set
}

// found reports whether every bit of value vi is set in some generation.
func (a *answers) found(vi int) bool {
	return slices.Contains(a.unset[vi*a.ngens:][:a.ngens], false)
}

// run puts vs into the filter, or tests them, as b says, and appends one
// answer per value to dst: whether the value changed a bit, or whether it
// might be in the filter. On error it returns dst unchanged.
func (c *core[T]) run(ctx context.Context, b *batch, vs []T, dst []bool) ([]bool, error) {
	n := len(vs)
	n0 := len(dst)
	a := answers{ngens: 1}
	if b.windowed && !b.put {
		a.ngens = len(b.gens)
	}
	perTrip := max(1, maxBitsPerTrip/(c.k*a.ngens))
	// The bits of a trip's values, k each, allocated once for the biggest.
	idx := make([]int64, 0, min(n, perTrip)*c.k)
	bits := make([]bit, 0, min(n, perTrip)*c.k)
	var unconfirmed wire.Unconfirmed
	var pre answers // what a put's read found
	for start := 0; start < n; start += perTrip {
		trip := min(n, start+perTrip) - start
		idx = c.appendIndexes(idx[:0], vs[start:start+trip])
		if b.put {
			a.changed = resize(a.changed, trip)
		} else {
			a.unset = resize(a.unset, trip*a.ngens)
		}
		var err error
		if b.put {
			bits, err = c.put(ctx, b, bits, idx, trip, &a, &pre)
		} else {
			bits, err = c.test(ctx, b, bits, idx, trip, &a)
		}
		if err := unconfirmed.Keep(err); err != nil {
			return dst[:n0], c.wrap(ctx, b.op, err)
		}
		for vi := range trip {
			if b.put {
				dst = append(dst, a.changed[vi])
			} else {
				dst = append(dst, a.found(vi))
			}
		}
	}
	if unconfirmed.Err != nil {
		return dst[:n0], c.wrap(ctx, b.op, unconfirmed.Err)
	}
	return dst, nil
}

// test tests the bits idx of a trip of values, k each, as b says, and
// records in a which have a bit not set: in one step, or from twoStepValues
// values on in two (see twoStepValues). It returns bits, for the next trip
// to reuse.
func (c *core[T]) test(ctx context.Context, b *batch, bits []bit, idx []int64, trip int, a *answers) ([]bit, error) {
	first := c.k // the bits of each value the first step sends
	if trip >= twoStepValues {
		first = 1
	}
	bits = bits[:0]
	for vi := range trip {
		bits = c.appendBits(bits, vi, idx[vi*c.k:][:first])
	}
	err := c.step(ctx, b, bits, a)
	if err == nil && first < c.k {
		bits = bits[:0]
		for vi := range trip {
			if a.found(vi) {
				bits = c.appendBits(bits, vi, idx[vi*c.k+first:][:c.k-first])
			}
		}
		if len(bits) > 0 {
			err = c.step(ctx, b, bits, a)
		}
	}
	return bits, err
}

// put sets the bits idx of a trip of values, k each, as b says, and
// records in a which changed a bit. A put appends to the change log only
// the bits of values that were not in the filter (see lua/log.lua). For a
// few values, the guard of the Put reads their bits and logs those that
// were clear, in the same step as the BITFIELD that sets them, at the cost
// of a script's read of each bit. From twoStepValues values on, the trip
// first tests its values on the master, as a read does, and puts only
// those not found, whose bits the guard logs as they are: a second round
// trip, which costs the server less than the scripts' reads would, and
// values already in the filter cost a read, not a write. pre holds what
// the test found, allocated once for the biggest trip.
func (c *core[T]) put(ctx context.Context, b *batch, bits []bit, idx []int64, trip int, a *answers, pre *answers) ([]bit, error) {
	if trip < twoStepValues {
		bits = bits[:0]
		for vi := range trip {
			bits = c.appendBits(bits, vi, idx[vi*c.k:][:c.k])
		}
		return bits, c.step(ctx, b, bits, a)
	}
	rb := &batch{op: b.op, windowed: b.windowed, gens: b.gens, now: b.now, master: true}
	pre.ngens, pre.unset = 1, resize(pre.unset, trip)
	bits, err := c.test(ctx, rb, bits, idx, trip, pre)
	tested := err == nil
	switch {
	case isProblem(err):
		// A shard that the read finds wrong: the guards of a put of
		// every value say what is wrong with each shard, and refuse
		// them, and write the others.
		clear(pre.unset)
		for vi := range trip {
			pre.unset[vi] = true
		}
	case err != nil:
		return bits, err
	}
	bits = bits[:0]
	for vi := range trip {
		if !pre.found(vi) {
			bits = c.appendBits(bits, vi, idx[vi*c.k:][:c.k])
		}
	}
	if len(bits) == 0 {
		return bits, nil
	}
	tb := *b
	tb.tested = tested
	err = c.step(ctx, &tb, bits, a)
	b.arena = tb.arena
	return bits, err
}

// appendIndexes appends the k bit indexes of each value of vs to idx.
func (c *core[T]) appendIndexes(idx []int64, vs []T) []int64 {
	for _, v := range vs {
		h1, h2 := raw.Sum128(c.funnel, v)
		idx = raw.AppendIndexes(idx, c.strategy, h1, h2, c.k, c.bitSize)
	}
	return idx
}

// resize returns s with n elements, all false.
func resize(s []bool, n int) []bool {
	s = slices.Grow(s[:0], n)[:n]
	clear(s)
	return s
}

// appendBits appends the bits idx of value vi.
func (c *core[T]) appendBits(bits []bit, vi int, idx []int64) []bit {
	for _, i := range idx {
		s := int(i / c.shardBits)
		bits = append(bits, bit{shard: s, value: vi, off: (i - c.shards[s].first) ^ 63})
	}
	return bits
}

// step puts or tests bits, in one round trip per node, and records what
// they tell in a.
func (c *core[T]) step(ctx context.Context, b *batch, bits []bit, a *answers) error {
	if len(c.shards) > 1 {
		slices.SortFunc(bits, func(x, y bit) int { return cmp.Compare(x.shard, y.shard) })
	}
	perCommand := max(1, maxBitsPerCommand/a.ngens)
	// A BITFIELD has 3 arguments a bit (4 to set), after its name and key.
	per := 3
	if b.put {
		per = 4
	}
	b.arena = slices.Grow(b.arena[:0], per*len(bits)+2*(len(bits)/perCommand+len(c.shards)+1))
	// The step's requests, each one allocation that holds its
	// wire.Request, and those for Send: most is as many as a step can make
	// (one per shard, and one more per perCommand bits), so that neither
	// slice grows, and for a few both are on the stack.
	most := len(bits)/perCommand + min(len(bits), len(c.shards))
	reqs := make([]*request, 0, most)
	sent := make([]*wire.Request, 0, most)
	for from, to := 0, 0; from < len(bits); from = to {
		to = commandEnd(bits, from, perCommand)
		r := c.newRequest(&c.shards[bits[from].shard], bits[from:to], b)
		reqs = append(reqs, r)
		sent = append(sent, &r.Request)
	}
	rt := wire.AnyNode
	switch {
	case b.put:
		rt = wire.Write
	case b.master:
		rt = wire.Master
	}
	c.wire.Send(ctx, sent, rt, func(i int) error { return c.readReplies(reqs[i], b, nil) })
	var unconfirmed wire.Unconfirmed
	for _, r := range reqs {
		if err := unconfirmed.Keep(c.readReplies(r, b, a)); err != nil {
			return err
		}
	}
	return unconfirmed.Err
}

// commandEnd returns where the bits of one command that start at from end:
// bits sorted by shard, at most most of them, all of one shard.
func commandEnd(bits []bit, from, most int) int {
	to := from + 1
	for to < len(bits) && to-from < most && bits[to].shard == bits[from].shard {
		to++
	}
	return to
}
