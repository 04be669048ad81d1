package bloom_test

import (
	"bytes"
	"encoding"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mitzbloom/mitzbloom/bloom"
	"github.com/mitzbloom/mitzbloom/bloom/bloomtest"
	"github.com/mitzbloom/mitzbloom/funnel"
	"github.com/mitzbloom/mitzbloom/internal/race"
)

var (
	_ encoding.BinaryMarshaler   = (*bloom.Rotating[string])(nil)
	_ encoding.BinaryUnmarshaler = (*bloom.Rotating[string])(nil)
)

// TestRotatingBatchMatchesOneByOne requires PutMany to leave a Rotating as
// a loop of Put does, rotations on count included, and MightContainMany to
// answer as MightContain does across both generations.
func TestRotatingBatchMatchesOneByOne(t *testing.T) {
	const n = 300 // small generations, so that the puts below fill some
	clockOne, clockMany := bloomtest.NewClock(epoch), bloomtest.NewClock(epoch)
	one := mustNewRotating(t, funnel.String, n, 0.01, time.Minute, bloom.WithClock(clockOne))
	many := mustNewRotating(t, funnel.String, n, 0.01, time.Minute, bloom.WithClock(clockMany))
	var vs []string
	for i := range 1000 {
		vs = append(vs, fmt.Sprint("v", i))
	}
	for _, batch := range [][]string{vs[:0], vs[:1], vs[1:40], vs[40:500], vs[500:]} {
		for _, v := range batch {
			one.Put(v)
		}
		many.PutMany(batch)
		clockOne.Advance(20 * time.Second)
		clockMany.Advance(20 * time.Second)
	}
	a, err := one.MarshalBinary()
	require.NoError(t, err)
	b, err := many.MarshalBinary()
	require.NoError(t, err)
	assert.Equal(t, a, b, "PutMany left different generations")
	assert.Equal(t, one.Stats().Rotations, many.Stats().Rotations)
	assert.NotZero(t, many.Stats().EarlyRotations, "the puts should fill a generation")

	probes := append(vs[:0:0], vs...)
	for i := range 500 {
		probes = append(probes, fmt.Sprint("absent", i))
	}
	got := many.MightContainMany([]bool{true}, probes)
	require.Len(t, got, 1+len(probes))
	assert.True(t, got[0], "MightContainMany overwrote dst")
	hits := 0
	for i, v := range probes {
		require.Equal(t, many.MightContain(v), got[1+i], "%q", v)
		if got[1+i] {
			hits++
		}
	}
	assert.Less(t, 300, hits, "too few present values to test both answers")
	assert.Less(t, hits, len(probes)-300, "too few absent values to test both answers")
}

// TestRotatingBatchLarge is TestRotatingBatchMatchesOneByOne with
// generations large enough (9.6 MB) for the batch calls to prefetch, a few
// thousand values in each.
func TestRotatingBatchLarge(t *testing.T) {
	const n = 8_000_000
	clockOne, clockMany := bloomtest.NewClock(epoch), bloomtest.NewClock(epoch)
	one := mustNewRotating(t, funnel.String, n, 0.01, time.Minute, bloom.WithClock(clockOne))
	many := mustNewRotating(t, funnel.String, n, 0.01, time.Minute, bloom.WithClock(clockMany))
	var vs []string
	for i := range 6000 {
		vs = append(vs, fmt.Sprint("v", i))
	}
	for w, batch := range [][]string{vs[:3000], vs[3000:]} {
		if w > 0 {
			clockOne.Advance(time.Minute)
			clockMany.Advance(time.Minute)
		}
		for _, v := range batch {
			one.Put(v)
		}
		many.PutMany(batch)
	}
	a, err := one.MarshalBinary()
	require.NoError(t, err)
	b, err := many.MarshalBinary()
	require.NoError(t, err)
	assert.True(t, bytes.Equal(a, b), "PutMany left different generations")

	// The first 3000 values are in the previous generation, the others in
	// the current one.
	probes := append(vs[:0:0], vs...)
	for i := range 3000 {
		probes = append(probes, fmt.Sprint("absent", i))
	}
	got := many.MightContainMany(nil, probes)
	for i, v := range probes {
		require.Equal(t, many.MightContain(v), got[i], "%q", v)
		if i < len(vs) {
			require.True(t, got[i], "%q was put", v)
		}
	}
}

// TestRotatingBinary checks that MarshalBinary writes what WriteTo writes
// and UnmarshalBinary reads it back into another Rotating, and that bad
// data leaves the Rotating unchanged with the error of what is wrong.
func TestRotatingBinary(t *testing.T) {
	clock := bloomtest.NewClock(epoch)
	r, _, _ := twoWindows(t, clock)
	data, err := r.MarshalBinary()
	require.NoError(t, err)
	var buf bytes.Buffer
	_, err = r.WriteTo(&buf)
	require.NoError(t, err)
	assert.Equal(t, buf.Bytes(), data)

	other := mustNewRotating(t, funnel.String, 1000, 0.01, time.Minute, bloom.WithClock(clock))
	require.NoError(t, other.UnmarshalBinary(data))
	again, err := other.MarshalBinary()
	require.NoError(t, err)
	assert.Equal(t, data, again)
	assert.True(t, other.MightContain("a1") && other.MightContain("b1"))
	// The current generation starts now: a window later "a1" is forgotten,
	// two later "b1" too.
	clock.Advance(time.Minute)
	assert.False(t, other.MightContain("a1"))
	assert.True(t, other.MightContain("b1"))
	clock.Advance(time.Minute)
	assert.False(t, other.MightContain("b1"))

	half := len(data) / 2
	small := mustNewRotating(t, funnel.String, 10, 0.01, time.Minute, bloom.WithClock(clock))
	for name, tc := range map[string]struct {
		into *bloom.Rotating[string]
		data []byte
		want error
		msg  string
	}{
		"empty":          {other, nil, bloom.ErrCorrupt, "no data"},
		"one generation": {other, data[:half], bloom.ErrCorrupt, "stream ends after the current generation"},
		"truncated":      {other, data[:len(data)-1], bloom.ErrCorrupt, ""},
		"trailing":       {other, append(bytes.Clone(data), 0), bloom.ErrCorrupt, "1 bytes after the two"},
		"other size":     {small, data, bloom.ErrIncompatible, "current generation"},
	} {
		before, err := tc.into.MarshalBinary()
		require.NoError(t, err)
		err = tc.into.UnmarshalBinary(tc.data)
		require.ErrorIs(t, err, tc.want, name)
		assert.Contains(t, err.Error(), tc.msg, name)
		after, err := tc.into.MarshalBinary()
		require.NoError(t, err)
		assert.Equal(t, before, after, "%s: a failed UnmarshalBinary changed the Rotating", name)
	}
	// A zero Rotating decodes what ReadRotating reads with the funnel
	// alone; one without a default funnel does not.
	var zero bloom.Rotating[string]
	require.NoError(t, zero.UnmarshalBinary(data))
	again, err = zero.MarshalBinary()
	require.NoError(t, err)
	assert.Equal(t, data, again)
	assert.Contains(t, zero.String(), "read-only")
	var noDefault bloom.Rotating[visit]
	require.ErrorIs(t, noDefault.UnmarshalBinary(data), bloom.ErrInvalidArgument)
}

// TestRotatingBatchConcurrent runs PutMany, MightContainMany,
// UnmarshalBinary and the text form's methods from many goroutines at once, for the race detector, and
// requires every value put to be found afterwards.
func TestRotatingBatchConcurrent(t *testing.T) {
	r := mustNewRotating(t, funnel.Int64, 100_000, 0.01, time.Hour)
	snapshot, err := r.MarshalBinary()
	require.NoError(t, err)
	snapshotText, err := r.MarshalText()
	require.NoError(t, err)
	const goroutines, per = 8, 2000
	var wg sync.WaitGroup
	for g := range goroutines {
		wg.Add(2)
		go func() {
			defer wg.Done()
			vs := make([]int64, 0, 100)
			for i := range per {
				vs = append(vs, int64(g*per+i))
				if len(vs) == cap(vs) {
					r.PutMany(vs)
					vs = vs[:0]
				}
			}
		}()
		go func() {
			defer wg.Done()
			var out []bool
			for range 20 {
				out = r.MightContainMany(out[:0], []int64{1, 2, 3, int64(g)})
			}
			if g == 0 {
				// A snapshot taken before any put: loading it races the
				// puts, which is allowed, so only the race detector judges.
				assert.NoError(t, r.UnmarshalBinary(snapshot))
			}
			if g == 1 {
				// The same in text, and a text of the moment.
				assert.NoError(t, r.UnmarshalText(snapshotText))
				_, err := r.MarshalText()
				assert.NoError(t, err)
			}
		}()
	}
	wg.Wait()
	// Put everything again now that nothing replaces the generations.
	for g := range goroutines {
		vs := make([]int64, per)
		for i := range vs {
			vs[i] = int64(g*per + i)
		}
		r.PutMany(vs)
		for i, ok := range r.MightContainMany(nil, vs) {
			require.True(t, ok, "value %d", vs[i])
		}
	}
}

// TestRotatingMightContainManyAllocs requires MightContainMany not to
// allocate when dst has room.
func TestRotatingMightContainManyAllocs(t *testing.T) {
	if race.Enabled {
		t.Skip("the race detector makes sync.Pool drop items at random, so allocation counts mean nothing; .ci/run also runs the tests without -race")
	}
	r := mustNewRotating(t, funnel.String, 1000, 0.01, time.Hour)
	vs := []string{"a", "b", "c"}
	r.PutMany(vs)
	dst := make([]bool, 0, len(vs))
	assert.Zero(t, testing.AllocsPerRun(1000, func() { r.MightContainMany(dst[:0], vs) }))
	assert.Zero(t, testing.AllocsPerRun(1000, func() { r.PutMany(vs) }))
}
