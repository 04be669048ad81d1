package bloom_test

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mitzbloom/mitzbloom/bloom"
	"github.com/mitzbloom/mitzbloom/funnel"
	"github.com/mitzbloom/mitzbloom/strategy"
)

// TestSizeTable checks the sizing table of docs/guava.md
// §1.4, executed on Guava 31.1, and the hash counts of current Guava (HEAD)
// beside it: bitSize, k of 31.1, k of HEAD.
func TestSizeTable(t *testing.T) {
	ps := []float64{0.5, 0.1, 0.03, 0.01, 0.001, 1e-5}
	rows := []struct {
		n    int64
		want [6][3]int64
	}{
		{0, [6][3]int64{{64, 1, 1}, {64, 3, 3}, {64, 5, 5}, {64, 6, 7}, {64, 10, 10}, {64, 16, 17}}},
		{1, [6][3]int64{{64, 1, 1}, {64, 3, 3}, {64, 5, 5}, {64, 6, 7}, {64, 10, 10}, {64, 16, 17}}},
		{10, [6][3]int64{{64, 1, 1}, {64, 3, 3}, {128, 5, 5}, {128, 7, 7}, {192, 10, 10}, {256, 17, 17}}},
		{100, [6][3]int64{{192, 1, 1}, {512, 3, 3}, {768, 5, 5}, {960, 7, 7}, {1472, 10, 10}, {2432, 17, 17}}},
		{1000, [6][3]int64{{1472, 1, 1}, {4800, 3, 3}, {7360, 5, 5}, {9600, 7, 7}, {14400, 10, 10}, {24000, 17, 17}}},
		{1e6, [6][3]int64{{1442752, 1, 1}, {4792576, 3, 3}, {7298496, 5, 5}, {9585088, 7, 7}, {14377600, 10, 10}, {23962688, 17, 17}}},
	}
	for _, row := range rows {
		for i, p := range ps {
			want := row.want[i]
			bits, k, err := bloom.Size(row.n, p, bloom.WithLegacyHashCount())
			require.NoError(t, err)
			assert.Equal(t, want[0], bits, "n=%d p=%v", row.n, p)
			assert.EqualValues(t, want[1], k, "31.1 k, n=%d p=%v", row.n, p)
			bits, k, err = bloom.Size(row.n, p)
			require.NoError(t, err)
			assert.Equal(t, want[0], bits, "n=%d p=%v", row.n, p)
			assert.EqualValues(t, want[2], k, "HEAD k, n=%d p=%v", row.n, p)
		}
	}
}

// TestSizeJavaLog covers sizes where Go's math.Log, 1 ulp off Java's
// Math.log, would give other bit counts (docs/guava.md §8.3 and §10).
func TestSizeJavaLog(t *testing.T) {
	bits, _, err := bloom.Size(144705823, 0.01)
	require.NoError(t, err)
	assert.EqualValues(t, 1387013760, bits)
	// optimalNumOfBits(40610944, 0.01) = 389258268 and (58348897, 0.01) =
	// 559277583, rounded up to words.
	bits, _, err = bloom.Size(40610944, 0.01)
	require.NoError(t, err)
	assert.EqualValues(t, (389258268+63)/64*64, bits)
	bits, _, err = bloom.Size(58348897, 0.01)
	require.NoError(t, err)
	assert.EqualValues(t, (559277583+63)/64*64, bits)
}

// TestSizeErrors checks Guava's argument checks, their order and wording
// (docs/guava.md §1.1), and that nothing panics.
func TestSizeErrors(t *testing.T) {
	tests := []struct {
		n    int64
		p    float64
		want string
	}{
		{-1, 0.01, "bloom: invalid argument: expected insertions (-1) must be >= 0"},
		{-1, math.NaN(), "expected insertions (-1) must be >= 0"},
		{10, 0, "false positive probability (0.0) must be > 0.0"},
		{10, -0.5, "false positive probability (-0.5) must be > 0.0"},
		{10, math.NaN(), "false positive probability (NaN) must be > 0.0"},
		{10, math.Inf(-1), "false positive probability (-Infinity) must be > 0.0"},
		{10, 1, "false positive probability (1.0) must be < 1.0"},
		{10, math.Inf(1), "false positive probability (Infinity) must be < 1.0"},
		{1, 0.99, "could not create filter of 0 bits"},
		{0, 0.7, "could not create filter of 0 bits"},
		{math.MaxInt32, math.SmallestNonzeroFloat64, "could not create filter of 3327428144502 bits: 51991064758 words is more than 2147483647"},
		{math.MaxInt64, 0.5, "could not create filter of 9223372036854775807 bits: 144115188075855872 words is more than 2147483647"},
		{1000, 1e-80, "could not create filter of 383402 bits: number of hash functions (266) must be <= 255"},
		{1, math.SmallestNonzeroFloat64, "could not create filter of 1549 bits: number of hash functions (1074) must be <= 255"},
	}
	for _, tc := range tests {
		name := fmt.Sprintf("n=%d p=%v", tc.n, tc.p)
		bits, k, err := bloom.Size(tc.n, tc.p)
		assert.ErrorContains(t, err, tc.want, name)
		assert.True(t, errors.Is(err, bloom.ErrInvalidArgument), name)
		assert.Zero(t, bits)
		assert.Zero(t, k)
	}
	_, _, err := bloom.Size(10, 0.01, bloom.WithStrategy(nil))
	assert.ErrorIs(t, err, bloom.ErrInvalidArgument)
	assert.ErrorContains(t, err, "strategy is nil")
}

// TestSizeOn32Bit checks that on a 32-bit platform Size gives Guava's sizing
// for a filter larger than the address space, which New, NewRotating and
// ReadFrom refuse, saying why, instead of failing to allocate it.
func TestSizeOn32Bit(t *testing.T) {
	if strconv.IntSize != 32 {
		t.Skip("only a 32-bit platform has a limit below Guava's; TestSizeErrors checks Guava's")
	}
	const n, p = 1 << 31, 0.01 // 2.4 GiB
	bits, k, err := bloom.Size(n, p)
	require.NoError(t, err)
	assert.Equal(t, 7, k)
	words := bits / 64
	require.Greater(t, words, int64(math.MaxInt/8))
	want := fmt.Sprintf("could not create filter of %d bits: %d words is more than %d this platform can hold", bits, words, math.MaxInt/8)
	_, err = bloom.New(funnel.String, n, p)
	assert.ErrorIs(t, err, bloom.ErrInvalidArgument)
	assert.ErrorContains(t, err, want)
	_, err = bloom.NewRotating(funnel.String, n, p, time.Minute)
	assert.ErrorIs(t, err, bloom.ErrInvalidArgument)
	assert.ErrorContains(t, err, want)

	r := bytes.NewReader(binary.BigEndian.AppendUint32([]byte{1, 7}, uint32(words)))
	_, err = bloom.ReadFrom(r, funnel.String)
	assert.ErrorIs(t, err, bloom.ErrTooLarge)
	assert.ErrorContains(t, err, fmt.Sprintf("%d words is more than %d this platform can hold", words, math.MaxInt/8))
}

func TestSizeOptions(t *testing.T) {
	bits64, k64, err := bloom.Size(1000, 0.01)
	require.NoError(t, err)
	bits32, k32, err := bloom.Size(1000, 0.01, bloom.WithStrategy(strategy.Murmur128Mitz32))
	require.NoError(t, err)
	assert.Equal(t, bits64, bits32, "the strategy does not change the size")
	assert.Equal(t, k64, k32)
}

func TestSizeAllocs(t *testing.T) {
	assert.Zero(t, testing.AllocsPerRun(100, func() { _, _, _ = bloom.Size(1e9, 0.01) }))
}
