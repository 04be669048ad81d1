package mapped_test

import (
	"bytes"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mitzbloom/mitzbloom/bloom"
	"github.com/mitzbloom/mitzbloom/bloom/mapped"
	"github.com/mitzbloom/mitzbloom/funnel"
	"github.com/mitzbloom/mitzbloom/internal/race"
	"github.com/mitzbloom/mitzbloom/strategy"
)

// writeFile writes f to a new file in dir and returns its path.
func writeFile[T any](t testing.TB, dir string, f *bloom.Filter[T]) string {
	t.Helper()
	file, err := os.CreateTemp(dir, "filter-*.bin")
	require.NoError(t, err)
	_, err = f.WriteTo(file)
	require.NoError(t, err)
	require.NoError(t, file.Close())
	return file.Name()
}

// open opens path and closes the filter when t ends.
func open[T any](t testing.TB, path string, fn funnel.Funnel[T]) *mapped.Filter[T] {
	t.Helper()
	m, err := mapped.Open(path, fn)
	require.NoError(t, err)
	t.Cleanup(func() { assert.NoError(t, m.Close()) })
	return m
}

// checkSame checks that m answers every lookup, statistic and WriteTo as
// read, the filter ReadFrom read from the same file, does.
func checkSame[T any](t *testing.T, m *mapped.Filter[T], read *bloom.Filter[T], path string, values []T) {
	t.Helper()
	assert.Equal(t, read.BitSize(), m.BitSize())
	assert.Equal(t, read.NumHashFunctions(), m.NumHashFunctions())
	assert.Equal(t, read.BitCount(), m.BitCount())
	assert.Equal(t, read.ExpectedFPP(), m.ExpectedFPP())
	assert.Equal(t, read.ApproximateElementCount(), m.ApproximateElementCount())
	want := read.MightContainMany(nil, values)
	got := m.MightContainMany(nil, values)
	require.Equal(t, want, got, "MightContainMany")
	yes := 0
	for i, v := range values {
		if m.MightContain(v) != want[i] {
			t.Fatalf("MightContain of value %d: mapped %v, ReadFrom's %v", i, !want[i], want[i])
		}
		if want[i] {
			yes++
		}
	}
	// Answers that all go one way would show nothing.
	assert.Positive(t, yes, "no value is present")
	assert.Less(t, yes, len(values), "every value is present")

	file, err := os.ReadFile(path)
	require.NoError(t, err)
	var buf bytes.Buffer
	n, err := m.WriteTo(&buf)
	require.NoError(t, err)
	assert.EqualValues(t, len(file), n)
	assert.True(t, bytes.Equal(file, buf.Bytes()), "WriteTo writes the file's bytes")
	assert.Equal(t, "mapped"+read.String()[len("bloom"):], m.String())
}

// TestOpenMatchesReadFrom opens files that bloom wrote, of both strategies,
// in the caches and far larger than a prefetching batch needs, and checks
// the mapped filter against ReadFrom's filter of the same file.
func TestOpenMatchesReadFrom(t *testing.T) {
	dir := t.TempDir()
	sizes := []int64{1, 1000, 2e6}
	if testing.Short() {
		sizes = sizes[:2]
	}
	for _, s := range []strategy.Strategy{strategy.Murmur128Mitz32, strategy.Murmur128Mitz64} {
		for _, n := range sizes {
			t.Run(fmt.Sprintf("%v/n=%d", s, n), func(t *testing.T) {
				f, err := bloom.New(funnel.Int64, n, 0.01, bloom.WithStrategy(s))
				require.NoError(t, err)
				keys := make([]int64, 2*n+1000)
				for i := range keys {
					keys[i] = int64(i) * 7919
				}
				f.PutMany(keys[:n])
				path := writeFile(t, dir, f)
				file, err := os.Open(path)
				require.NoError(t, err)
				defer file.Close()
				read, err := bloom.ReadFrom(file, funnel.Int64)
				require.NoError(t, err)
				checkSame(t, open(t, path, funnel.Int64), read, path, keys)
			})
		}
	}
	t.Run("strings", func(t *testing.T) {
		f, err := bloom.New(funnel.String, 500, 0.02)
		require.NoError(t, err)
		var keys []string
		for i := range 2000 {
			keys = append(keys, "key "+strconv.Itoa(i))
		}
		f.PutMany(keys[:500])
		path := writeFile(t, dir, f)
		data, err := os.ReadFile(path)
		require.NoError(t, err)
		read, err := bloom.ReadFrom(bytes.NewReader(data), funnel.String)
		require.NoError(t, err)
		checkSame(t, open(t, path, funnel.String), read, path, keys)
	})
}

// badFiles are files Open must refuse: Guava's rejected streams, which
// ReadFrom rejects too, and bytes after a filter, which UnmarshalBinary
// rejects. Each must get UnmarshalBinary's error.
var badFiles = []struct{ name, hex string }{
	{"one byte", "01"},
	{"header only", "010500000001"},
	{"ordinal 2", "0205000000010000000000000003"},
	{"ordinal -1", "ff05000000010000000000000003"},
	{"k=0", "0100000000010000000000000003"},
	{"no words", "010500000000"},
	{"-1 words", "0105ffffffff"},
	{"2 words, 1 present", "0105000000020000000000000003"},
	{"k=0 and truncated", "010000000002"},
	{"huge and truncated", "01057fffffff0000000000000003"},
	{"trailing bytes", "01050000000100000000000000030909"},
	{"two filters", "01050000000100000000000000030105000000010000000000000003"},
}

func TestOpenRefuses(t *testing.T) {
	dir := t.TempDir()
	for _, c := range badFiles {
		t.Run(c.name, func(t *testing.T) {
			data, err := hex.DecodeString(c.hex)
			require.NoError(t, err)
			path := filepath.Join(dir, c.name+".bin")
			require.NoError(t, os.WriteFile(path, data, 0o644))
			m, err := mapped.Open(path, funnel.String)
			assert.Nil(t, m)
			var pathErr *fs.PathError
			require.ErrorAs(t, err, &pathErr)
			assert.Equal(t, path, pathErr.Path)
			var u bloom.Filter[string]
			want := u.UnmarshalBinary(data)
			require.Error(t, want)
			assert.Equal(t, want.Error(), pathErr.Err.Error(), "Open's error differs from UnmarshalBinary's")
			for _, sentinel := range []error{bloom.ErrCorrupt, bloom.ErrTooLarge, io.ErrUnexpectedEOF} {
				assert.Equal(t, errors.Is(want, sentinel), errors.Is(err, sentinel), "errors.Is(err, %v)", sentinel)
			}
		})
	}
	t.Run("empty", func(t *testing.T) {
		path := filepath.Join(dir, "empty.bin")
		require.NoError(t, os.WriteFile(path, nil, 0o644))
		_, err := mapped.Open(path, funnel.String)
		assert.ErrorIs(t, err, bloom.ErrCorrupt)
		assert.ErrorIs(t, err, io.ErrUnexpectedEOF)
		assert.ErrorContains(t, err, "empty file")
	})
	t.Run("missing", func(t *testing.T) {
		_, err := mapped.Open(filepath.Join(dir, "missing.bin"), funnel.String)
		assert.ErrorIs(t, err, fs.ErrNotExist)
	})
	t.Run("directory", func(t *testing.T) {
		_, err := mapped.Open(dir, funnel.String)
		assert.ErrorIs(t, err, bloom.ErrInvalidArgument)
		assert.ErrorContains(t, err, "not a regular file")
	})
	t.Run("nil funnel", func(t *testing.T) {
		_, err := mapped.Open[string](filepath.Join(dir, "x"), nil)
		assert.ErrorIs(t, err, bloom.ErrInvalidArgument)
	})
}

// TestClose checks the lifecycle: Close releases the file once, the
// lookups and statistics then panic and WriteTo fails, and the size and
// description stay.
func TestClose(t *testing.T) {
	f, err := bloom.New(funnel.String, 100, 0.01)
	require.NoError(t, err)
	f.Put("a")
	m, err := mapped.Open(writeFile(t, t.TempDir(), f), funnel.String)
	require.NoError(t, err)
	require.True(t, m.MightContain("a"))
	require.NoError(t, m.Close())
	require.NoError(t, m.Close(), "a second Close")
	assert.PanicsWithValue(t, "mapped: MightContain of a closed Filter", func() { m.MightContain("a") })
	assert.PanicsWithValue(t, "mapped: MightContainMany of a closed Filter", func() { m.MightContainMany(nil, []string{"a"}) })
	assert.PanicsWithValue(t, "mapped: BitCount of a closed Filter", func() { m.BitCount() })
	assert.Panics(t, func() { m.ExpectedFPP() })
	assert.Panics(t, func() { m.ApproximateElementCount() })
	_, err = m.WriteTo(io.Discard)
	assert.ErrorIs(t, err, os.ErrClosed)
	assert.Equal(t, f.BitSize(), m.BitSize())
	assert.Equal(t, f.NumHashFunctions(), m.NumHashFunctions())
	assert.Contains(t, m.String(), "mapped.Filter{funnel.String")
}

// TestReplaceByRename checks the documented way to replace a filter file:
// a Filter open on the old file goes on answering from it, and opening the
// name again opens the new one.
func TestReplaceByRename(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "live.bin")
	old, err := bloom.New(funnel.String, 1000, 0.001)
	require.NoError(t, err)
	old.Put("old")
	require.NoError(t, os.Rename(writeFile(t, dir, old), path))
	m := open(t, path, funnel.String)

	next, err := bloom.New(funnel.String, 1000, 0.001)
	require.NoError(t, err)
	next.Put("new")
	require.NoError(t, os.Rename(writeFile(t, dir, next), path))
	assert.True(t, m.MightContain("old"))
	assert.False(t, m.MightContain("new"))
	m2 := open(t, path, funnel.String)
	assert.True(t, m2.MightContain("new"))
	assert.False(t, m2.MightContain("old"))
}

// TestConcurrentLookups runs lookups from many goroutines on one Filter,
// for the race detector.
func TestConcurrentLookups(t *testing.T) {
	f, err := bloom.New(funnel.Int64, 10000, 0.01)
	require.NoError(t, err)
	keys := make([]int64, 10000)
	for i := range keys {
		keys[i] = int64(i)
	}
	f.PutMany(keys)
	m := open(t, writeFile(t, t.TempDir(), f), funnel.Int64)
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i, k := range keys {
				if (i+g)%2 == 0 {
					assert.True(t, m.MightContain(k))
				}
			}
			for _, ok := range m.MightContainMany(nil, keys) {
				assert.True(t, ok)
			}
			_ = m.BitCount()
		}()
	}
	wg.Wait()
}

// TestZeroAllocs requires the lookups to allocate nothing with a built-in
// funnel, MightContainMany when dst has room.
func TestZeroAllocs(t *testing.T) {
	if race.Enabled {
		t.Skip("the race detector makes sync.Pool drop items at random, so allocation counts mean nothing; .ci/run also runs the tests without -race")
	}
	for _, s := range []strategy.Strategy{strategy.Murmur128Mitz32, strategy.Murmur128Mitz64} {
		f, err := bloom.New(funnel.String, 1000, 0.01, bloom.WithStrategy(s))
		require.NoError(t, err)
		m := open(t, writeFile(t, t.TempDir(), f), funnel.String)
		keys := []string{"a", "b", "c"}
		dst := make([]bool, 0, len(keys))
		assert.Zero(t, testing.AllocsPerRun(1000, func() { m.MightContain("a string") }), "MightContain %v", s)
		assert.Zero(t, testing.AllocsPerRun(1000, func() { m.MightContainMany(dst[:0], keys) }), "MightContainMany %v", s)
	}
}
