package bloom_test

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mitzbloom/mitzbloom/bloom"
	"github.com/mitzbloom/mitzbloom/bloom/raw"
	"github.com/mitzbloom/mitzbloom/funnel"
	"github.com/mitzbloom/mitzbloom/internal/golden"
	"github.com/mitzbloom/mitzbloom/strategy"
)

// The golden vectors were computed by Guava 31.1, which uses the legacy hash
// count rule; every filter here is built with WithLegacyHashCount.

func loadGolden(t *testing.T) *golden.Vectors {
	t.Helper()
	v, err := golden.Load()
	require.NoError(t, err)
	return v
}

func strategyNamed(t *testing.T, name string) strategy.Strategy {
	t.Helper()
	for _, s := range []strategy.Strategy{strategy.Murmur128Mitz32, strategy.Murmur128Mitz64} {
		if s.String() == name {
			return s
		}
	}
	t.Fatalf("unknown strategy %q", name)
	return nil
}

func TestSizingGolden(t *testing.T) {
	for _, c := range loadGolden(t).Sizing {
		n, p := c.ExpectedInsertions, c.Fpp()
		bitSize, k, err := bloom.Size(n, p, bloom.WithLegacyHashCount())
		name := fmt.Sprintf("n=%d p=%v", n, p)
		switch c.Error {
		case "":
			if assert.NoError(t, err, name) {
				assert.Equal(t, c.BitSize, bitSize, name)
				assert.Equal(t, c.NumHashFunctions, k, name)
			}
			continue
		case "zero":
			assert.ErrorContains(t, err, "of 0 bits", name)
		case "tooLarge":
			assert.ErrorContains(t, err, fmt.Sprintf("of %d bits: %d words", c.OptimalNumOfBits, (c.OptimalNumOfBits-1)/64+1), name)
		case "tooManyHashFunctions":
			assert.ErrorContains(t, err, fmt.Sprintf("of %d bits: number of hash functions (%d) must be <= 255", c.OptimalNumOfBits, c.NumHashFunctions), name)
		default:
			t.Fatalf("%s: unknown error kind %q", name, c.Error)
		}
		assert.True(t, errors.Is(err, bloom.ErrInvalidArgument), "%s: %v", name, err)
		assert.Zero(t, bitSize, name)
		assert.Zero(t, k, name)
	}
}

// A writeMode is a way a filter can write its bits: atomically, as every
// Filter does, or plainly, as a Builder's does until it hands it over. Each
// must build Guava's filters exactly.
type writeMode struct {
	name  string
	plain bool
}

var writeModes = []writeMode{{"atomic", false}, {"plain", true}}

// mustNewMode returns a filter made as New makes it, that writes its bits
// in mode m.
func mustNewMode[T any](t testing.TB, m writeMode, f funnel.Funnel[T], n int64, p float64, opts ...bloom.Option) *bloom.Filter[T] {
	t.Helper()
	if !m.plain {
		return mustNew(t, f, n, p, opts...)
	}
	filter, err := bloom.NewPlain(f, n, p, opts...)
	require.NoError(t, err)
	return filter
}

// goldenOptions returns the options that build c's filter.
func goldenOptions(t *testing.T, strategyName string) []bloom.Option {
	return []bloom.Option{bloom.WithStrategy(strategyNamed(t, strategyName)), bloom.WithLegacyHashCount()}
}

// goldenCase runs one golden filter vector with funnel f, in each write mode.
func goldenCase[T any](t *testing.T, c golden.Filter, f funnel.Funnel[T], decode func(json.RawMessage) T) {
	for _, m := range writeModes {
		t.Run(m.name, func(t *testing.T) { goldenModeCase(t, c, f, decode, m) })
	}
}

func goldenModeCase[T any](t *testing.T, c golden.Filter, f funnel.Funnel[T], decode func(json.RawMessage) T, m writeMode) {
	filter := mustNewMode(t, m, f, c.ExpectedInsertions, c.Fpp, goldenOptions(t, c.Strategy)...)
	require.Equal(t, c.BitSize, filter.BitSize())
	require.Equal(t, c.NumHashFunctions, filter.NumHashFunctions())
	inserts := golden.DecodeAll(c.Inserts, decode)
	for i, v := range inserts {
		assert.Equal(t, c.PutResults[i], filter.Put(v), "put %d", i)
	}
	for i, v := range golden.DecodeAll(c.Probes, decode) {
		assert.Equal(t, c.ProbeResults[i], filter.MightContain(v), "probe %d", i)
	}
	assert.Equal(t, c.ApproximateElementCount, filter.ApproximateElementCount())
	assert.Equal(t, c.ExpectedFppBits, math.Float64bits(filter.ExpectedFPP()), "expectedFpp %v, Guava %v", filter.ExpectedFPP(), math.Float64frombits(c.ExpectedFppBits))

	var buf bytes.Buffer
	n, err := filter.WriteTo(&buf)
	require.NoError(t, err)
	assert.EqualValues(t, c.SerializedLength, n)
	assert.Equal(t, c.SerializedHex, hex.EncodeToString(buf.Bytes()))
	sum := sha256.Sum256(buf.Bytes())
	assert.Equal(t, c.SerializedSha256, hex.EncodeToString(sum[:]))

	// The batch calls build Guava's bytes and give Guava's answers too.
	batch := mustNewMode(t, m, f, c.ExpectedInsertions, c.Fpp, goldenOptions(t, c.Strategy)...)
	batch.PutMany(inserts)
	batchBytes, err := batch.MarshalBinary()
	require.NoError(t, err)
	assert.Equal(t, c.SerializedHex, hex.EncodeToString(batchBytes), "PutMany")
	assert.Equal(t, c.ProbeResults, batch.MightContainMany(nil, golden.DecodeAll(c.Probes, decode)), "MightContainMany")

	// Guava's bytes read back into an equal filter.
	read, err := bloom.ReadFrom(bytes.NewReader(golden.MustHex(c.SerializedHex)), f)
	require.NoError(t, err)
	assert.True(t, read.Equal(filter))
	assert.Equal(t, c.Strategy, raw.Strategy(read).String())
	for _, v := range inserts {
		assert.True(t, read.MightContain(v))
	}
}

func TestFiltersGolden(t *testing.T) {
	for _, c := range loadGolden(t).Filters {
		t.Run(fmt.Sprintf("%s/%s/n=%d/p=%v", c.Funnel, c.Strategy, c.ExpectedInsertions, c.Fpp), func(t *testing.T) {
			switch c.Funnel {
			case "bytes":
				goldenCase(t, c, funnel.Bytes, golden.DecodeBytes)
			case "string":
				goldenCase(t, c, funnel.String, golden.Decode[string])
			case "unencodedChars":
				goldenCase(t, c, funnel.UnencodedChars, golden.Decode[string])
			case "int32":
				goldenCase(t, c, funnel.Int32, golden.Decode[int32])
			case "int64":
				goldenCase(t, c, funnel.Int64, golden.Decode[int64])
			case "sequentialInt64":
				goldenCase(t, c, funnel.Sequential(funnel.Int64), golden.Decode[[]int64])
			case "record":
				goldenCase(t, c, golden.RecordFunnel, golden.Decode[golden.Record])
			default:
				t.Fatalf("unknown funnel %q", c.Funnel)
			}
		})
	}
}

// ruledCase runs one large golden vector whose values follow a rule, in
// each write mode.
func ruledCase[T any](t *testing.T, c golden.Ruled, f funnel.Funnel[T], value func(int) T) {
	for _, m := range writeModes {
		t.Run(m.name, func(t *testing.T) { ruledModeCase(t, c, f, value, m) })
	}
}

func ruledModeCase[T any](t *testing.T, c golden.Ruled, f funnel.Funnel[T], value func(int) T, m writeMode) {
	filter := mustNewMode(t, m, f, c.ExpectedInsertions, c.Fpp, goldenOptions(t, c.Strategy)...)
	require.Equal(t, c.BitSize, filter.BitSize())
	require.Equal(t, c.NumHashFunctions, filter.NumHashFunctions())
	changed := 0
	for i := range c.Inserts {
		if filter.Put(value(i)) {
			changed++
		}
	}
	assert.Equal(t, c.PutsThatChanged, changed)
	falsePositives := 0
	for i := range c.Probes {
		got := filter.MightContain(value(c.Inserts + i))
		require.Equal(t, c.ProbeResults[i], got, "probe %d", i)
		if got {
			falsePositives++
		}
	}
	assert.Equal(t, c.FalsePositives, falsePositives)
	assert.Equal(t, c.ApproximateElementCount, filter.ApproximateElementCount())
	assert.Equal(t, c.ExpectedFppBits, math.Float64bits(filter.ExpectedFPP()))
	data, err := filter.MarshalBinary()
	require.NoError(t, err)
	assert.Len(t, data, c.SerializedLength)
	sum := sha256.Sum256(data)
	assert.Equal(t, c.SerializedSha256, hex.EncodeToString(sum[:]))

	// The batch calls, in slices of uneven lengths, build the same bytes and
	// give the same answers.
	batch := mustNewMode(t, m, f, c.ExpectedInsertions, c.Fpp, goldenOptions(t, c.Strategy)...)
	var answers []bool
	for _, r := range [][2]int{{0, c.Inserts}, {c.Inserts, c.Inserts + c.Probes}} {
		for lo := r[0]; lo < r[1]; lo += 997 {
			vs := make([]T, 0, 997)
			for i := lo; i < min(lo+997, r[1]); i++ {
				vs = append(vs, value(i))
			}
			if r[0] == 0 {
				batch.PutMany(vs)
			} else {
				answers = batch.MightContainMany(answers, vs)
			}
		}
	}
	assert.Equal(t, c.ProbeResults, answers, "MightContainMany")
	data, err = batch.MarshalBinary()
	require.NoError(t, err)
	sum = sha256.Sum256(data)
	assert.Equal(t, c.SerializedSha256, hex.EncodeToString(sum[:]), "PutMany")
}

func TestRuledGolden(t *testing.T) {
	for _, c := range loadGolden(t).Ruled {
		t.Run(fmt.Sprintf("%s/%s/n=%d", c.Rule, c.Strategy, c.Inserts), func(t *testing.T) {
			if testing.Short() && c.Inserts > 1e6 {
				t.Skip("5 million puts; run without -short")
			}
			t.Parallel()
			switch c.Rule {
			case "int64":
				ruledCase(t, c, funnel.Int64, golden.Int64Rule)
			case "string":
				ruledCase(t, c, funnel.String, golden.StringRule)
			default:
				t.Fatalf("unknown rule %q", c.Rule)
			}
		})
	}
}

func unionCase[T any](t *testing.T, c golden.Union, f funnel.Funnel[T], decode func(json.RawMessage) T) {
	opts := []bloom.Option{bloom.WithStrategy(strategyNamed(t, c.Strategy)), bloom.WithLegacyHashCount()}
	a, err := bloom.New(f, c.ExpectedInsertions, c.Fpp, opts...)
	require.NoError(t, err)
	b, err := bloom.New(f, c.ExpectedInsertions, c.Fpp, opts...)
	require.NoError(t, err)
	for _, v := range golden.DecodeAll(c.InsertsA, decode) {
		a.Put(v)
	}
	insertsB := golden.DecodeAll(c.InsertsB, decode)
	for _, v := range insertsB {
		b.Put(v)
	}
	bBefore := b.Copy()
	require.NoError(t, a.PutAll(b))
	assert.True(t, b.Equal(bBefore), "PutAll leaves its argument alone")
	for _, v := range insertsB {
		assert.True(t, a.MightContain(v))
	}
	assert.Equal(t, c.ApproximateElementCount, a.ApproximateElementCount())
	data, err := a.MarshalBinary()
	require.NoError(t, err)
	sum := sha256.Sum256(data)
	assert.Equal(t, c.SerializedSha256, hex.EncodeToString(sum[:]))
}

func TestUnionsGolden(t *testing.T) {
	for _, c := range loadGolden(t).Unions {
		t.Run(fmt.Sprintf("%s/%s", c.Funnel, c.Strategy), func(t *testing.T) {
			switch c.Funnel {
			case "string":
				unionCase(t, c, funnel.String, golden.Decode[string])
			case "int64":
				unionCase(t, c, funnel.Int64, golden.Decode[int64])
			default:
				t.Fatalf("unknown funnel %q", c.Funnel)
			}
		})
	}
}
