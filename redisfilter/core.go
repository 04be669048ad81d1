package redisfilter

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/mitzbloom/mitzbloom/bloom"
	"github.com/mitzbloom/mitzbloom/funnel"
	"github.com/mitzbloom/mitzbloom/strategy"
	"github.com/redis/go-redis/v9"
)

const (
	// chunkBytes bounds the bytes of a bitmap one script reads, ORs or
	// counts, so that Snapshot, Merge and BitCount of a big filter hold the
	// server for a millisecond or so at a time rather than for the whole
	// bitmap; chunksPerTrip of them are pipelined in one round trip.
	chunkBytes    = 1 << 20
	chunksPerTrip = 4

	// maxNameLen bounds a filter's name, which is in every key.
	maxNameLen = 256

	configFormat = "mitzbloom/redisfilter v1"
	// idField ends a config: a random identity given to each filter when it
	// is created, so that a filter re-created under the same name is told
	// from the one a Filter opened.
	idField = " id="
)

// core is what Filter and Windowed share: the parameters, the config that
// records them, and the scripts' calling convention.
type core[T any] struct {
	rdb      redis.UniversalClient
	name     string
	funnel   funnel.Funnel[T]
	fname    string // the funnel's name in the config
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
	// included, as Open found or created it; only a Hybrid, which has a core of its own, changes
	// it after that, when it re-creates a lost filter.
	cfg string
	// lostAdvice ends the message of an ErrLost error: what to do.
	lostAdvice string
}

// validName reports why name cannot name a filter, or nil. Braces would
// change the hash tag that keeps a filter's keys in one cluster slot, so
// they are refused on every kind of server, for a name to mean the same
// filter on all; '#' is kept for the keys of a filter's parts.
func validName(name string) error {
	switch {
	case name == "":
		return errors.New("filter name is empty")
	case len(name) > maxNameLen:
		return fmt.Errorf("filter name is %d bytes long, more than %d", len(name), maxNameLen)
	case !utf8.ValidString(name):
		return fmt.Errorf("filter name %q is not valid UTF-8", name)
	case strings.ContainsAny(name, "{}#"):
		return fmt.Errorf("filter name %q contains '{', '}' or '#', which would break the hash tag {name} that keeps a filter's keys in one Redis Cluster slot", name)
	}
	for _, r := range name {
		if r < 0x20 || r == 0x7f {
			return fmt.Errorf("filter name %q contains a control character", name)
		}
	}
	return nil
}

// newCore validates the arguments of Open and OpenWindowed, sizes the
// filter and lays out its shards. window is appended to the config, "" for
// a plain filter.
func newCore[T any](rdb redis.UniversalClient, name string, f funnel.Funnel[T], expectedInsertions int64, fpp float64, window string, o *options) (core[T], error) {
	var c core[T]
	switch {
	case rdb == nil:
		return c, fmt.Errorf("%w: Redis client is nil", bloom.ErrInvalidArgument)
	case f == nil:
		return c, fmt.Errorf("%w: funnel is nil", bloom.ErrInvalidArgument)
	case o.strategy == nil:
		return c, fmt.Errorf("%w: strategy is nil", bloom.ErrInvalidArgument)
	}
	if _, ok := rdb.(*redis.Ring); ok {
		return c, fmt.Errorf("%w: a redis.Ring is not supported: it shards keys itself, without the hash slots a filter's keys share; use a Client or a ClusterClient", bloom.ErrInvalidArgument)
	}
	if err := validName(name); err != nil {
		return c, fmt.Errorf("%w: %v", bloom.ErrInvalidArgument, err)
	}
	// A funnel cannot be stored: its name stands for it, the same in every
	// process, which what fmt prints for a function is not.
	named, ok := f.(fmt.Stringer)
	if !ok || named.String() == "" {
		return c, fmt.Errorf("%w: funnel %T has no name; wrap it with funnel.Named, as in funnel.Named(\"orders/v1\", f), and open the filter with the same name in every process", bloom.ErrInvalidArgument, f)
	}
	funnelName := named.String()
	bitSize, k, err := bloom.Size(expectedInsertions, fpp, o.sizing()...)
	if err != nil {
		return c, err
	}
	shardBytes, err := shardBytesFor(bitSize/8, o.shardBytes)
	if err != nil {
		return c, fmt.Errorf("%w: %v", bloom.ErrInvalidArgument, err)
	}
	params := fmt.Sprintf("%s bits=%d k=%d strategy=%v funnel=%q%s", configFormat, bitSize, k, o.strategy, funnelName, window)
	if shardBytes*8 < bitSize {
		params += fmt.Sprintf(" shard-bytes=%d", shardBytes)
	}
	return core[T]{
		rdb:       rdb,
		name:      name,
		funnel:    f,
		fname:     funnelName,
		strategy:  o.strategy,
		k:         k,
		bitSize:   bitSize,
		shards:    layout(name, bitSize, shardBytes),
		shardBits: shardBytes * 8,
		windowed:  window != "",
		params:    params,
	}, nil
}

func newOptions(opts []Option) *options {
	o := &options{strategy: strategy.Murmur128Mitz64, clock: systemClock{}}
	for _, opt := range opts {
		opt(o)
	}
	return o
}

// paramsOf returns a stored config without its identity.
func paramsOf(cfg string) string {
	if i := strings.LastIndex(cfg, idField); i >= 0 {
		return cfg[:i]
	}
	return cfg
}

// newConfig returns the config of a filter created now: the parameters and
// a new identity.
func (c *core[T]) newConfig() string {
	var id [8]byte
	_, _ = rand.Read(id[:]) // never fails
	return c.params + idField + hex.EncodeToString(id[:])
}

// A chunk is a range of one shard's bytes that one script reads or ORs.
type chunk struct {
	shard    *shard
	from, to int64 // in the shard's bytes, to exclusive
}

// chunks returns the ranges of at most chunkBytes that cover every shard, in
// order, so that their bytes concatenated are the filter's.
func (c *core[T]) chunks() []chunk {
	var out []chunk
	for i := range c.shards {
		s := &c.shards[i]
		for from := int64(0); from < s.nbytes(); from += chunkBytes {
			out = append(out, chunk{s, from, min(s.nbytes(), from+chunkBytes)})
		}
	}
	return out
}

// readChunks runs readScript over the filter's bitmaps, or generation gen's
// for a window, in chunks of chunkBytes, each checking its shard's config,
// chunksPerTrip of them per round trip, and passes each reply to each in
// order. A reply is a string for "range", an int64 for "count".
func (c *core[T]) readChunks(ctx context.Context, op, what string, gen int64, each func(ch chunk, reply any) error) error {
	all := c.chunks()
	for trip := 0; trip < len(all); trip += chunksPerTrip {
		chs := all[trip:min(len(all), trip+chunksPerTrip)]
		calls := make([]call, len(chs))
		for i, ch := range chs {
			keys, windowed := ch.shard.keys, "0"
			if c.windowed {
				keys, windowed = []string{ch.shard.cfgKey, ch.shard.gensKey, ch.shard.genKey(gen)}, "1"
			}
			calls[i] = call{keys, []any{c.cfg, ch.shard.nbytes(), what, ch.from, ch.to - 1, windowed}}
		}
		for i, cmd := range c.scripts(ctx, readScript, true, calls) {
			reply, err := cmd.Result()
			if err != nil {
				return c.wrap(op, err)
			}
			if err := each(chs[i], reply); err != nil {
				return c.wrap(op, err)
			}
		}
	}
	return nil
}

// noScript reports whether err says that the server does not know a
// script's SHA-1.
func noScript(err error) bool {
	return errors.Is(err, redis.ErrNoScript) || redis.HasErrorPrefix(err, "NOSCRIPT")
}

// snapshot reads the filter's bitmaps, or generation gen's for a window, in
// chunks, each with its config checked, and decodes them as Guava's readFrom
// would the writeTo stream they make. Bits are only ever set, and a filter
// re-created meanwhile fails the check, so the copy holds every value put
// before it started.
func (c *core[T]) snapshot(ctx context.Context, gen int64) (*bloom.Filter[T], error) {
	// Guava's header, then the words.
	buf := make([]byte, 6, 6+c.bitSize/8)
	buf[0] = byte(c.strategy.Ordinal())
	buf[1] = byte(c.k)
	binary.BigEndian.PutUint32(buf[2:], uint32(c.bitSize/64))
	err := c.readChunks(ctx, "snapshot", "range", gen, func(ch chunk, reply any) error {
		s, _ := reply.(string)
		switch want := ch.to - ch.from; int64(len(s)) {
		case want:
			buf = append(buf, s...)
		case 0: // a generation that expired, or was never created
			buf = append(buf, make([]byte, want)...)
		default:
			return fmt.Errorf("read %d bytes at %d of %s, want %d", len(s), ch.from, ch.shard.key, want)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	f, err := bloom.ReadFrom(bytes.NewReader(buf), c.funnel)
	if err != nil {
		return nil, c.wrap("snapshot", err)
	}
	return f, nil
}

// bitCount counts the bits set in the filter's bitmaps, in chunks.
func (c *core[T]) bitCount(ctx context.Context) (int64, error) {
	var total int64
	err := c.readChunks(ctx, "bitCount", "count", 0, func(_ chunk, reply any) error {
		n, ok := reply.(int64)
		if !ok {
			return fmt.Errorf("BITCOUNT answered %T", reply)
		}
		total += n
		return nil
	})
	return total, err
}

// merge ORs local's bits into the filter's bitmaps, in chunks of chunkBytes,
// each in one script that checks its shard's config; chunks of local without
// a bit set are not sent, but for the first of each shard.
func (c *core[T]) merge(ctx context.Context, local *bloom.Filter[T]) error {
	if err := c.checkLocal(local); err != nil {
		return err
	}
	data, err := local.MarshalBinary()
	if err != nil {
		return c.wrap("merge", err)
	}
	words := data[6:] // without Guava's header
	var suffix [8]byte
	_, _ = rand.Read(suffix[:]) // never fails
	tmp := ":merge:" + hex.EncodeToString(suffix[:])
	var calls []call
	flush := func() error {
		if len(calls) == 0 {
			return nil
		}
		cmds := c.scripts(ctx, mergeScript, false, calls)
		calls = calls[:0]
		for _, cmd := range cmds {
			if err := cmd.Err(); err != nil {
				return c.wrap("merge", err)
			}
		}
		return nil
	}
	for _, ch := range c.chunks() {
		start := ch.shard.first / 8
		bits := words[start+ch.from : start+ch.to]
		if ch.from > 0 && allZero(bits) {
			continue // the first is always sent, for the checks
		}
		s := ch.shard
		keys := []string{s.cfgKey, s.key, s.key + tmp + ":a", s.key + tmp + ":b"}
		calls = append(calls, call{keys, []any{c.cfg, s.nbytes(), ch.from, bits}})
		if len(calls) == chunksPerTrip {
			if err := flush(); err != nil {
				return err
			}
		}
	}
	return flush()
}

func allZero(b []byte) bool {
	for len(b) >= 8 {
		if binary.LittleEndian.Uint64(b) != 0 {
			return false
		}
		b = b[8:]
	}
	for _, x := range b {
		if x != 0 {
			return false
		}
	}
	return true
}

// checkLocal reports whether local can be merged into the filter, with
// Guava's checks of Filter.PutAll.
func (c *core[T]) checkLocal(local *bloom.Filter[T]) error {
	switch {
	case local == nil:
		return fmt.Errorf("%w: merge %q: local filter is nil", bloom.ErrInvalidArgument, c.name)
	case local.NumHashFunctions() != c.k:
		return fmt.Errorf("%w: merge %q: filters must have the same number of hash functions (%d != %d)", bloom.ErrIncompatible, c.name, c.k, local.NumHashFunctions())
	case local.BitSize() != c.bitSize:
		return fmt.Errorf("%w: merge %q: filters must have the same size underlying bit arrays (%d != %d)", bloom.ErrIncompatible, c.name, c.bitSize, local.BitSize())
	case local.Strategy() != c.strategy:
		return fmt.Errorf("%w: merge %q: filters must have equal strategies (%v != %v)", bloom.ErrIncompatible, c.name, c.strategy, local.Strategy())
	case !funnel.Equal(local.Funnel(), c.funnel):
		return fmt.Errorf("%w: merge %q: filters must have equal funnels (%v != %v)", bloom.ErrIncompatible, c.name, c.funnel, local.Funnel())
	}
	return nil
}

// A found is what Open found of one shard: its config ("" for none) and
// the length of its bitmap, or for a window the number of generations its
// record holds.
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
func (c *core[T]) open(ctx context.Context, o *options) error {
	if err := c.checkEviction(ctx, c.windowed, o); err != nil {
		return err
	}
	w := "0"
	if c.windowed {
		w = "1"
	}
	waits := 10 + len(c.shards)
	for attempt := 0; ; attempt++ {
		calls := make([]call, len(c.shards))
		for i := range c.shards {
			s := &c.shards[i]
			calls[i] = call{[]string{s.cfgKey, s.key}, []any{w}}
			if c.windowed {
				calls[i].keys[1] = s.gensKey
			}
		}
		seen := make([]found, len(c.shards))
		for i, cmd := range c.scripts(ctx, inspectScript, true, calls) {
			res, err := cmd.Slice()
			if err != nil {
				return c.wrap("open", err)
			}
			seen[i].cfg, _ = res[0].(string)
			seen[i].n, _ = res[1].(int64)
		}
		cfg, write, err := c.decide(seen, o)
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
			s, was := &c.shards[i], seen[i]
			adopt := "0"
			if was.cfg == "" && was.n != 0 {
				adopt = "1"
			}
			keys := []string{s.cfgKey, calls[i].keys[1], s.holdKey}
			res, err := c.scripts(ctx, createScript, false, []call{{keys, []any{was.cfg, cfg, s.nbytes(), w, adopt, was.n}}})[0].Slice()
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
func (c *core[T]) decide(seen []found, o *options) (string, []bool, error) {
	write := make([]bool, len(seen))
	ids := make(map[string]bool)
	fresh, complete := true, true
	var lost []string
	for _, f := range seen {
		if f.cfg != "" && paramsOf(f.cfg) != c.params {
			return "", nil, c.fail("open", ErrMismatch, f.cfg)
		}
	}
	for i, f := range seen {
		s := &c.shards[i]
		if !c.windowed && f.n != 0 && f.n != s.nbytes() {
			return "", nil, c.fail("open", ErrNotFilter, fmt.Sprintf("%s holds %d bytes, want %d", s.key, f.n, s.nbytes()))
		}
		if f.cfg != "" {
			ids[f.cfg] = true
		}
		fresh = fresh && f.cfg == "" && f.n == 0
		ok := f.cfg != "" && f.cfg == seen[0].cfg && (c.windowed || f.n != 0)
		complete = complete && ok
		if !ok {
			lost = append(lost, c.describe(s, f))
		}
	}
	switch {
	case fresh:
		for i := range write {
			write[i] = true
		}
		return c.newConfig(), write, nil
	case complete:
		return seen[0].cfg, write, nil
	case o.recreate:
		for i := range write {
			write[i] = true
		}
		return c.newConfig(), write, nil
	case o.adopt && len(ids) <= 1 && c.adoptable(seen):
		cfg := c.newConfig()
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
	return "", nil, c.fail("open", ErrLost, fmt.Sprintf("%s: the values put may be gone; %s", strings.Join(lost, "; "), advice))
}

// describe says what is wrong with a shard that Open found incomplete.
func (c *core[T]) describe(s *shard, f found) string {
	switch {
	case f.cfg == "" && f.n == 0 && c.windowed:
		return "config key " + s.cfgKey + " is missing"
	case f.cfg == "" && f.n == 0:
		return "bitmap " + s.key + " and its config key are missing"
	case f.cfg == "" && c.windowed:
		return fmt.Sprintf("config key %s is missing, but %s records %d generations", s.cfgKey, s.gensKey, f.n)
	case f.cfg == "":
		return fmt.Sprintf("config key %s is missing, but bitmap %s has the length of this filter", s.cfgKey, s.key)
	case f.n == 0 && !c.windowed:
		return fmt.Sprintf("bitmap %s is missing but its config key %s exists (deleted, evicted, or a restart without persistence)", s.key, s.cfgKey)
	}
	return fmt.Sprintf("config key %s is of another creation of the filter than the first shard's", s.cfgKey)
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

// configKeys returns the shards' config keys, in order.
func (c *core[T]) configKeys() []string {
	keys := make([]string, len(c.shards))
	for i := range c.shards {
		keys[i] = c.shards[i].cfgKey
	}
	return keys
}

// delete removes the keys of each shard that keys returns, one DEL per
// shard, pipelined.
func (c *core[T]) delete(ctx context.Context, keys func(s int) []string) error {
	pipe := c.rdb.Pipeline()
	for i := range c.shards {
		pipe.Del(ctx, keys(i)...)
	}
	_, err := pipe.Exec(ctx)
	return c.wrap("delete", err)
}

// evictingPolicy reports whether a maxmemory-policy may evict a filter's
// keys: every allkeys-* policy, and for a window, whose bitmaps expire,
// every volatile-* one.
func evictingPolicy(policy string, windowed bool) bool {
	return strings.HasPrefix(policy, "allkeys-") || windowed && strings.HasPrefix(policy, "volatile-")
}

// checkEviction reads maxmemory-policy from INFO memory of every node (of a
// cluster, masters and replicas alike, since a replica may be promoted), and
// refuses one that may evict the filter's keys unless o allows it. A node
// that does not tell its policy (INFO denied, or a managed Redis that leaves
// the field out) is not refused: eviction there is still caught, as ErrLost.
func (c *core[T]) checkEviction(ctx context.Context, windowed bool, o *options) error {
	if o.allowEviction {
		return nil
	}
	check := func(ctx context.Context, node redis.Cmdable) error {
		info, err := node.Info(ctx, "memory").Result()
		if err != nil {
			if ctx.Err() != nil {
				return err
			}
			return nil
		}
		for line := range strings.Lines(info) {
			policy, ok := strings.CutPrefix(strings.TrimSpace(line), "maxmemory_policy:")
			if ok && evictingPolicy(policy, windowed) {
				return fmt.Errorf("%w: open %q: the server's maxmemory-policy is %s, which may evict the filter's keys; set it to noeviction, or open with WithEvictionAllowed, and calls will then report evicted bits as ErrLost", ErrEvictable, c.name, policy)
			}
		}
		return nil
	}
	type sharded interface {
		ForEachShard(context.Context, func(context.Context, *redis.Client) error) error
	}
	var err error
	if s, ok := c.rdb.(sharded); ok {
		err = s.ForEachShard(ctx, func(ctx context.Context, node *redis.Client) error { return check(ctx, node) })
	} else {
		err = check(ctx, c.rdb)
	}
	if err != nil && !errors.Is(err, ErrEvictable) {
		return c.wrap("open", err)
	}
	return err
}
