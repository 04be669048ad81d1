package redisfilter

import (
	"crypto/rand"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"strconv"
	"strings"
	"sync/atomic"

	"github.com/mitzbloom/mitzbloom/redisfilter/internal/wire"
)

// A request is what one step of a batch sends to one shard, and the bits it
// sends: for a put, a transaction of guard.lua, one BITFIELD and
// unguard.lua; for a read, one BITFIELD_RO per generation between two reads
// of the config and the lengths, which check that the bits read are the
// filter's.
type request struct {
	wire.Request
	shard *shard
	bits  []bit // the bits of its BITFIELDs, in order
}

// The words of a BITFIELD, boxed once: a string put in an interface
// allocates, but for a constant.
var bitfieldGet, bitfieldSet, bitfieldU1, bitfieldOne any = "GET", "SET", "u1", "1"

// guardTokens numbers the Puts of this process, and tokenPrefix tells this
// process from others, for the tokens by which unguard.lua tells the hash
// that guard.lua leaves in a bitmap's place from any other.
var (
	guardTokens atomic.Uint64
	tokenPrefix = func() string {
		var b [8]byte
		_, _ = rand.Read(b[:]) // never fails
		return hex.EncodeToString(b[:]) + "-"
	}()
)

// The ways guard.lua logs a plain filter's bits: those that are clear, which
// it reads, or all of them, for a put that found its values not in the
// filter just before.
var guardCheck, guardLogAll any = "clear", "all"

// guardToken returns a token that no other Put uses.
func guardToken() string {
	return tokenPrefix + strconv.FormatUint(guardTokens.Add(1), 36)
}

// newRequest returns the request that puts or tests bits, of shard s.
func (c *core[T]) newRequest(s *shard, bits []bit, b *batch) *request {
	r := &request{Request: wire.Request{Key: s.key}, shard: s, bits: bits}
	bitfield := func(cmd, key string, set bool) []any {
		op := bitfieldGet
		if set {
			op = bitfieldSet
		}
		// In the batch's arena, which every step of the call reuses.
		start := len(b.arena)
		b.arena = append(b.arena, cmd, key)
		for i := range bits {
			// A pointer boxes without allocating, and go-redis sends
			// it in decimal.
			b.arena = append(b.arena, op, bitfieldU1, &bits[i].off)
			if set {
				b.arena = append(b.arena, bitfieldOne)
			}
		}
		return b.arena[start:len(b.arena):len(b.arena)]
	}
	if b.put {
		// EVAL's number of keys, then the keys, as guard.lua names them.
		token := guardToken()
		check := guardCheck
		if b.tested {
			check = guardLogAll
		}
		key, keys, args := s.key, []any{4, s.cfgKey, s.key, s.holdKey, s.logKey}, []any{c.cfg, s.nbytes(), token, logRecords(bits), c.logCap(s), check}
		if b.windowed {
			key = s.genKey(b.gens[0])
			keys = []any{4, s.cfgKey, key, s.holdKey, s.gensKey}
			args = []any{c.cfg, s.nbytes(), token, b.expireAt, b.now, b.period, b.generations}
		}
		guard := append(append([]any{"EVAL", guardScript.Text()}, keys...), args...)
		unguard := []any{"EVAL", unguardScript.Text(), 2, key, s.holdKey, token}
		r.Tx = true
		r.Cmds = [][]any{guard, bitfield("BITFIELD", key, true), unguard}
		return r
	}
	keys := []string{s.key}
	if b.windowed {
		keys = keys[:0]
		for _, g := range b.gens {
			keys = append(keys, s.genKey(g))
		}
	}
	// The config and the lengths are read before and after the bits: a
	// filter's identity never comes back once changed and bits are never
	// cleared, so if both agree the bits are the filter's.
	r.Cmds = append(r.Cmds, []any{"GET", s.cfgKey})
	for _, k := range keys {
		r.Cmds = append(r.Cmds, []any{"STRLEN", k})
		if b.windowed {
			r.Cmds = append(r.Cmds, []any{"ZSCORE", s.gensKey, k})
		}
	}
	for _, k := range keys {
		r.Cmds = append(r.Cmds, bitfield("BITFIELD_RO", k, false))
	}
	r.Cmds = append(r.Cmds, []any{"GET", s.cfgKey})
	for _, k := range keys {
		r.Cmds = append(r.Cmds, []any{"STRLEN", k})
	}
	return r
}

// readReplies checks the replies of r and records what they tell in a: for
// a put, whether each value changed a bit; for a read, whether each value
// has a bit not set, per generation. For a read it first checks, in Go,
// what check_config and check_bitmap in lua/lib.lua check, and records
// nothing if they fail; with a nil a, it only checks.
func (c *core[T]) readReplies(r *request, b *batch, a *answers) error {
	if r.Err != nil {
		return r.Err
	}
	for i, res := range r.Res {
		if err, ok := res.(error); ok {
			// A read's command on a key of another type: name the key.
			if key, _ := r.Cmds[i][1].(string); !r.Tx && strings.HasPrefix(err.Error(), "WRONGTYPE") {
				return problem{kind: wrongType, key: key, detail: err.Error()}
			}
			return err
		}
	}
	bits := func(res any) ([]any, error) {
		v, ok := res.([]any)
		if !ok || len(v) != len(r.bits) {
			return nil, fmt.Errorf("BITFIELD of %s answered %T with %d values for %d bits", r.shard.key, res, len(v), len(r.bits))
		}
		return v, nil
	}
	if b.put {
		old, err := bits(r.Res[1])
		if err != nil || a == nil {
			return err
		}
		for i, bt := range r.bits {
			if old[i] == int64(0) {
				a.changed[bt.value] = true
			}
		}
		return r.Unconfirmed
	}
	ngens, per := 1, 1 // per: commands per key before the bits
	if b.windowed {
		ngens, per = len(b.gens), 2
	}
	after := 1 + (per+1)*ngens // the second GET
	if err := checkConfigs(r.shard.cfgKey, c.cfg, r.Res[0], r.Res[after]); err != nil {
		return err
	}
	want := r.shard.nbytes()
	created := make([]bool, ngens)
	for g := range ngens {
		key := r.shard.key
		if b.windowed {
			key = r.shard.genKey(b.gens[g])
		}
		before, _ := r.Res[1+per*g].(int64)
		later, _ := r.Res[after+1+g].(int64)
		switch {
		case before == want && later == want && b.windowed && r.Res[2+per*g] == nil:
			return problem{kind: foreign, key: key, detail: fmt.Sprintf("holds a string of %d bytes that the window did not record", want)}
		case before == want && later == want:
			created[g] = true
			continue
		case before != 0 && before != want || later != 0 && later != want:
			return problem{kind: wrongLength, key: key, detail: fmt.Sprintf("%d %d", max(before, later), want)}
		case !b.windowed:
			return problem{kind: noBitmap, key: key}
		}
		if expires := r.Res[2+per*g]; expires != nil && parseMillis(expires) > b.now {
			return problem{kind: noGeneration, key: key}
		}
		// A generation not created in this shard, or expired: none of
		// its values has a bit here.
	}
	if a == nil {
		return nil
	}
	for g := range ngens {
		if !created[g] {
			for _, bt := range r.bits {
				a.unset[bt.value*ngens+g] = true
			}
			continue
		}
		v, err := bits(r.Res[1+per*ngens+g])
		if err != nil {
			return err
		}
		for i, bt := range r.bits {
			if v[i] == int64(0) {
				a.unset[bt.value*ngens+g] = true
			}
		}
	}
	return nil
}

// checkConfigs returns the problem of the values cfgs of the config key
// cfgKey, read before and after a read, if one is not want, or nil: what
// check_config in lua/lib.lua checks, for the reads made of plain
// commands.
func checkConfigs(cfgKey string, want any, cfgs ...any) error {
	for _, cfg := range cfgs {
		switch {
		case cfg == nil:
			return problem{kind: noConfig, key: cfgKey}
		case cfg != want:
			return problem{kind: otherConfig, key: cfgKey, detail: fmt.Sprint(cfg)}
		}
	}
	return nil
}

// logRecords returns the change log's records of bits (see lua/log.lua).
func logRecords(bits []bit) []byte {
	records := make([]byte, 0, 4*len(bits))
	for _, b := range bits {
		records = binary.BigEndian.AppendUint32(records, uint32(b.off))
	}
	return records
}

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
