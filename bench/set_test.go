package bench

import (
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// checkContenders runs check on every contender of every suite.
func checkContenders(t *testing.T, check func(t *testing.T, w Workload, contender string)) {
	for _, w := range Workloads() {
		for _, c := range w.ContenderNames() {
			t.Run(w.KeyName()+"/"+c, func(t *testing.T) {
				t.Parallel()
				check(t, w, c)
			})
		}
	}
}

// TestContendersAnswerLikeAMap puts the same keys in every contender's
// sets, of every kind, and checks that each finds every key it was given,
// as the exact map does, and reports about as many of the keys it was not
// given as its false-positive probability allows: none for the map. The
// concurrent kinds are filled, or read, by several goroutines at once.
func TestContendersAnswerLikeAMap(t *testing.T) {
	checkContenders(t, func(t *testing.T, w Workload, contender string) {
		switch s := w.(type) {
		case *Suite[int64]:
			answersLikeAMap(t, s, contender)
		case *Suite[string]:
			answersLikeAMap(t, s, contender)
		default:
			t.Fatalf("no test for suite %T", w)
		}
	})
}

func answersLikeAMap[K comparable](t *testing.T, s *Suite[K], contender string) {
	const n = 3000
	c, base, err := s.resolve(contender)
	require.NoError(t, err)
	keys := make([]K, n)
	for i := range keys {
		keys[i] = s.KeyOf(uint64(i))
	}

	serial, err := base.newSet(n, false)
	require.NoError(t, err)
	c.view(serial).PutMany(keys)
	findsAll(t, "serial", c.view(serial), keys, 1)
	hasFewFalsePositives(t, s, "serial", contender, c.view(serial), keys)

	shared, err := base.share(serial)
	require.NoError(t, err)
	findsAll(t, "shared", c.view(shared), keys, 4)
	hasFewFalsePositives(t, s, "shared", contender, c.view(shared), keys)

	fresh, err := base.newSet(n, true)
	require.NoError(t, err)
	// Four goroutines put interleaved chunks, so that they write to the
	// same filter at the same time.
	inParallel(4, func(g int) {
		for i := g * 100; i < n; i += 400 {
			c.view(fresh).PutMany(keys[i:min(i+100, n)])
		}
	})
	findsAll(t, "filled concurrently", c.view(fresh), keys, 1)
}

func inParallel(goroutines int, f func(g int)) {
	var wg sync.WaitGroup
	for g := range goroutines {
		wg.Add(1)
		go func() {
			defer wg.Done()
			f(g)
		}()
	}
	wg.Wait()
}

// findsAll checks that set finds every key, asked by that many goroutines
// at once.
func findsAll[K any](t *testing.T, kind string, set Set[K], keys []K, goroutines int) {
	t.Helper()
	answers := make([][]bool, goroutines)
	inParallel(goroutines, func(g int) { answers[g] = set.MightContainMany(nil, keys) })
	for _, got := range answers {
		require.Len(t, got, len(keys))
		for i, found := range got {
			require.True(t, found, "%s set: key %v was put but is not found", kind, keys[i])
		}
	}
}

// hasFewFalsePositives checks the answers of a set holding keys about
// held-out keys.
func hasFewFalsePositives[K comparable](t *testing.T, s *Suite[K], kind, contender string, set Set[K], keys []K) {
	t.Helper()
	const absent = 30_000
	put := map[K]bool{}
	for _, k := range keys {
		put[k] = true
	}
	others := make([]K, absent)
	for i := range others {
		others[i] = s.KeyOf(HeldOutBase + uint64(i))
		require.False(t, put[others[i]], "held-out key %v is among the put keys", others[i])
	}
	got := set.MightContainMany(nil, others)
	require.Len(t, got, absent)
	fp := 0
	for _, found := range got {
		if found {
			fp++
		}
	}
	if contender == "map" {
		assert.Zero(t, fp, "%s set: the map has no false positives", kind)
		return
	}
	// About 300 are expected at P = 0.01; 3P allows for sizing
	// differences and chance.
	assert.Less(t, float64(fp)/absent, 3*P, "%s set: %d false positives out of %d", kind, fp, absent)
	t.Logf("%s set: false-positive rate %.4f", kind, float64(fp)/absent)
}

// TestMapHugeSkip checks that only the map of strings sits out 1e8 keys.
func TestMapHugeSkip(t *testing.T) {
	for _, w := range Workloads() {
		for _, c := range w.ContenderNames() {
			for _, n := range Sizes {
				skip := w.Skip(c, n) != ""
				assert.Equal(t, c == "map" && w.KeyName() == "hostport" && n >= 1e8, skip, "%s %s %d", w.KeyName(), c, n)
			}
		}
	}
	assert.NotEmpty(t, Int64Suite().Skip("no such contender", 1e4))
}

func TestSubName(t *testing.T) {
	assert.Equal(t, "n=1e6/key=int64/filter=mitzbloom", SubName(1e6, "int64", "mitzbloom"))
	assert.Equal(t, "n=123/key=hostport/filter=map", SubName(123, "hostport", "map"))
}

// TestBatchViewMatches checks that mitzbloom-batch asks the very filter
// mitzbloom filled, through the batch API, and gets the same answers.
func TestBatchViewMatches(t *testing.T) {
	for _, w := range Workloads() {
		cfg := Config{ProbeHalf: 5000, HeldOut: 50_000}
		single, err := w.Measure("mitzbloom", 20_000, cfg)
		require.NoError(t, err)
		batch, err := w.Measure("mitzbloom-batch", 20_000, cfg)
		require.NoError(t, err)
		assert.Equal(t, single, batch, w.KeyName())
		assert.Positive(t, single.FalsePositives, w.KeyName())
	}
}

func TestResolve(t *testing.T) {
	s := Int64Suite()
	c, base, err := s.resolve("mitzbloom-batch")
	require.NoError(t, err)
	assert.Equal(t, "mitzbloom-batch", c.Name)
	assert.Equal(t, "mitzbloom", base.Name)
	c, base, err = s.resolve("blobloom")
	require.NoError(t, err)
	assert.Same(t, c, base)

	s.Contenders = append(s.Contenders, Contender[int64]{Name: "view-of-view", Base: "mitzbloom-batch"})
	_, _, err = s.resolve("view-of-view")
	assert.Error(t, err)
	_, _, err = s.resolve("nobody")
	assert.Error(t, err)
}
