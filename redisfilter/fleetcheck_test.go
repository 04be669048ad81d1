package redisfilter_test

import (
	"cmp"
	"fmt"
	"maps"
	"math/bits"
	"slices"
	"strings"
	"testing"

	"github.com/mitzbloom/mitzbloom/bloom"
	"github.com/mitzbloom/mitzbloom/bloom/raw"
	"github.com/mitzbloom/mitzbloom/redisfilter"
)

// checkFleet checks that Redis's copy, snap, and every Hybrid's local copy
// equal want, a filter of every value put, and otherwise says how: which
// values each answers false for, and by whom they were put, and how many
// bits each lacks or has beyond want and Redis, by shard.
func checkFleet(t *testing.T, want, snap *bloom.Filter[string], hs []*redisfilter.Hybrid[string], put []string) {
	t.Helper()
	if d := diffFilters(snap, want, put); d != "" {
		t.Errorf("Redis differs from a filter of every value put: %s", d)
	}
	for i, h := range hs {
		local := h.Copy()
		if local.Equal(want) && local.Equal(snap) {
			continue
		}
		t.Errorf("Hybrid %d differs: against every value put, %s; against Redis, %s; %+v",
			i, cmp.Or(diffFilters(local, want, put), "equal"), cmp.Or(diffFilters(local, snap, nil), "equal"), h.Stats())
	}
}

// diffFilters says how got differs from want: the bits it lacks and those
// it has beyond want, each by shard of shardBytes, and of values, which
// want holds, those it answers false for, counted by their putter (the
// part of the value before its first '-'), with a few of them. It returns
// "" if they are equal.
func diffFilters(got, want *bloom.Filter[string], values []string) string {
	g, err := got.MarshalBinary()
	if err != nil {
		return err.Error()
	}
	w, err := want.MarshalBinary()
	if err != nil {
		return err.Error()
	}
	if len(g) != len(w) {
		return fmt.Sprintf("%d bytes, want %d", len(g), len(w))
	}
	lacks, extra := map[int]int{}, map[int]int{}
	nlacks, nextra := 0, 0
	for i := raw.HeaderSize; i < len(w); i++ {
		s := (i - raw.HeaderSize) / shardBytes
		if n := bits.OnesCount8(w[i] &^ g[i]); n > 0 {
			lacks[s] += n
			nlacks += n
		}
		if n := bits.OnesCount8(g[i] &^ w[i]); n > 0 {
			extra[s] += n
			nextra += n
		}
	}
	if nlacks == 0 && nextra == 0 {
		return ""
	}
	var b strings.Builder
	fmt.Fprintf(&b, "lacks %d bits (by shard %v), has %d bits beyond (by shard %v)", nlacks, sorted(lacks), nextra, sorted(extra))
	var missing []string
	by := map[string]int{}
	for i, ok := range got.MightContainMany(nil, values) {
		if !ok {
			missing = append(missing, values[i])
			putter, _, _ := strings.Cut(values[i], "-")
			by[putter]++
		}
	}
	if len(values) > 0 {
		fmt.Fprintf(&b, "; answers false for %d of %d values (by putter %v; e.g. %q)", len(missing), len(values), sorted(by), missing[:min(len(missing), 3)])
	}
	return b.String()
}

// sorted formats m with its keys in order.
func sorted[K int | string](m map[K]int) string {
	var b strings.Builder
	b.WriteString("[")
	for i, k := range slices.Sorted(maps.Keys(m)) {
		if i > 0 {
			b.WriteString(" ")
		}
		fmt.Fprintf(&b, "%v:%d", k, m[k])
	}
	b.WriteString("]")
	return b.String()
}
