package redisfilter

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"sync"

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

	configFormat = "mitzbloom/redisfilter v1"
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
	cfg      string // the config key's value
}

// newCore validates the arguments of Open and OpenWindowed and sizes the
// filter. window is appended to the config, "" for a plain filter.
func newCore[T any](rdb redis.UniversalClient, name string, f funnel.Funnel[T], expectedInsertions int64, fpp float64, window string, o *options) (core[T], error) {
	var c core[T]
	switch {
	case rdb == nil:
		return c, fmt.Errorf("%w: Redis client is nil", bloom.ErrInvalidArgument)
	case name == "":
		// "{}" is no hash tag: the keys of a filter would land in
		// different cluster slots.
		return c, fmt.Errorf("%w: filter name is empty", bloom.ErrInvalidArgument)
	case f == nil:
		return c, fmt.Errorf("%w: funnel is nil", bloom.ErrInvalidArgument)
	case o.strategy == nil:
		return c, fmt.Errorf("%w: strategy is nil", bloom.ErrInvalidArgument)
	}
	funnelName := o.funnelName
	if funnelName == "" {
		s, ok := f.(fmt.Stringer)
		if !ok {
			return c, fmt.Errorf("%w: funnel %T has no String method; name it with WithFunnelName", bloom.ErrInvalidArgument, f)
		}
		funnelName = s.String()
	}
	bitSize, k, err := bloom.Size(expectedInsertions, fpp, o.sizing()...)
	if err != nil {
		return c, err
	}
	if bitSize > maxBits {
		return c, fmt.Errorf("%w: %d bits, more than the 2^32 bits (512 MiB) a Redis string holds", bloom.ErrTooLarge, bitSize)
	}
	cfg := fmt.Sprintf("%s bits=%d k=%d strategy=%v funnel=%q%s", configFormat, bitSize, k, o.strategy, funnelName, window)
	return core[T]{
		rdb:      rdb,
		name:     name,
		funnel:   f,
		fname:    funnelName,
		strategy: o.strategy,
		k:        k,
		bitSize:  bitSize,
		cfgKey:   "{" + name + "}:config",
		cfg:      cfg,
	}, nil
}

func newOptions(opts []Option) *options {
	o := &options{strategy: strategy.Murmur128Mitz64}
	for _, opt := range opts {
		opt(o)
	}
	return o
}

func (c *core[T]) nbytes() int64 { return c.bitSize / 8 }

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
			s.argv = append(s.argv, c.cfg, c.nbytes(), mode, c.k)
			for i := first; i < min(len(s.offsets), first+perScript*c.k); i++ {
				s.argv = append(s.argv, &s.offsets[i])
			}
			s.scripts = append(s.scripts, s.argv[from:len(s.argv):len(s.argv)])
		}
		answers, err := c.runScripts(ctx, script, keys, s.scripts)
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

// snapshot reads bitmap and the config in one transaction, one round trip,
// and decodes them as Guava's readFrom would the writeTo stream they make.
// A missing bitmap is an error unless missingOK, when it reads as empty.
func (c *core[T]) snapshot(ctx context.Context, bitmap string, missingOK bool) (*bloom.Filter[T], error) {
	var cfgCmd, bitsCmd *redis.StringCmd
	_, err := c.rdb.TxPipelined(ctx, func(pipe redis.Pipeliner) error {
		cfgCmd = pipe.Get(ctx, c.cfgKey)
		bitsCmd = pipe.Get(ctx, bitmap)
		return nil
	})
	if err != nil && !errors.Is(err, redis.Nil) {
		return nil, c.wrap("snapshot", err)
	}
	cfg, err := cfgCmd.Result()
	switch {
	case errors.Is(err, redis.Nil):
		return nil, c.fail("snapshot", ErrNotFound, "config key "+c.cfgKey+" is missing")
	case err != nil:
		return nil, c.wrap("snapshot", err)
	case cfg != c.cfg:
		return nil, c.fail("snapshot", ErrMismatch, cfg)
	}
	bits, err := bitsCmd.Bytes()
	switch {
	case errors.Is(err, redis.Nil) && missingOK:
		bits = make([]byte, c.nbytes())
	case errors.Is(err, redis.Nil):
		return nil, c.fail("snapshot", ErrNotFound, "bitmap "+bitmap+" is missing")
	case err != nil:
		return nil, c.wrap("snapshot", err)
	case int64(len(bits)) != c.nbytes():
		return nil, c.fail("snapshot", ErrNotFilter, fmt.Sprintf("%s holds %d bytes, want %d", bitmap, len(bits), c.nbytes()))
	}
	// Guava's header, then the bytes as they are: no copy of the bitmap.
	var header [6]byte
	header[0] = byte(c.strategy.Ordinal())
	header[1] = byte(c.k)
	binary.BigEndian.PutUint32(header[2:], uint32(c.bitSize/64))
	f, err := bloom.ReadFrom(io.MultiReader(bytes.NewReader(header[:]), bytes.NewReader(bits)), c.funnel)
	if err != nil {
		return nil, c.wrap("snapshot", err)
	}
	return f, nil
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
