package main

import (
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestLimitChain requires the dependent-load chain to be one cycle through
// the first word of every cache line of the memory, so that a chained load
// never finds its line in a cache before the cycle closes.
func TestLimitChain(t *testing.T) {
	for _, n := range []int64{1, 1000, 1e5} {
		m, err := newLimitMemory(n)
		require.NoError(t, err)
		lines := len(m.words) / lineWords
		seen := make([]bool, max(lines, 1))
		i := uint64(0)
		for range max(lines, 1) {
			require.Zero(t, i%lineWords, "n=%d: the chain leaves a line's first word", n)
			require.False(t, seen[i/lineWords], "n=%d: line %d visited twice before the cycle closes", n, i/lineWords)
			seen[i/lineWords] = true
			i = m.words[i]
		}
		assert.Zero(t, i, "n=%d: the chain does not close after every line", n)
	}
}

// TestAbsentProbes checks the mean number of probes of an absent key
// against its closed form, (1 − fᵏ) / (1 − f).
func TestAbsentProbes(t *testing.T) {
	for _, f := range []float64{0.1, 0.5, 0.49} {
		for _, k := range []int{1, 7, 13} {
			want := (1 - math.Pow(f, float64(k))) / (1 - f)
			assert.InDelta(t, want, absentProbes(f, k), 1e-12, "f=%v k=%d", f, k)
		}
	}
	assert.Equal(t, 7.0, absentProbes(1, 7), "in a full filter every probe is made")
}
