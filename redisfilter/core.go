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
	"sync"
	"unicode/utf8"

	"github.com/mitzbloom/mitzbloom/bloom"
	"github.com/mitzbloom/mitzbloom/funnel"
	"github.com/mitzbloom/mitzbloom/strategy"
	"github.com/redis/go-redis/v9"
)

const (
	// maxBits is the largest filter Redis can hold: a string has at most
	// 512 MiB (proto-max-bulk-len), 2³² bits.
	maxBits = 1 << 32

	// maxOffsetsPerScript bounds the bits one script sets or tests. Redis
	// runs one script at a time and nothing else meanwhile; a SETBIT from
	// Lua costs about 0.3 µs, so a script holds Redis for a millisecond or
	// two at most.
	maxOffsetsPerScript = 4096

	// maxScriptsPerTrip bounds the scripts pipelined in one round trip, so
	// that a huge batch is sent in pieces of 65536 offsets (under 1 MiB)
	// rather than encoded whole in memory.
	maxScriptsPerTrip = 16

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
	cfgKey   string
	params   string // the config key's value without its identity
	// cfg is the config key's value, its identity included, as Open found
	// or created it; only a Hybrid, which has a core of its own, changes
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

// newCore validates the arguments of Open and OpenWindowed and sizes the
// filter. window is appended to the config, "" for a plain filter.
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
	if bitSize > maxBits {
		return c, fmt.Errorf("%w: %d bits, more than the 2^32 bits (512 MiB) a Redis string holds", bloom.ErrTooLarge, bitSize)
	}
	params := fmt.Sprintf("%s bits=%d k=%d strategy=%v funnel=%q%s", configFormat, bitSize, k, o.strategy, funnelName, window)
	return core[T]{
		rdb:      rdb,
		name:     name,
		funnel:   f,
		fname:    funnelName,
		strategy: o.strategy,
		k:        k,
		bitSize:  bitSize,
		cfgKey:   "{" + name + "}:config",
		params:   params,
	}, nil
}

func newOptions(opts []Option) *options {
	o := &options{strategy: strategy.Murmur128Mitz64, clock: systemClock{}}
	for _, opt := range opts {
		opt(o)
	}
	return o
}

func (c *core[T]) nbytes() int64 { return c.bitSize / 8 }

// config returns the config key's value as this filter knows it.
func (c *core[T]) config() string { return c.cfg }

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

// scratch is the memory of one eval, reused through scratchPool: a batch of
// 256 values at k = 7 needs 1792 offsets and their interface values.
type scratch struct {
	idx     []int64 // one value's indexes
	offsets []int64 // the bit offsets of a round trip
	argv    []any   // every script's arguments, back to back
	scripts [][]any // each script's arguments, slices of argv
}

var scratchPool = sync.Pool{New: func() any { return new(scratch) }}

// eval runs script (putScript or containsScript) over vs and appends one
// answer per value to dst. On error it returns dst unchanged.
func (c *core[T]) eval(ctx context.Context, op string, script *redis.Script, keys []string, mode string, vs []T, dst []bool) ([]bool, error) {
	n0 := len(dst)
	perScript := max(1, maxOffsetsPerScript/c.k)
	perTrip := perScript * maxScriptsPerTrip
	readOnly := script == containsScript
	cfg := c.config()
	s := scratchPool.Get().(*scratch)
	defer scratchPool.Put(s)
	for start := 0; start < len(vs); start += perTrip {
		trip := vs[start:min(len(vs), start+perTrip)]
		s.offsets = s.offsets[:0]
		for _, v := range trip {
			h1, h2 := strategy.Sum128(c.funnel, v)
			s.idx = c.strategy.AppendIndexes(s.idx[:0], h1, h2, c.k, c.bitSize)
			for _, i := range s.idx {
				s.offsets = append(s.offsets, i^63)
			}
		}
		// Pointers box without allocating, and go-redis sends the *int64
		// in decimal: ARGV strings, which Lua passes on to SETBIT as they
		// are, where numbers would cost a conversion each.
		s.argv, s.scripts = s.argv[:0], s.scripts[:0]
		for first := 0; first < len(s.offsets); first += perScript * c.k {
			from := len(s.argv)
			s.argv = append(s.argv, cfg, c.nbytes(), mode, c.k)
			for i := first; i < min(len(s.offsets), first+perScript*c.k); i++ {
				s.argv = append(s.argv, &s.offsets[i])
			}
			s.scripts = append(s.scripts, s.argv[from:len(s.argv):len(s.argv)])
		}
		answers, err := c.runScripts(ctx, script, readOnly, keys, s.scripts)
		if err == nil && len(answers) != len(trip) {
			err = fmt.Errorf("script answered %d values of %d", len(answers), len(trip))
		}
		if err != nil {
			clear(s.argv) // drop the references to the config
			return dst[:n0], c.wrap(op, err)
		}
		for _, a := range answers {
			dst = append(dst, a == '1')
		}
	}
	clear(s.argv)
	return dst, nil
}

// readChunks runs readScript over the bitmap in chunks of chunkBytes, each
// checking the config, chunksPerTrip of them per round trip, and passes each
// reply to each in order; keys and windowed as for readScript. A reply is a
// []byte for "range", an int64 for "count".
func (c *core[T]) readChunks(ctx context.Context, op, what string, keys []string, windowed string, each func(from int64, reply any) error) error {
	cfg := c.config()
	n := c.nbytes()
	for trip := int64(0); trip < n; trip += chunkBytes * chunksPerTrip {
		var args [][]any
		for from := trip; from < min(n, trip+chunkBytes*chunksPerTrip); from += chunkBytes {
			args = append(args, []any{cfg, n, what, from, min(n, from+chunkBytes) - 1, windowed})
		}
		cmds := c.pipeline(ctx, readScript, true, false, keys, args)
		for i, cmd := range cmds {
			if noScript(cmd.Err()) {
				cmd = c.pipeline(ctx, readScript, true, true, keys, args[i:i+1])[0]
			}
			reply, err := cmd.Result()
			if err != nil {
				return c.wrap(op, err)
			}
			if err := each(args[i][3].(int64), reply); err != nil {
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

// snapshot reads the bitmap keys[len(keys)-1] in chunks, each with its
// config checked, and decodes it as Guava's readFrom would the writeTo
// stream it makes. Bits are only ever set, and a filter re-created meanwhile
// fails the check, so the copy holds every value put before it started.
func (c *core[T]) snapshot(ctx context.Context, keys []string, windowed string) (*bloom.Filter[T], error) {
	// Guava's header, then the words.
	buf := make([]byte, 6, 6+c.nbytes())
	buf[0] = byte(c.strategy.Ordinal())
	buf[1] = byte(c.k)
	binary.BigEndian.PutUint32(buf[2:], uint32(c.bitSize/64))
	err := c.readChunks(ctx, "snapshot", "range", keys, windowed, func(from int64, reply any) error {
		s, _ := reply.(string)
		want := min(c.nbytes(), from+chunkBytes) - from
		switch int64(len(s)) {
		case want:
			buf = append(buf, s...)
		case 0: // a generation that expired, or was never created
			buf = append(buf, make([]byte, want)...)
		default:
			return fmt.Errorf("read %d bytes at %d, want %d", len(s), from, want)
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

// bitCount counts the bits set in the bitmap keys[len(keys)-1], in chunks.
func (c *core[T]) bitCount(ctx context.Context, keys []string, windowed string) (int64, error) {
	var total int64
	err := c.readChunks(ctx, "bitCount", "count", keys, windowed, func(_ int64, reply any) error {
		n, ok := reply.(int64)
		if !ok {
			return fmt.Errorf("BITCOUNT answered %T", reply)
		}
		total += n
		return nil
	})
	return total, err
}

// merge ORs local's bits into the bitmap, in chunks of chunkBytes, each in
// one script that checks the config; chunks of local without a bit set are
// not sent, but for the first.
func (c *core[T]) merge(ctx context.Context, bitmap string, local *bloom.Filter[T]) error {
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
	tmp := bitmap + ":merge:" + hex.EncodeToString(suffix[:])
	keys := []string{c.cfgKey, bitmap, tmp + ":a", tmp + ":b"}
	cfg := c.config()
	var args [][]any
	flush := func() error {
		if len(args) == 0 {
			return nil
		}
		_, err := c.runScripts(ctx, mergeScript, false, keys, args)
		args = args[:0]
		return c.wrap("merge", err)
	}
	for from := 0; from < len(words); from += chunkBytes {
		chunk := words[from:min(len(words), from+chunkBytes)]
		if from > 0 && allZero(chunk) {
			continue // the first is always sent, for the checks
		}
		args = append(args, []any{cfg, c.nbytes(), int64(from), chunk})
		if len(args) == chunksPerTrip {
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

// open finds the filter's config, or creates the filter, and records the
// config in c. second is the bitmap for a plain filter, the record of the
// generations for a window. It reads first, without writing, so that a
// read-only user opens an existing filter; it writes only to create, and
// then only if nothing changed since it read.
func (c *core[T]) open(ctx context.Context, second string, windowed bool, o *options) error {
	if err := c.checkEviction(ctx, windowed, o); err != nil {
		return err
	}
	keys := []string{c.cfgKey, second}
	w := "0"
	if windowed {
		w = "1"
	}
	for attempt := 0; ; attempt++ {
		res, err := c.run(ctx, inspectScript, true, keys, w).Slice()
		if err != nil {
			return c.wrap("open", err)
		}
		stored, _ := res[0].(string)
		n, _ := res[1].(int64)
		cfg, err := c.decide(stored, n, second, windowed, o)
		if err != nil || cfg == stored {
			c.cfg = cfg
			return err
		}
		adopt := "0"
		if stored == "" && n != 0 {
			adopt = "1"
		}
		res, err = c.run(ctx, createScript, false, keys, stored, cfg, c.nbytes(), w, adopt, n).Slice()
		if err != nil {
			return c.wrap("open", err)
		}
		if done, _ := res[0].(int64); done == 1 {
			c.cfg = cfg
			return nil
		}
		if attempt == 3 {
			return fmt.Errorf("redisfilter: open %q: the filter changed under every attempt to create it", c.name)
		}
		// Another process created or changed it meanwhile: look again.
	}
}

// decide returns the config an opened filter is to have, given what Open
// found: the stored config ("" for none) and the length of the bitmap, or
// for a window the number of recorded generations. A config other than the
// stored one is to be written.
func (c *core[T]) decide(stored string, n int64, second string, windowed bool, o *options) (string, error) {
	if stored != "" && paramsOf(stored) != c.params {
		return "", c.fail("open", ErrMismatch, stored)
	}
	if windowed {
		switch {
		case stored != "":
			return stored, nil
		case n > 0 && !o.adopt:
			return "", c.fail("open", ErrLost, fmt.Sprintf("config key %s is missing, but %s records %d generations: if they are this filter's, open it with WithAdopt to take them back; otherwise delete %s and the generations' keys", c.cfgKey, second, n, second))
		}
		return c.newConfig(), nil
	}
	switch {
	case n != 0 && n != c.nbytes():
		return "", c.fail("open", ErrNotFilter, fmt.Sprintf("%s holds %d bytes, want %d", second, n, c.nbytes()))
	case stored != "" && n != 0:
		return stored, nil
	case stored != "" && !o.recreate:
		return "", c.fail("open", ErrLost, fmt.Sprintf("bitmap %s is missing but its config key %s exists: the values put are gone (deleted, evicted, or a restart without persistence); open it with WithRecreate to start it again empty, or rebuild it from a Hybrid's Sync", second, c.cfgKey))
	case stored == "" && n != 0 && !o.adopt:
		return "", c.fail("open", ErrLost, fmt.Sprintf("config key %s is missing, but bitmap %s has the length of this filter: if it was created with these parameters, open it with WithAdopt to take it back; otherwise delete %s", c.cfgKey, second, second))
	}
	return c.newConfig(), nil
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
