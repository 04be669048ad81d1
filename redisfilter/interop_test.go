package redisfilter_test

import (
	"bytes"
	"context"
	"encoding/hex"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/mitzbloom/mitzbloom/bloom"
	"github.com/mitzbloom/mitzbloom/bloom/raw"
	"github.com/mitzbloom/mitzbloom/funnel"
	"github.com/mitzbloom/mitzbloom/redisfilter"
	"github.com/mitzbloom/mitzbloom/strategy"
	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestJavaInterop hands the bytes of Redis filters to real Guava: what GET
// returns, prefixed with Guava's 6-byte header, must be read by
// BloomFilter.readFrom as the filter Guava builds from the same puts, and
// answer mightContain as the Redis filter does. The other way, Guava's
// writeTo words, SET as a Redis filter's string, must answer as Guava does.
// The Guava side is testdata/RedisInterop.java.
//
// Debian's Guava is 31.1, which computes k with the legacy rule, so the
// filters use WithLegacyHashCount.
func TestJavaInterop(t *testing.T) {
	rdb := sharedClient(t)
	ctx := testContext(t)
	dir := t.TempDir()
	r := rand.New(rand.NewPCG(26, 27))

	var cases []interopCase
	for _, size := range []struct {
		n               int64
		fpp             float64
		inserts, probes int
		label           string
		shardBytes      int64
	}{
		{1000, 0.01, 700, 300, "n1000", 0},
		{50, 0.2, 120, 300, "n50-overfilled", 0},
		// 23968 bytes in shards of 4 KiB: six strings, the last shorter.
		{20000, 0.01, 5000, 300, "n20000-sharded", 4096},
	} {
		for _, s := range strategies {
			id := func(f string) string { return fmt.Sprintf("%s-%v-%s", f, s, size.label) }
			cases = append(cases,
				newInteropCase(id("string"), "string", funnel.String, s, size.n, size.fpp, size.shardBytes,
					randomStrings(r, size.inserts+size.probes), func(v string) string { return hex.EncodeToString([]byte(v)) }, size.inserts),
				newInteropCase(id("long"), "long", funnel.Int64, s, size.n, size.fpp, size.shardBytes,
					randomInt64s(r, size.inserts+size.probes), func(v int64) string { return strconv.FormatInt(v, 10) }, size.inserts),
				newInteropCase(id("bytes"), "bytes", funnel.Bytes, s, size.n, size.fpp, size.shardBytes,
					randomByteSlices(r, size.inserts+size.probes), hex.EncodeToString, size.inserts),
			)
		}
	}

	var spec bytes.Buffer
	for _, c := range cases {
		c.prepare(ctx, t, rdb, dir, &spec)
	}
	require.NoError(t, os.WriteFile(filepath.Join(dir, "cases.txt"), spec.Bytes(), 0o644))

	out := runGuava(ctx, t, filepath.Join("testdata", "RedisInterop.java"), "RedisInterop", dir)

	lines := strings.Split(strings.TrimSpace(out), "\n")
	require.Equal(t, fmt.Sprintf("end %d", len(cases)), lines[len(lines)-1], "RedisInterop.java's report is incomplete")
	reports := map[string]map[string]string{}
	for _, line := range lines[:len(lines)-1] {
		w := strings.Fields(line)
		require.True(t, len(w) == 7 && w[0] == "filter", "unexpected report line %q", line)
		kv := map[string]string{}
		for _, f := range w[2:] {
			k, v, ok := strings.Cut(f, "=")
			require.True(t, ok, "bad report field %q", f)
			kv[k] = v
		}
		reports[w[1]] = kv
	}
	answers := map[bool]int{}
	for _, c := range cases {
		report, ok := reports[c.name()]
		if !assert.True(t, ok, "no report for %s", c.name()) {
			continue
		}
		for _, a := range report["probes"] {
			answers[a == '1']++
		}
		t.Run(c.name(), func(t *testing.T) { c.check(ctx, t, rdb, dir, report) })
	}
	// Probes that Guava answers only one way would not show that the two
	// sides agree on which bits a value hits.
	assert.Positive(t, answers[true], "no probe was a false positive in Guava: the probes test nothing")
	assert.Positive(t, answers[false], "every probe was positive in Guava: the probes test nothing")
}

// interopCase is one filter built in Redis and by Guava, its type parameter
// hidden so that cases of every funnel fit in one list.
type interopCase interface {
	name() string
	prepare(ctx context.Context, t *testing.T, rdb redis.UniversalClient, dir string, spec *bytes.Buffer)
	check(ctx context.Context, t *testing.T, rdb redis.UniversalClient, dir string, report map[string]string)
}

type interopFilter[T any] struct {
	id, javaFunnel  string
	f               funnel.Funnel[T]
	strategy        strategy.Strategy
	n               int64
	fpp             float64
	shardBytes      int64 // 0 for one string
	inserts, probes []T
	encode          func(T) string

	filter *redisfilter.Filter[T]
	words  []byte // what GET returned, of each shard in order
}

func newInteropCase[T any](id, javaFunnel string, f funnel.Funnel[T], s strategy.Strategy, n int64, fpp float64, shardBytes int64, values []T, encode func(T) string, inserts int) interopCase {
	return &interopFilter[T]{id: id, javaFunnel: javaFunnel, f: f, strategy: s, n: n, fpp: fpp, shardBytes: shardBytes,
		inserts: values[:inserts], probes: values[inserts:], encode: encode}
}

func (c *interopFilter[T]) name() string { return c.id }

func (c *interopFilter[T]) open(ctx context.Context, t *testing.T, rdb redis.UniversalClient, name string) *redisfilter.Filter[T] {
	opts := []redisfilter.Option{redisfilter.WithStrategy(c.strategy), redisfilter.WithLegacyHashCount()}
	if c.shardBytes != 0 {
		opts = append(opts, redisfilter.WithShardBytes(c.shardBytes))
	}
	f, err := redisfilter.Open(ctx, rdb, name, c.f, c.n, c.fpp, opts...)
	require.NoError(t, err)
	if c.shardBytes != 0 {
		require.Equal(t, int((f.BitSize()/8+c.shardBytes-1)/c.shardBytes), len(f.Keys()), "shards")
	}
	t.Cleanup(func() { f.Delete(context.Background()) })
	return f
}

func (c *interopFilter[T]) prepare(ctx context.Context, t *testing.T, rdb redis.UniversalClient, dir string, spec *bytes.Buffer) {
	c.filter = c.open(ctx, t, rdb, filterName(t)+"/"+c.id)
	require.NoError(t, c.filter.PutMany(ctx, c.inserts))
	for _, key := range c.filter.Keys() {
		words, err := rdb.Get(ctx, key).Bytes()
		require.NoError(t, err)
		c.words = append(c.words, words...)
	}
	stream := append(c.header(ctx, t), c.words...)
	require.NoError(t, os.WriteFile(filepath.Join(dir, "redis-"+c.id+".bin"), stream, 0o644))

	fmt.Fprintf(spec, "filter %s %s %d %d %016x\n", c.id, c.javaFunnel, c.strategy.Ordinal(), c.n, math.Float64bits(c.fpp))
	for _, v := range c.inserts {
		fmt.Fprintf(spec, "i %s\n", c.encode(v))
	}
	for _, v := range c.probes {
		fmt.Fprintf(spec, "p %s\n", c.encode(v))
	}
	fmt.Fprintln(spec, "end")
}

func (c *interopFilter[T]) check(ctx context.Context, t *testing.T, rdb redis.UniversalClient, dir string, report map[string]string) {
	assert.Equal(t, "true", report["equals"], "Guava: readFrom(header + GET) differs from its own filter of the same puts")
	assert.Equal(t, "true", report["containsAll"], "Guava: the filter read from Redis's bytes lacks a value put in it")
	assert.Equal(t, "0", report["rest"], "Guava's readFrom left bytes unread")
	assert.Equal(t, report["javaProbes"], report["probes"], "Guava's answers differ between its own filter and Redis's")

	got, err := c.filter.MightContainMany(ctx, nil, c.probes)
	require.NoError(t, err)
	assert.Equal(t, report["probes"], answerString(got), "Redis's answers to the probes differ from Guava's")

	// Guava's writeTo words are the Redis string.
	javaStream, err := os.ReadFile(filepath.Join(dir, "java-"+c.id+".bin"))
	require.NoError(t, err)
	require.Greater(t, len(javaStream), raw.HeaderSize)
	assert.Equal(t, c.header(ctx, t), javaStream[:raw.HeaderSize], "Guava's header")
	assert.True(t, bytes.Equal(c.words, javaStream[raw.HeaderSize:]), "GET (of each shard, concatenated) differs from Guava's writeTo words")

	// SET as a Redis filter, Guava's words answer as Guava does.
	fromJava := c.open(ctx, t, rdb, filterName(t)+"/from-java")
	rest := javaStream[raw.HeaderSize:]
	for _, key := range fromJava.Keys() {
		n := min(len(rest), int(c.shardBytes))
		if c.shardBytes == 0 {
			n = len(rest)
		}
		require.NoError(t, rdb.Set(ctx, key, rest[:n], 0).Err())
		rest = rest[n:]
	}
	got, err = fromJava.MightContainMany(ctx, nil, c.probes)
	require.NoError(t, err)
	assert.Equal(t, report["javaProbes"], answerString(got), "a Redis filter holding Guava's words answers differently")
	found, err := fromJava.MightContainMany(ctx, nil, c.inserts)
	require.NoError(t, err)
	assert.NotContains(t, found, false, "a Redis filter holding Guava's words lacks a value Guava put")

	// And bloom.ReadFrom reads the same bytes as Guava did.
	read, err := bloom.ReadFrom(bytes.NewReader(javaStream), c.f)
	require.NoError(t, err)
	snap, err := c.filter.Snapshot(ctx)
	require.NoError(t, err)
	assert.True(t, read.Equal(snap), "bloom.ReadFrom(Guava's stream) differs from the Redis filter's Snapshot")
}

// header returns the header of Guava's writeTo format of c's filter, as
// bloom writes it.
func (c *interopFilter[T]) header(ctx context.Context, t *testing.T) []byte {
	snap, err := c.filter.Snapshot(ctx)
	require.NoError(t, err)
	data, err := snap.MarshalBinary()
	require.NoError(t, err)
	return data[:raw.HeaderSize]
}

func answerString(answers []bool) string {
	b := make([]byte, len(answers))
	for i, a := range answers {
		b[i] = '0'
		if a {
			b[i] = '1'
		}
	}
	return string(b)
}

func randomInt64s(r *rand.Rand, n int) []int64 {
	seen := map[int64]bool{}
	out := make([]int64, 0, n)
	for len(out) < n {
		v := int64(r.Uint64())
		if r.IntN(2) == 0 {
			v = int64(r.IntN(100000) - 50000)
		}
		if !seen[v] {
			seen[v] = true
			out = append(out, v)
		}
	}
	return out
}

func randomByteSlices(r *rand.Rand, n int) [][]byte {
	seen := map[string]bool{}
	out := make([][]byte, 0, n)
	for len(out) < n {
		b := make([]byte, r.IntN(24))
		for i := range b {
			b[i] = byte(r.Uint32())
		}
		if !seen[string(b)] {
			seen[string(b)] = true
			out = append(out, b)
		}
	}
	return out
}
