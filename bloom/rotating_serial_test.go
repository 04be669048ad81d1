package bloom_test

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"testing/iotest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mitzbloom/mitzbloom/bloom"
	"github.com/mitzbloom/mitzbloom/bloom/bloomtest"
	"github.com/mitzbloom/mitzbloom/bloom/raw"
	"github.com/mitzbloom/mitzbloom/funnel"
	"github.com/mitzbloom/mitzbloom/internal/javatest"
	"github.com/mitzbloom/mitzbloom/strategy"
)

// twoWindows returns a Rotating whose previous generation holds "a0".."a199"
// and whose current one holds "b0".."b199", and filters built from the same
// values.
func twoWindows(t *testing.T, clock *bloomtest.Clock, opts ...bloom.Option) (r *bloom.Rotating[string], prev, cur *bloom.Filter[string]) {
	t.Helper()
	const n, p, w = 1000, 0.01, time.Minute
	opts = append([]bloom.Option{bloom.WithClock(clock)}, opts...)
	r = mustNewRotating(t, funnel.String, n, p, w, opts...)
	prev, cur = mustNew(t, funnel.String, n, p), mustNew(t, funnel.String, n, p)
	for i := range 200 {
		r.Put(fmt.Sprint("a", i))
		prev.Put(fmt.Sprint("a", i))
	}
	clock.Advance(w)
	for i := range 200 {
		r.Put(fmt.Sprint("b", i))
		cur.Put(fmt.Sprint("b", i))
	}
	return r, prev, cur
}

// TestRotatingWriteTo checks that WriteTo writes the current generation,
// then the previous one, each readable on its own by ReadFrom, as by Guava's
// readFrom, and that ReadRotating restores the Rotating byte for byte.
func TestRotatingWriteTo(t *testing.T) {
	const w = time.Minute
	clock := bloomtest.NewClock(epoch)
	r, prev, cur := twoWindows(t, clock)

	var buf bytes.Buffer
	n, err := r.WriteTo(&buf)
	require.NoError(t, err)
	assert.EqualValues(t, 2*(6+cur.BitSize()/8), n)
	assert.EqualValues(t, buf.Len(), n)
	written := bytes.Clone(buf.Bytes())

	in := bytes.NewReader(written)
	gotCur, err := bloom.ReadFrom(in, funnel.String)
	require.NoError(t, err)
	gotPrev, err := bloom.ReadFrom(in, funnel.String)
	require.NoError(t, err)
	assert.True(t, gotCur.Equal(cur), "first filter is the current generation")
	assert.True(t, gotPrev.Equal(prev), "second filter is the previous generation")
	assert.Zero(t, in.Len())

	// A different clock, as after a restart: the stream carries no times.
	later := bloomtest.NewClock(epoch.Add(24 * time.Hour))
	restored, err := bloom.ReadRotating(iotest.OneByteReader(bytes.NewReader(written)), funnel.String, bloom.WithSizing(1000, 0.01), bloom.WithWindow(w), bloom.WithClock(later))
	require.NoError(t, err)
	var again bytes.Buffer
	_, err = restored.WriteTo(&again)
	require.NoError(t, err)
	assert.Equal(t, written, again.Bytes(), "WriteTo after ReadRotating")

	st := restored.Stats()
	assert.Zero(t, st.Rotations)
	assert.Zero(t, st.Current.Age, "the current generation's window starts at the read")
	assert.Equal(t, w, st.Previous.Age)
	assert.Equal(t, cur.ApproximateElementCount(), st.Current.Inserts)
	assert.Equal(t, prev.ApproximateElementCount(), st.Previous.Inserts)
	assert.Equal(t, r.Stats().ApproximateElementCount, st.ApproximateElementCount)
	for i := range 200 {
		require.True(t, restored.MightContain(fmt.Sprint("a", i)))
		require.True(t, restored.MightContain(fmt.Sprint("b", i)))
	}

	// The previous generation goes at the first rotation, a window after
	// the read, the current one at the second.
	later.Advance(w - time.Nanosecond)
	assert.Zero(t, restored.Stats().Rotations)
	later.Advance(time.Nanosecond)
	for i := range 200 {
		for _, v := range []string{fmt.Sprint("a", i), fmt.Sprint("b", i)} {
			require.Equal(t, cur.MightContain(v), restored.MightContain(v), "%s after one window", v)
		}
	}
	later.Advance(w)
	assert.Zero(t, restored.Stats().ApproximateElementCount, "after two windows")
	assert.False(t, restored.MightContain("b7"))
}

// TestReadRotatingErrors feeds ReadRotating streams it must refuse.
func TestReadRotatingErrors(t *testing.T) {
	const w = time.Minute
	snapshot := func(n int64, opts ...bloom.Option) []byte {
		var buf bytes.Buffer
		_, err := mustNewRotating(t, funnel.String, n, 0.01, w, opts...).WriteTo(&buf)
		require.NoError(t, err)
		return buf.Bytes()
	}
	good := snapshot(1000)
	half := len(good) / 2
	mitz32 := snapshot(1000, bloom.WithStrategy(strategy.Murmur128Mitz32))
	// For n = 3 at p = 0.01, Guava 31.x's k is not current Guava's 7.
	legacyK := snapshot(3, bloom.WithLegacyHashCount())

	// The generations of two different Rotatings.
	mixed := append(bytes.Clone(good[:half]), mitz32[half:]...)
	sized := func(n int64, window time.Duration, opts ...bloom.Option) []bloom.Option {
		return append([]bloom.Option{bloom.WithSizing(n, 0.01), bloom.WithWindow(window)}, opts...)
	}

	for _, c := range []struct {
		name   string
		stream []byte
		opts   []bloom.Option
		is     []error
		want   string
		read   int // how many bytes ReadRotating may read, or -1 for any
	}{
		{"empty", nil, sized(1000, w), []error{io.EOF}, "EOF", 0},
		{"empty, funnel alone", nil, nil, []error{io.EOF}, "EOF", 0},
		{"one generation", good[:half], sized(1000, w), []error{bloom.ErrCorrupt, io.ErrUnexpectedEOF},
			"bloom: corrupt filter: stream ends after the current generation: unexpected EOF", -1},
		{"one generation, funnel alone", good[:half], nil, []error{bloom.ErrCorrupt, io.ErrUnexpectedEOF},
			"bloom: corrupt filter: stream ends after the current generation: unexpected EOF", -1},
		{"truncated", good[:len(good)-1], sized(1000, w), []error{bloom.ErrCorrupt, io.ErrUnexpectedEOF},
			fmt.Sprintf("stream ends after %d of %d bytes", half-1, half), -1},
		{"second generation corrupt", append(bytes.Clone(good[:half]), 7, 7, 0, 0, 0, 1), sized(1000, w), []error{bloom.ErrCorrupt},
			"unknown ordinal 7", -1},
		{"smaller generations", good, sized(2000, w), []error{bloom.ErrIncompatible},
			"bloom: incompatible filters: current generation has 9600 bits and 7 hash functions, but WithSizing(2000, 0.01) makes generations of 19200 bits and 7 hash functions", -1},
		{"larger generations", good, sized(500, w), []error{bloom.ErrIncompatible, bloom.ErrTooLarge},
			"bloom: incompatible filters: current generation: bloom: filter too large: 9600 bits is more than the limit of 4800", 6},
		{"other strategy", mitz32, sized(1000, w, bloom.WithStrategy(strategy.Murmur128Mitz64)), []error{bloom.ErrIncompatible},
			"bloom: incompatible filters: current generation has strategy MURMUR128_MITZ_32, but the Rotating's, which WithStrategy sets, is MURMUR128_MITZ_64", -1},
		{"other strategy, funnel alone", mitz32, []bloom.Option{bloom.WithStrategy(strategy.Murmur128Mitz64)}, []error{bloom.ErrIncompatible},
			"current generation has strategy MURMUR128_MITZ_32", -1},
		{"other hash count", legacyK, sized(3, w), []error{bloom.ErrIncompatible},
			"hash functions, but WithSizing(3, 0.01) makes generations of 64 bits and 7 hash functions", -1},
		{"generations of two Rotatings", mixed, nil, []error{bloom.ErrCorrupt},
			"not a Rotating's generations: the previous one has 9600 bits and 7 hash functions, MURMUR128_MITZ_32, the current one 9600 bits and 7 hash functions, MURMUR128_MITZ_64", -1},
		{"generations of two Rotatings, sized", mixed, sized(1000, w), []error{bloom.ErrCorrupt},
			"not a Rotating's generations: the previous one has strategy MURMUR128_MITZ_32, the current one MURMUR128_MITZ_64", -1},
		{"previous larger", append(bytes.Clone(good[:half]), snapshot(2000)[:half+600]...), nil, []error{bloom.ErrCorrupt, bloom.ErrTooLarge},
			"not a Rotating's generations: the previous one is larger than the current one", half + 6},
		{"bad window", good, sized(1000, 0), []error{bloom.ErrInvalidArgument},
			"bloom: invalid argument: window (0s) must be > 0", 0},
		{"sizing without window", good, []bloom.Option{bloom.WithSizing(1000, 0.01)}, []error{bloom.ErrInvalidArgument},
			"bloom: invalid argument: WithSizing without WithWindow", 0},
		{"window without sizing", good, []bloom.Option{bloom.WithWindow(w)}, []error{bloom.ErrInvalidArgument},
			"bloom: invalid argument: WithWindow without WithSizing", 0},
		{"bad sizing", good, sized(-1, w), []error{bloom.ErrInvalidArgument},
			"bloom: invalid argument: expected insertions (-1) must be >= 0", 0},
	} {
		t.Run(c.name, func(t *testing.T) {
			in := bytes.NewReader(c.stream)
			got, err := bloom.ReadRotating(in, funnel.String, c.opts...)
			assert.Nil(t, got)
			for _, target := range c.is {
				assert.ErrorIs(t, err, target)
			}
			assert.ErrorContains(t, err, c.want)
			if c.read >= 0 {
				assert.Equal(t, c.read, len(c.stream)-in.Len(), "bytes read")
			}
		})
	}
	// The options read every one of those streams, and so does the funnel
	// alone.
	for _, c := range []struct {
		stream []byte
		opts   []bloom.Option
	}{
		{good, sized(1000, w)},
		{mitz32, sized(1000, w, bloom.WithStrategy(strategy.Murmur128Mitz32))},
		{mitz32, sized(1000, w)},
		{legacyK, sized(3, w, bloom.WithLegacyHashCount())},
		{good, nil},
		{mitz32, nil},
		{legacyK, nil},
	} {
		_, err := bloom.ReadRotating(bytes.NewReader(c.stream), funnel.String, c.opts...)
		assert.NoError(t, err)
	}
	_, err := bloom.ReadRotating[string](bytes.NewReader(good), nil)
	assert.ErrorIs(t, err, bloom.ErrInvalidArgument)
}

// TestReadRotatingFunnelAlone reads a Rotating with its funnel alone: it
// answers as the one written does, writes the same bytes, and takes no
// Puts; read with its sizing and window, it rotates as the one written
// would.
func TestReadRotatingFunnelAlone(t *testing.T) {
	const w = time.Minute
	clock := bloomtest.NewClock(epoch)
	r, _, _ := twoWindows(t, clock, bloom.WithStrategy(strategy.Murmur128Mitz32))
	data, err := r.MarshalBinary()
	require.NoError(t, err)

	read, err := bloom.ReadRotating(iotest.OneByteReader(bytes.NewReader(data)), funnel.String, bloom.WithClock(clock))
	require.NoError(t, err)
	for i := range 300 {
		for _, v := range []string{fmt.Sprint("a", i), fmt.Sprint("b", i), fmt.Sprint("c", i)} {
			require.Equal(t, r.MightContain(v), read.MightContain(v), v)
		}
	}
	again, err := read.MarshalBinary()
	require.NoError(t, err)
	assert.Equal(t, data, again)
	assert.Equal(t, "bloom.Rotating{funnel.String MURMUR128_MITZ_32 2×9600 bits, 7 hash functions, read-only}", read.String())
	st := read.Stats()
	assert.Equal(t, r.Stats().ApproximateElementCount, st.ApproximateElementCount)
	assert.Equal(t, r.Stats().ExpectedFPP, st.ExpectedFPP)
	assert.Zero(t, st.ExpectedInsertions, "read without its sizing")
	assert.Zero(t, st.FPP, "read without its sizing")
	assert.Zero(t, st.Window, "read without its window")
	assert.Equal(t, r.Stats().BitSize, st.BitSize)
	assert.PanicsWithValue(t, "bloom: Put into a Rotating read without WithSizing and WithWindow, which cannot rotate; read it with ReadRotating(r, f, bloom.WithSizing(n, fpp), bloom.WithWindow(window)) to go on putting",
		func() { read.Put("d") })
	assert.Panics(t, func() { read.PutMany([]string{"d"}) })
	assert.Panics(t, func() { read.PutSeq(slices.Values([]string{"d"})) })
	assert.False(t, read.MightContain("d"), "a Put that panicked put nothing")
	clock.Advance(3 * w)
	assert.True(t, read.MightContain("b7"), "it does not rotate")

	// The strategy comes from the stream: rotations of the restored
	// Rotating make generations of it.
	restored, err := bloom.ReadRotating(bytes.NewReader(data), funnel.String, bloom.WithSizing(1000, 0.01), bloom.WithWindow(w), bloom.WithClock(clock))
	require.NoError(t, err)
	assert.EqualValues(t, 1000, restored.Stats().ExpectedInsertions)
	assert.Equal(t, 0.01, restored.Stats().FPP)
	assert.Equal(t, w, restored.Stats().Window)
	clock.Advance(w)
	restored.Put("after")
	var buf bytes.Buffer
	_, err = restored.WriteTo(&buf)
	require.NoError(t, err)
	cur, err := bloom.ReadFrom(&buf, funnel.String)
	require.NoError(t, err)
	assert.Equal(t, strategy.Murmur128Mitz32, raw.Strategy(cur))
	assert.True(t, cur.MightContain("after"))
}

// rotatingJava is the Guava side of TestRotatingJavaInterop. It reads the
// two generations a Rotating wrote from one stream with two calls of
// BloomFilter.readFrom, reports what each says about the probes, and writes
// what a Java service would after its own rotation: a new current
// generation holding "from-java", then the current one it read.
const rotatingJava = `
import static java.nio.charset.StandardCharsets.UTF_8;

import com.google.common.hash.BloomFilter;
import com.google.common.hash.Funnels;
import java.io.*;

public class RotatingInterop {
  public static void main(String[] args) throws IOException {
    try (InputStream in = new BufferedInputStream(new FileInputStream(args[0]));
         OutputStream out = new BufferedOutputStream(new FileOutputStream(args[1]))) {
      BloomFilter<CharSequence> cur = BloomFilter.readFrom(in, Funnels.stringFunnel(UTF_8));
      BloomFilter<CharSequence> prev = BloomFilter.readFrom(in, Funnels.stringFunnel(UTF_8));
      System.out.println("rest " + in.read());
      StringBuilder probes = new StringBuilder("probes");
      for (int i = 2; i < args.length; i++) {
        probes.append(' ').append(cur.mightContain(args[i]) ? '1' : '0').append(prev.mightContain(args[i]) ? '1' : '0');
      }
      System.out.println(probes);
      BloomFilter<CharSequence> next = BloomFilter.create(Funnels.stringFunnel(UTF_8), 1000, 0.01);
      next.put("from-java");
      next.writeTo(out);
      cur.writeTo(out);
    }
  }
}
`

// TestRotatingJavaInterop hands a Rotating's snapshot to the real Guava of
// this machine and takes one back: each generation is a filter Guava's
// readFrom reads, two in a row from one stream, and ReadRotating reads the
// generations Guava writes.
func TestRotatingJavaInterop(t *testing.T) {
	dir := t.TempDir()
	src := filepath.Join(dir, "RotatingInterop.java")
	require.NoError(t, os.WriteFile(src, []byte(rotatingJava), 0o644))

	// Debian's Guava is 31.1; its k rule agrees with current Guava's for
	// n = 1000 at p = 0.01, but the option says which one Java uses.
	legacy := bloom.WithLegacyHashCount()
	clock := bloomtest.NewClock(epoch)
	r, prev, cur := twoWindows(t, clock, legacy)
	var snapshot bytes.Buffer
	_, err := r.WriteTo(&snapshot)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(dir, "go.bin"), snapshot.Bytes(), 0o644))

	var probes []string
	for i := range 100 {
		probes = append(probes, fmt.Sprint("a", i), fmt.Sprint("b", i), fmt.Sprint("c", i))
	}
	out := javatest.Program(t, []string{src}, "RotatingInterop", append([]string{filepath.Join(dir, "go.bin"), filepath.Join(dir, "java.bin")}, probes...)...)

	lines := strings.Split(strings.TrimSpace(out), "\n")
	require.Len(t, lines, 2, "Java output:\n%s", out)
	assert.Equal(t, "rest -1", lines[0], "Guava read exactly the two filters")
	answers := strings.Fields(strings.TrimPrefix(lines[1], "probes"))
	require.Len(t, answers, len(probes))
	for i, v := range probes {
		want := fmt.Sprintf("%d%d", b2i(cur.MightContain(v)), b2i(prev.MightContain(v)))
		assert.Equal(t, want, answers[i], "Guava's current and previous generation on %q", v)
	}

	javaBytes, err := os.ReadFile(filepath.Join(dir, "java.bin"))
	require.NoError(t, err)
	half := len(snapshot.Bytes()) / 2
	require.Len(t, javaBytes, len(snapshot.Bytes()))
	assert.Equal(t, snapshot.Bytes()[:half], javaBytes[half:], "Guava's writeTo of the current generation it read")
	restored, err := bloom.ReadRotating(bytes.NewReader(javaBytes), funnel.String, bloom.WithSizing(1000, 0.01), bloom.WithWindow(time.Minute), bloom.WithClock(clock), legacy)
	require.NoError(t, err)
	assert.True(t, restored.MightContain("from-java"))
	for i := range 200 {
		require.True(t, restored.MightContain(fmt.Sprint("b", i)))
	}
	assert.EqualValues(t, 1, restored.Stats().Current.ApproximateElementCount)
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}
