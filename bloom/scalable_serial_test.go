package bloom_test

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"testing"
	"testing/iotest"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mitzbloom/mitzbloom/bloom"
	"github.com/mitzbloom/mitzbloom/funnel"
	"github.com/mitzbloom/mitzbloom/strategy"
)

func scalableBytes[T any](t testing.TB, s *bloom.Scalable[T]) []byte {
	t.Helper()
	var buf bytes.Buffer
	n, err := s.WriteTo(&buf)
	require.NoError(t, err)
	require.EqualValues(t, buf.Len(), n)
	return buf.Bytes()
}

// grownScalable returns a Scalable of 10 values at 0.1 grown to stages
// stages, and the values put in it.
func grownScalable(t testing.TB, stages int, opts ...bloom.Option) (*bloom.Scalable[string], []string) {
	t.Helper()
	s := mustNewScalable(t, funnel.String, 10, 0.1, opts...)
	var vs []string
	for i := 0; len(s.Stats().Stages) < stages; i++ {
		v := fmt.Sprint("v", i)
		s.Put(v)
		vs = append(vs, v)
	}
	return s, vs
}

// TestScalableNeverGrewBytes: a Scalable that never grew writes exactly
// the bytes of the Filter its first stage is, given the same values.
func TestScalableNeverGrewBytes(t *testing.T) {
	for _, opts := range [][]bloom.Option{nil, {bloom.WithStrategy(strategy.Murmur128Mitz32), bloom.WithLegacyHashCount(), bloom.WithTightening(0.5)}} {
		s := mustNewScalable(t, funnel.String, 1000, 0.01, opts...)
		r := 0.9
		if opts != nil {
			r = 0.5
		}
		f := mustNew(t, funnel.String, 1000, 0.01*(1-r), opts...)
		for i := range 900 {
			s.Put(fmt.Sprint(i))
			f.Put(fmt.Sprint(i))
		}
		require.Len(t, s.Stats().Stages, 1)
		want, err := f.MarshalBinary()
		require.NoError(t, err)
		assert.Equal(t, want, scalableBytes(t, s))
	}
}

// TestScalableRoundTrip writes a grown Scalable and reads it back: the
// stages are Guava filters back to back, each as ReadFrom reads it, and
// ReadScalable's Scalable writes the same bytes, answers as the original,
// and goes on growing from there.
func TestScalableRoundTrip(t *testing.T) {
	s, vs := grownScalable(t, 5)
	data := scalableBytes(t, s)
	st := s.Stats()

	// Filter by filter, as Guava reads them.
	in := bytes.NewReader(data)
	for i, want := range st.Stages {
		f, err := bloom.ReadFrom(in, funnel.String)
		require.NoError(t, err, "stage %d", i)
		assert.Equal(t, want.BitSize, f.BitSize(), "stage %d", i)
		assert.Equal(t, want.NumHashFunctions, f.NumHashFunctions(), "stage %d", i)
		assert.Equal(t, want.ApproximateElementCount, f.ApproximateElementCount(), "stage %d", i)
	}
	assert.Zero(t, in.Len())

	// The funnel alone reads it, to look values up.
	lookups, err := bloom.ReadScalable(iotest.OneByteReader(bytes.NewReader(data)), funnel.String)
	require.NoError(t, err)
	assert.Equal(t, data, scalableBytes(t, lookups))
	assert.Equal(t, strings.Replace(s.String(), "growth 2, tightening 0.9", "read-only", 1), lookups.String())
	assert.Equal(t, st.ExpectedFPP, lookups.Stats().ExpectedFPP)
	for i := range 5000 {
		v := fmt.Sprint("p", i)
		require.Equal(t, s.MightContain(v), lookups.MightContain(v), v)
	}
	for _, v := range vs {
		require.True(t, lookups.MightContain(v))
	}
	for i, stage := range lookups.Stats().Stages {
		assert.Zero(t, stage.ExpectedInsertions, "stage %d, read without its sizing", i)
		assert.Zero(t, stage.FPP, "stage %d, read without its sizing", i)
		assert.Equal(t, st.Stages[i].BitSize, stage.BitSize, "stage %d", i)
	}
	assert.Zero(t, lookups.Stats().FPP, "read without its sizing")
	assert.PanicsWithValue(t, "bloom: Put into a Scalable read without WithSizing, which cannot grow; read it with ReadScalable(r, f, bloom.WithSizing(initialExpected, fpp)) to go on putting",
		func() { lookups.Put("more") })
	assert.Panics(t, func() { lookups.PutMany([]string{"more"}) })
	assert.Panics(t, func() { lookups.PutSeq(slices.Values([]string{"more"})) })

	// With its sizing, it goes on growing.
	back, err := bloom.ReadScalable(bytes.NewReader(data), funnel.String, bloom.WithSizing(10, 0.1))
	require.NoError(t, err)
	assert.Equal(t, data, scalableBytes(t, back))
	assert.Equal(t, s.String(), back.String())
	assert.Equal(t, st.ExpectedFPP, back.Stats().ExpectedFPP)
	assert.Equal(t, 0.1, back.Stats().FPP)
	assert.InEpsilon(t, s.ApproximateElementCount(), back.ApproximateElementCount(), 0.05)
	for i := range 5000 {
		v := fmt.Sprint("p", i)
		require.Equal(t, s.MightContain(v), back.MightContain(v), v)
	}
	for _, v := range vs {
		require.True(t, back.MightContain(v))
	}

	// The read Scalable fills its newest stage and then adds one more,
	// only one.
	bst := back.Stats()
	newest := bst.Stages[len(bst.Stages)-1]
	room := newest.ExpectedInsertions - newest.Inserts
	for i := range room + 10 {
		back.Put(fmt.Sprint("more", i))
	}
	assert.Len(t, back.Stats().Stages, len(st.Stages)+1)
}

// TestReadScalableErrors feeds ReadScalable broken and mismatched
// streams.
func TestReadScalableErrors(t *testing.T) {
	s, _ := grownScalable(t, 3)
	data := scalableBytes(t, s)
	st := s.Stats()
	var boundaries []int // where each stage ends
	end := 0
	for _, stage := range st.Stages {
		end += 6 + int(stage.BitSize/8)
		boundaries = append(boundaries, end)
	}
	require.Equal(t, len(data), end)

	read := func(b []byte, opts ...bloom.Option) (*bloom.Scalable[string], error) {
		return bloom.ReadScalable(bytes.NewReader(b), funnel.String, append([]bloom.Option{bloom.WithSizing(10, 0.1)}, opts...)...)
	}
	alone := func(b []byte, opts ...bloom.Option) (*bloom.Scalable[string], error) {
		return bloom.ReadScalable(bytes.NewReader(b), funnel.String, opts...)
	}

	_, err := read(nil)
	assert.Equal(t, io.EOF, err, "empty")
	_, err = alone(nil)
	assert.Equal(t, io.EOF, err, "empty, funnel alone")

	// Cut anywhere: inside a stage, the stream is truncated; at a stage's
	// end, it is a Scalable with fewer stages, which is all a stream of
	// filters read until it ends can tell.
	for cut := 1; cut < len(data); cut++ {
		got, err := read(data[:cut])
		stages := 0
		for _, b := range boundaries {
			if b <= cut {
				stages++
			}
		}
		gotAlone, errAlone := alone(data[:cut])
		if cut == boundaries[max(stages-1, 0)] && stages > 0 {
			require.NoError(t, err, "cut at %d", cut)
			require.Len(t, got.Stats().Stages, stages)
			require.NoError(t, errAlone, "cut at %d, funnel alone", cut)
			require.Len(t, gotAlone.Stats().Stages, stages)
			continue
		}
		require.ErrorIs(t, err, bloom.ErrCorrupt, "cut at %d", cut)
		require.ErrorIs(t, err, io.ErrUnexpectedEOF, "cut at %d", cut)
		require.Nil(t, got)
		require.ErrorIs(t, errAlone, bloom.ErrCorrupt, "cut at %d, funnel alone", cut)
		require.ErrorIs(t, errAlone, io.ErrUnexpectedEOF, "cut at %d, funnel alone", cut)
		require.Nil(t, gotAlone)
	}

	// Stages that are not those the options predict, named in the error
	// beside what the stream holds.
	stage0 := data[:boundaries[0]]
	twice := append(append([]byte(nil), stage0...), stage0...)
	for _, c := range []struct {
		name string
		b    []byte
		n    int64
		p    float64
		opts []bloom.Option
		want string
	}{
		{"the first stage twice", twice, 10, 0.1, nil, "stage 1 has 128 bits and 7 hash functions, but WithSizing(10, 0.1), growth 2 and tightening 0.9 make it 256 bits and 7 hash functions"},
		{"another initial size", data, 100, 0.1, nil, "stage 0 has 128 bits and 7 hash functions, but WithSizing(100, 0.1), growth 2 and tightening 0.9 make it 960 bits and 7 hash functions"},
		{"a smaller initial size", data, 1, 0.1, nil, "stage 0: bloom: filter too large: 128 bits is more than the limit of 64"},
		{"another rate", data, 10, 0.2, nil, "stage 0 has 128 bits and 7 hash functions, but WithSizing(10, 0.2), growth 2 and tightening 0.9 make it 128 bits and 6 hash functions"},
		{"another tightening", data, 10, 0.1, []bloom.Option{bloom.WithTightening(0.8)}, "tightening 0.8 make it"},
		{"another growth", data, 10, 0.1, []bloom.Option{bloom.WithGrowth(3)}, "growth 3 and tightening 0.9 make it"},
		{"another strategy", data, 10, 0.1, []bloom.Option{bloom.WithStrategy(strategy.Murmur128Mitz32)},
			"stage 0 has strategy MURMUR128_MITZ_64, but the Scalable's, which WithStrategy sets, is MURMUR128_MITZ_32"},
	} {
		_, err := bloom.ReadScalable(bytes.NewReader(c.b), funnel.String, append([]bloom.Option{bloom.WithSizing(c.n, c.p)}, c.opts...)...)
		assert.ErrorIs(t, err, bloom.ErrIncompatible, c.name)
		assert.ErrorContains(t, err, c.want, c.name)
	}
	_, err = alone(data, bloom.WithStrategy(strategy.Murmur128Mitz32))
	assert.ErrorIs(t, err, bloom.ErrIncompatible, "another strategy, funnel alone")

	// Without the sizing, the stages must still be a Scalable's.
	_, err = alone(twice)
	assert.ErrorIs(t, err, bloom.ErrCorrupt)
	assert.ErrorContains(t, err, "not a Scalable's stages: stage 1 has 128 bits, no more than the 128 of the one before")
	mitz32, _ := grownScalable(t, 3, bloom.WithStrategy(strategy.Murmur128Mitz32))
	mixed := append(append([]byte(nil), stage0...), scalableBytes(t, mitz32)[boundaries[0]:]...)
	_, err = alone(mixed)
	assert.ErrorIs(t, err, bloom.ErrCorrupt)
	assert.ErrorContains(t, err, "not a Scalable's stages: stage 1 has strategy MURMUR128_MITZ_32, the one before MURMUR128_MITZ_64")

	// A second stage whose header announces more words than the stage has
	// is refused after its header, whatever follows.
	big := append([]byte(nil), stage0...)
	big = append(big, data[boundaries[0]:boundaries[0]+2]...)
	big = binary.BigEndian.AppendUint32(big, 1<<30)
	_, err = read(big)
	assert.ErrorIs(t, err, bloom.ErrIncompatible)
	assert.ErrorIs(t, err, bloom.ErrTooLarge)
	// Without the sizing, it grows only as the words arrive, which they do
	// not; where an int cannot count 2³⁰ words of memory, ReadFrom refuses
	// the stage as too large after its header.
	_, err = alone(big)
	if strconv.IntSize == 32 {
		assert.ErrorIs(t, err, bloom.ErrTooLarge)
	} else {
		assert.ErrorIs(t, err, bloom.ErrCorrupt)
		assert.ErrorIs(t, err, io.ErrUnexpectedEOF)
	}

	// Corrupt headers are ReadFrom's errors.
	bad := append([]byte(nil), data...)
	bad[boundaries[0]] = 7 // no such strategy
	_, err = read(bad)
	assert.ErrorIs(t, err, bloom.ErrCorrupt)
	assert.Contains(t, err.Error(), "stage 1")

	// A reader's own error is returned, wrapped.
	boom := errors.New("boom")
	_, err = bloom.ReadScalable(io.MultiReader(bytes.NewReader(data[:boundaries[0]+3]), errReader{boom}), funnel.String)
	assert.ErrorIs(t, err, boom)

	// Arguments NewScalable rejects, before anything is read.
	_, err = read(data, bloom.WithGrowth(1))
	assert.ErrorIs(t, err, bloom.ErrInvalidArgument)
	_, err = bloom.ReadScalable[string](bytes.NewReader(data), nil)
	assert.ErrorIs(t, err, bloom.ErrInvalidArgument)
	_, err = read(data, bloom.WithSizing(10, 1.5))
	assert.ErrorIs(t, err, bloom.ErrInvalidArgument)
}

type errReader struct{ err error }

func (r errReader) Read([]byte) (int, error) { return 0, r.err }

// TestReadScalableAllocation: a stream that announces a large stage and
// ends cannot make ReadScalable allocate the stage.
func TestReadScalableAllocation(t *testing.T) {
	const n = 10_000_000 // a first stage of about 18 MB
	bits, k, err := bloom.Size(n, 0.01*(1-0.9))
	require.NoError(t, err)
	header := []byte{1, byte(k)}
	header = binary.BigEndian.AppendUint32(header, uint32(bits/64))
	stream := append(header, make([]byte, 64)...)

	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	_, err = bloom.ReadScalable(bytes.NewReader(stream), funnel.String, bloom.WithSizing(n, 0.01))
	_, errAlone := bloom.ReadScalable(bytes.NewReader(stream), funnel.String)
	runtime.ReadMemStats(&after)
	require.ErrorIs(t, err, io.ErrUnexpectedEOF)
	require.ErrorIs(t, errAlone, io.ErrUnexpectedEOF)
	allocated := after.TotalAlloc - before.TotalAlloc
	assert.Less(t, allocated, uint64(1<<20), "allocated %d bytes for two reads of a %d-byte stream announcing %d", allocated, len(stream), bits/8)
}

// FuzzReadScalable feeds arbitrary streams to ReadScalable, with the
// sizing and with the funnel alone, seeded with Scalables of one to four
// stages, cut and damaged. Whatever it accepts must write back exactly the
// bytes it read, with the stages the sizing predicts, and be usable;
// whatever it rejects gets one of the documented errors. The seeds, and the
// inputs in testdata/fuzz/FuzzReadScalable that a run of the fuzzer found
// to reach new code, run as a test with every go test.
func FuzzReadScalable(f *testing.F) {
	for stages := 1; stages <= 4; stages++ {
		s, _ := grownScalable(f, stages)
		data := scalableBytes(f, s)
		f.Add(data)
		f.Add(data[:len(data)-1])
		f.Add(data[:len(data)/2])
		f.Add(append(append([]byte(nil), data...), 0))
		flipped := append([]byte(nil), data...)
		flipped[1]++ // the first stage's k
		f.Add(flipped)
	}
	f.Add([]byte{})
	f.Add([]byte{1, 5, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 3})
	f.Add([]byte{1, 5, 0x7f, 0xff, 0xff, 0xff})
	f.Fuzz(func(t *testing.T, data []byte) {
		documented := func(s *bloom.Scalable[string], err error) {
			if s != nil {
				t.Fatalf("ReadScalable returned a Scalable and %v", err)
			}
			// ErrTooLarge only where ReadFrom's is: a stage of more than
			// 2 GiB on a 32-bit platform.
			tooLarge := strconv.IntSize == 32 && errors.Is(err, bloom.ErrTooLarge)
			if !errors.Is(err, bloom.ErrCorrupt) && !errors.Is(err, bloom.ErrIncompatible) && !tooLarge && !(len(data) == 0 && err == io.EOF) {
				t.Fatalf("ReadScalable(%x): undocumented error %v", data, err)
			}
		}
		if s, err := bloom.ReadScalable(bytes.NewReader(data), funnel.String); err != nil {
			documented(s, err)
		} else {
			if out := scalableBytes(t, s); !bytes.Equal(out, data) {
				t.Fatalf("funnel alone: wrote back %x, read %x", out, data)
			}
			_ = s.Stats()
		}

		s, err := bloom.ReadScalable(bytes.NewReader(data), funnel.String, bloom.WithSizing(10, 0.1))
		if err != nil {
			documented(s, err)
			return
		}
		if out := scalableBytes(t, s); !bytes.Equal(out, data) {
			t.Fatalf("wrote back %x, read %x", out, data)
		}
		want, err := bloom.NewScalable(funnel.String, 10, 0.1)
		if err != nil {
			t.Fatal(err)
		}
		wst := want.Stats().Stages
		for i, got := range s.Stats().Stages {
			if i == 0 && (got.BitSize != wst[0].BitSize || got.NumHashFunctions != wst[0].NumHashFunctions) {
				t.Fatalf("stage 0 is %+v, want %+v", got, wst[0])
			}
			if got.Inserts > got.ExpectedInsertions {
				t.Fatalf("stage %d starts with %d inserts, more than its %d", i, got.Inserts, got.ExpectedInsertions)
			}
		}
		// A Scalable read from anywhere with its sizing is usable.
		s.Put("x")
		if !s.MightContain("x") {
			t.Fatal("false negative after Put")
		}
		_ = s.Stats()
	})
}
