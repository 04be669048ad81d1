package bench

import (
	"context"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestKeysDistinct checks that keys of different indexes differ, within
// and across the present, absent and held-out ranges, for both key types.
func TestKeysDistinct(t *testing.T) {
	t.Parallel()
	const each = 50_000
	ints := map[int64]uint64{}
	strs := map[string]uint64{}
	for _, base := range []uint64{0, AbsentBase, HeldOutBase, 1<<40 - each} {
		for i := base; i < base+each; i++ {
			if j, dup := ints[Int64Key(i)]; dup {
				t.Fatalf("Int64Key(%d) == Int64Key(%d)", i, j)
			}
			ints[Int64Key(i)] = i
			if j, dup := strs[HostPortKey(i)]; dup {
				t.Fatalf("HostPortKey(%d) == HostPortKey(%d) == %q", i, j, HostPortKey(i))
			}
			strs[HostPortKey(i)] = i
		}
	}
}

// TestMix40Permutes checks mix40 on a whole 2²⁰-element slice of its
// domain: a permutation of 40-bit numbers maps no two inputs to one output,
// and stays below 2⁴⁰.
func TestMix40Permutes(t *testing.T) {
	t.Parallel()
	seen := make(map[uint64]bool, 1<<20)
	for x := uint64(0); x < 1<<20; x++ {
		y := mix40(x << 20) // the high bits, where a bad multiplier would collide
		require.Less(t, y, uint64(1)<<40)
		require.False(t, seen[y], "mix40 collides at %d", x<<20)
		seen[y] = true
	}
	assert.Equal(t, mix40(5), mix40(5|1<<40), "only the low 40 bits count")
}

func TestHostPortKeyShape(t *testing.T) {
	t.Parallel()
	for i := range uint64(1000) {
		k := HostPortKey(AbsentBase + i*7919)
		host, port, ok := strings.Cut(k, ":")
		require.True(t, ok, k)
		octets := strings.Split(host, ".")
		require.Len(t, octets, 4, k)
		assert.Equal(t, "10", octets[0], k)
		for _, o := range append(octets[1:], port) {
			v, err := strconv.Atoi(o)
			require.NoError(t, err, k)
			assert.Equal(t, strconv.Itoa(v), o, "no leading zeros in %s", k)
		}
		p, _ := strconv.Atoi(port)
		assert.Less(t, p, 1<<16, k)
	}
}

func TestProbeIndexes(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		n    uint64
		half int
	}{{10, 1 << 20}, {1000, 100}, {1e8, 1 << 12}} {
		t.Run(fmt.Sprint(c.n, "/", c.half), func(t *testing.T) {
			idx := ProbeIndexes(c.n, c.half)
			h := min(c.n, uint64(c.half))
			require.Len(t, idx, int(2*h))
			var present, absent []uint64
			for _, x := range idx {
				if x < c.n {
					present = append(present, x)
				} else {
					absent = append(absent, x)
				}
			}
			slices.Sort(present)
			slices.Sort(absent)
			require.Len(t, present, int(h))
			for j := range h {
				assert.Equal(t, j*c.n/h, present[j], "present probes spread evenly over [0, n)")
				assert.Equal(t, AbsentBase+j, absent[j])
			}
			assert.Equal(t, len(present), len(slices.Compact(present)), "present probes distinct")
			assert.False(t, slices.IsSorted(idx), "shuffled")
			assert.Equal(t, idx, ProbeIndexes(c.n, c.half), "deterministic")
		})
	}
}

func TestSizeName(t *testing.T) {
	t.Parallel()
	for n, want := range map[int64]string{1e4: "1e4", 1e6: "1e6", 1e8: "1e8", 10: "1e1", 1: "1", 1500: "1500", 2e6: "2000000"} {
		assert.Equal(t, want, SizeName(n), "%d", n)
	}
}

// harness is the Java harness, compiled once for all tests.
var harness struct {
	once sync.Once
	g    *Guava
	dir  string
	err  error
}

func TestMain(m *testing.M) {
	code := m.Run()
	if harness.dir != "" {
		os.RemoveAll(harness.dir)
	}
	os.Exit(code)
}

// guava returns the Java harness, compiled, or skips the test if there is
// no JDK or no Guava, except in CI, where it fails.
func guava(t *testing.T) *Guava {
	t.Helper()
	g, err := FindGuava()
	if err != nil {
		if os.Getenv("CI") != "" {
			t.Fatal(err)
		}
		t.Skip(err)
	}
	harness.once.Do(func() {
		g.Heap = "256m" // tests keep filters small
		harness.dir, harness.err = os.MkdirTemp("", "guavabench-test")
		if harness.err != nil {
			return
		}
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		harness.g, harness.err = g, g.Compile(ctx, harness.dir)
	})
	require.NoError(t, harness.err)
	return harness.g
}

// TestKeysMatchJava checks that the Java harness makes the same keys and
// probes as this package, so that both sides time the same work.
func TestKeysMatchJava(t *testing.T) {
	g := guava(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	out, err := g.Keys(ctx)
	require.NoError(t, err)
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	counts := map[string]int{}
	for _, line := range lines {
		f := strings.Fields(line)
		require.GreaterOrEqual(t, len(f), 3, line)
		counts[f[0]]++
		switch f[0] {
		case "int64", "hostport":
			require.Len(t, f, 3, line)
			i, err := strconv.ParseUint(f[1], 10, 64)
			require.NoError(t, err, line)
			want := HostPortKey(i)
			if f[0] == "int64" {
				want = strconv.FormatInt(Int64Key(i), 10)
			}
			assert.Equal(t, want, f[2], "%s key of index %d", f[0], i)
		case "probes":
			n, err := strconv.ParseUint(f[1], 10, 64)
			require.NoError(t, err, line)
			half, err := strconv.Atoi(f[2])
			require.NoError(t, err, line)
			var want []string
			for _, x := range ProbeIndexes(n, half) {
				want = append(want, strconv.FormatUint(x, 10))
			}
			assert.Equal(t, want, f[3:], "probes of n=%d half=%d", n, half)
		default:
			t.Errorf("unknown line %q", line)
		}
	}
	assert.Equal(t, map[string]int{"int64": 10, "hostport": 10, "probes": 3}, counts)
}
