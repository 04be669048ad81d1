package bloom_test

import (
	"os"
	"os/exec"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mitzbloom/mitzbloom/bloom"
	"github.com/mitzbloom/mitzbloom/funnel"
)

// TestUnsynchronizedFillThenShare fills a filter from one goroutine with
// plain writes, then hands it over to readers on many goroutines, and into a
// filter that concurrent writers share. The race detector, which .ci/run
// runs, checks that this documented use has no race.
func TestUnsynchronizedFillThenShare(t *testing.T) {
	const n = 20_000
	built := mustNew(t, funnel.Int64, n, 0.01, bloom.WithUnsynchronizedWrites())
	done := make(chan struct{})
	go func() {
		defer close(done)
		for i := range int64(n) {
			built.Put(i)
		}
	}()
	<-done

	var wg sync.WaitGroup
	for g := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := int64(g); i < n; i += 8 {
				if !built.MightContain(i) {
					t.Errorf("MightContain(%d) = false after Put", i)
					return
				}
			}
		}()
	}
	wg.Wait()

	shared := mustNew(t, funnel.Int64, n, 0.01)
	require.NoError(t, shared.PutAll(built))
	assert.True(t, shared.Equal(built), "Equal ignores the write mode")
	for g := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := int64(n + g); i < 2*n; i += 8 {
				shared.Put(i)
			}
		}()
	}
	wg.Wait()
	for i := range int64(2 * n) {
		require.True(t, shared.MightContain(i), "value %d", i)
	}
}

// TestUnsynchronizedCopy requires a copy to be as fast to fill as the
// original, and as independent: Copy keeps the write mode, and the copy's
// bits are its own.
func TestUnsynchronizedCopy(t *testing.T) {
	f := mustNew(t, funnel.String, 1000, 0.01, bloom.WithUnsynchronizedWrites())
	f.Put("a")
	c := f.Copy()
	assert.True(t, c.Put("b"))
	assert.True(t, c.MightContain("a"))
	assert.False(t, f.MightContain("b"), "a copy shares no bits")
	assert.True(t, f.Put("b"), "the original still changes on its own")
	assert.True(t, f.Equal(c))
}

func TestUnsynchronizedOptionScope(t *testing.T) {
	bits, k, err := bloom.Size(1e6, 0.01, bloom.WithUnsynchronizedWrites())
	require.NoError(t, err)
	wantBits, wantK, err := bloom.Size(1e6, 0.01)
	require.NoError(t, err)
	assert.Equal(t, [2]int64{wantBits, int64(wantK)}, [2]int64{bits, int64(k)}, "Size ignores the write mode")

	_, err = bloom.NewRotating(funnel.String, 1000, 0.01, time.Minute, bloom.WithUnsynchronizedWrites())
	require.ErrorIs(t, err, bloom.ErrInvalidArgument)
	assert.ErrorContains(t, err, "WithUnsynchronizedWrites")
}

// TestUnsynchronizedRaceReported backs the promise that the race detector
// reports concurrent writes to a filter made with WithUnsynchronizedWrites:
// it runs TestUnsynchronizedRacyPuts, which races two goroutines' Puts,
// under -race in a child process, and requires a race report naming
// SetPlain.
func TestUnsynchronizedRaceReported(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs this package's tests with -race")
	}
	cmd := exec.Command("go", "test", "-race", "-count=1", "-run", "^TestUnsynchronizedRacyPuts$", ".")
	cmd.Env = append(os.Environ(), "MITZBLOOM_RACY_PUTS=1")
	out, err := cmd.CombinedOutput()
	require.Error(t, err, "racing Puts passed under -race:\n%s", out)
	assert.Contains(t, string(out), "WARNING: DATA RACE")
	assert.Contains(t, string(out), "bitarray.(*Array).SetPlain")
}

// TestUnsynchronizedRacyPuts misuses a filter on purpose; it runs only as
// the child of TestUnsynchronizedRaceReported.
func TestUnsynchronizedRacyPuts(t *testing.T) {
	if os.Getenv("MITZBLOOM_RACY_PUTS") != "1" {
		t.Skip("runs only as the child of TestUnsynchronizedRaceReported")
	}
	f := mustNew(t, funnel.Int64, 100, 0.01, bloom.WithUnsynchronizedWrites())
	var wg sync.WaitGroup
	for g := range 2 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range int64(1000) {
				f.Put(2*i + int64(g))
			}
		}()
	}
	wg.Wait()
}
