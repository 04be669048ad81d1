package redisfilter

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/mitzbloom/mitzbloom/strategy"
)

// A filter's config key holds its parameters followed by its identity, as in
//
//	mitzbloom/redisfilter v1 bits=9600 k=7 strategy=MURMUR128_MITZ_64 funnel="funnel.String" id=5f0c2a9e81d4b7c3 n=1000 p=0.01
//
// with " window=1h0m0s generations=3" after the funnel for a window and
// " shard-bytes=N" for a sharded filter; the n and p after the identity,
// which the releases before did not write, are what the creator asked for. Every call compares the whole
// string, so a filter created again, even with the same parameters, is told
// from the one a Filter opened.
const (
	configFormat = "mitzbloom/redisfilter v1"
	idField      = " id="
)

// A filterParams is what a config records of a filter, but for its identity.
type filterParams struct {
	bitSize    int64
	k          int
	strategy   strategy.Strategy
	funnel     string // the funnel's name
	window     string // " window=… generations=…", or "" for a plain filter
	shardBytes int64  // 0 for a filter in one string
}

// String returns p as a config records it.
func (p filterParams) String() string {
	s := fmt.Sprintf("%s bits=%d k=%d strategy=%v funnel=%q%s", configFormat, p.bitSize, p.k, p.strategy, p.funnel, p.window)
	if p.shardBytes != 0 {
		s += fmt.Sprintf(" shard-bytes=%d", p.shardBytes)
	}
	return s
}

// newConfig returns the config of a filter with parameters params created
// now for n values at a false-positive probability of p: the parameters, a
// new random identity, and n and p, which only an error of ErrMismatch
// reads: processes that open the filter with other n and p that give the
// same parameters use it alike.
func newConfig(params string, n int64, p float64) string {
	var id [8]byte
	_, _ = rand.Read(id[:]) // never fails
	return params + idField + hex.EncodeToString(id[:]) + " n=" + strconv.FormatInt(n, 10) + " p=" + strconv.FormatFloat(p, 'g', -1, 64)
}

// sizedFor says what a stored config's filter was created for: the n and p
// it records, or for a config without them (of a release before), the
// range of n and p that its bits and number of hash functions give. Guava
// takes k = round(ln 2 · bits/n), and bits = −n·ln p/ln²2, so a k is that
// of every p from 2^−(k+½) to 2^−(k−½), and the n that gives the bits
// grows with p, from bits·ln 2/(k+½) to bits·ln 2/(k−½).
func sizedFor(cfg string) string {
	if i := strings.LastIndex(cfg, idField); i >= 0 {
		var n, p string
		for _, f := range strings.Fields(cfg[i:]) {
			if v, ok := strings.CutPrefix(f, "n="); ok {
				n = v
			}
			if v, ok := strings.CutPrefix(f, "p="); ok {
				p = v
			}
		}
		if n != "" && p != "" {
			return "n = " + n + " at p = " + p
		}
	}
	var bits int64
	var k int
	if _, err := fmt.Sscanf(paramsOf(cfg), configFormat+" bits=%d k=%d", &bits, &k); err != nil || bits <= 0 || k <= 0 {
		return "unknown n and p"
	}
	kk := float64(k)
	return fmt.Sprintf("n from %d at p = %.2g to %d at p = %.2g (its %d bits and %d hash functions)",
		int64(float64(bits)*math.Ln2/(kk+0.5)), math.Exp2(-(kk + 0.5)), int64(float64(bits)*math.Ln2/max(kk-0.5, 0.5)), math.Exp2(-(kk - 0.5)), bits, k)
}

// paramsOf returns a stored config, or a claim's, without its identity.
func paramsOf(cfg string) string {
	if claimed, _, ok := parseClaim(cfg); ok {
		cfg = claimed
	}
	if i := strings.LastIndex(cfg, idField); i >= 0 {
		return cfg[:i]
	}
	return cfg
}

// isConfig reports whether v, the value of a config key, is one that
// redisfilter writes: a config, of any version, or a claim.
func isConfig(v string) bool {
	return strings.HasPrefix(v, "mitzbloom/redisfilter ") || strings.HasPrefix(v, claimPrefix)
}

// claimPrefix starts the first shard's config key while a filter of
// several shards is being created: "creating <token> <config>", where the
// token, digits, changes at every renewal, and is 0 for a claim given up
// (see lua/claim.lua); the releases before wrote a deadline there.
const claimPrefix = "creating "

// parseClaim returns the config and the token of a claim, and whether v
// is one.
func parseClaim(v string) (cfg, token string, ok bool) {
	rest, ok := strings.CutPrefix(v, claimPrefix)
	if !ok {
		return "", "", false
	}
	token, cfg, ok = strings.Cut(rest, " ")
	if _, err := strconv.ParseUint(token, 10, 64); !ok || err != nil {
		return "", "", false
	}
	return cfg, token, true
}
