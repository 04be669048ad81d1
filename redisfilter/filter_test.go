package redisfilter_test

import (
	"bytes"
	"context"
	"encoding/binary"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/mitzbloom/mitzbloom/bloom"
	"github.com/mitzbloom/mitzbloom/bloom/raw"
	"github.com/mitzbloom/mitzbloom/funnel"
	"github.com/mitzbloom/mitzbloom/redisfilter"
	"github.com/mitzbloom/mitzbloom/strategy"
	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func testContext(t testing.TB) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	t.Cleanup(cancel)
	return ctx
}

var strategies = []strategy.Strategy{strategy.Murmur128Mitz32, strategy.Murmur128Mitz64}

// randomStrings returns n distinct strings, none of them in avoid.
func randomStrings(r *rand.Rand, n int, avoid ...[]string) []string {
	seen := map[string]bool{}
	for _, list := range avoid {
		for _, s := range list {
			seen[s] = true
		}
	}
	out := make([]string, 0, n)
	for len(out) < n {
		s := fmt.Sprintf("key-%x", r.Uint64()>>uint(r.IntN(50)))
		if !seen[s] {
			seen[s] = true
			out = append(out, s)
		}
	}
	return out
}

// wordsOf returns what GET of a Redis filter must return for local: the
// words of Guava's writeTo stream, without its 6-byte header.
func wordsOf[T any](t testing.TB, local *bloom.Filter[T]) []byte {
	t.Helper()
	b, err := local.MarshalBinary()
	require.NoError(t, err)
	return b[raw.HeaderSize:]
}

// TestLayout checks the central promise: after the same puts, the Redis
// string is byte for byte the word array of the local filter's writeTo
// stream, with Guava bit i at Redis offset i XOR 63; BITCOUNT is the bit
// count, and Snapshot equals the local filter. Guava itself reads these
// bytes in TestJavaInterop.
func TestLayout(t *testing.T) {
	eachServer(t, func(t *testing.T, rdb redis.UniversalClient) {
		ctx := testContext(t)
		r := rand.New(rand.NewPCG(1, 2))
		for _, s := range strategies {
			for _, n := range []int64{0, 100, 5000} {
				t.Run(fmt.Sprintf("%v/n=%d", s, n), func(t *testing.T) {
					f, err := redisfilter.Open(ctx, rdb, filterName(t), funnel.String, n, 0.01, redisfilter.WithStrategy(s))
					require.NoError(t, err)
					t.Cleanup(func() { f.Delete(context.Background()) })
					local, err := bloom.New(funnel.String, n, 0.01, bloom.WithStrategy(s))
					require.NoError(t, err)
					require.Equal(t, local.BitSize(), f.BitSize())
					require.Equal(t, local.NumHashFunctions(), f.NumHashFunctions())

					// Created at full size, before any put.
					got, err := rdb.Get(ctx, f.Keys()[0]).Bytes()
					require.NoError(t, err)
					require.Equal(t, wordsOf(t, local), got, "empty filter")

					// One value: exactly its Guava indexes are set, at i XOR 63.
					const first = "hello"
					changed, err := f.Put(ctx, first)
					require.NoError(t, err)
					assert.True(t, changed)
					local.Put(first)
					h1, h2 := raw.Sum128(funnel.String, first)
					idx := raw.AppendIndexes(nil, s, h1, h2, f.NumHashFunctions(), f.BitSize())
					for _, i := range idx {
						bit, err := rdb.GetBit(ctx, f.Keys()[0], i^63).Result()
						require.NoError(t, err)
						assert.EqualValues(t, 1, bit, "Guava bit %d at Redis offset %d", i, i^63)
						assert.EqualValues(t, 1, wordsOf(t, local)[(i^63)/8]>>(7-(i^63)%8)&1, "the local filter has bit %d", i)
					}
					count, err := f.BitCount(ctx)
					require.NoError(t, err)
					assert.Equal(t, local.BitCount(), count)

					values := randomStrings(r, int(n), []string{first})
					require.NoError(t, f.PutMany(ctx, values))
					for _, v := range values {
						local.Put(v)
					}
					got, err = rdb.Get(ctx, f.Keys()[0]).Bytes()
					require.NoError(t, err)
					if !bytes.Equal(wordsOf(t, local), got) {
						t.Fatalf("GET differs from the local filter's words")
					}
					count, err = f.BitCount(ctx)
					require.NoError(t, err)
					assert.Equal(t, local.BitCount(), count)

					snap, err := f.Snapshot(ctx)
					require.NoError(t, err)
					assert.True(t, snap.Equal(local), "Snapshot differs from the local filter")

					// GET plus Guava's header is what bloom.ReadFrom reads.
					header := []byte{byte(s.Ordinal()), byte(f.NumHashFunctions()), 0, 0, 0, 0}
					binary.BigEndian.PutUint32(header[2:], uint32(f.BitSize()/64))
					read, err := bloom.ReadFrom(bytes.NewReader(append(header, got...)), funnel.String)
					require.NoError(t, err)
					assert.True(t, read.Equal(local), "ReadFrom(header + GET) differs from the local filter")
				})
			}
		}
	})
}

// TestFunnels puts values of every kind of funnel, a custom one included,
// and compares the bits with the local filter's.
func TestFunnels(t *testing.T) {
	rdb := sharedClient(t)
	type pair struct {
		A string
		B int64
	}
	pairFunnel := funnel.Func[pair](func(p pair, into funnel.Sink) {
		into.PutInt32(int32(len(p.A)))
		into.PutString(p.A)
		into.PutInt64(p.B)
	})
	t.Run("Bytes", func(t *testing.T) {
		checkFunnel(t, rdb, funnel.Bytes, [][]byte{{}, {0}, []byte("abc"), bytes.Repeat([]byte{0xff}, 100)})
	})
	t.Run("UnencodedChars", func(t *testing.T) {
		checkFunnel(t, rdb, funnel.UnencodedChars, []string{"", "a", "héllo", "\U0001F600"})
	})
	t.Run("Int32", func(t *testing.T) { checkFunnel(t, rdb, funnel.Int32, []int32{0, -1, 1 << 30}) })
	t.Run("Int64", func(t *testing.T) { checkFunnel(t, rdb, funnel.Int64, []int64{0, -1, 1 << 60}) })
	t.Run("Sequential", func(t *testing.T) {
		checkFunnel(t, rdb, funnel.Sequential(funnel.Int64), [][]int64{nil, {1}, {1, 2, 3}})
	})
	t.Run("Func", func(t *testing.T) {
		checkFunnel(t, rdb, funnel.Named("pair/v1", pairFunnel), []pair{{"a", 1}, {"", 0}, {"ab", -7}})
	})
}

func checkFunnel[T any](t *testing.T, rdb redis.UniversalClient, f funnel.Funnel[T], values []T, opts ...redisfilter.Option) {
	ctx := testContext(t)
	rf, err := redisfilter.Open(ctx, rdb, filterName(t), f, 100, 0.01, opts...)
	require.NoError(t, err)
	t.Cleanup(func() { rf.Delete(context.Background()) })
	local, err := bloom.New(f, 100, 0.01)
	require.NoError(t, err)
	for _, v := range values {
		want := local.Put(v)
		got, err := rf.Put(ctx, v)
		require.NoError(t, err)
		assert.Equal(t, want, got, "Put(%v) reports a change differently from the local filter", v)
	}
	got, err := rdb.Get(ctx, rf.Keys()[0]).Bytes()
	require.NoError(t, err)
	assert.Equal(t, wordsOf(t, local), got)
	found, err := rf.MightContainMany(ctx, nil, values)
	require.NoError(t, err)
	for i, ok := range found {
		assert.True(t, ok, "false negative for %v", values[i])
	}
}

// TestPutAndMightContain compares every answer of the Redis filter with the
// local one's, single-threaded, where they must agree exactly, with batches
// large enough to take several scripts and several round trips.
func TestPutAndMightContain(t *testing.T) {
	eachServer(t, func(t *testing.T, rdb redis.UniversalClient) {
		ctx := testContext(t)
		r := rand.New(rand.NewPCG(3, 4))
		f, err := redisfilter.Open(ctx, rdb, filterName(t), funnel.String, 20000, 0.01)
		require.NoError(t, err)
		t.Cleanup(func() { f.Delete(context.Background()) })
		local, err := bloom.New(funnel.String, 20000, 0.01)
		require.NoError(t, err)

		// 16 BITFIELDs of ⌊4096/7⌋ = 585 values make a round trip: 20000 values
		// take three, the last of them partial.
		values := randomStrings(r, 20000)
		probes := randomStrings(r, 20000, values)

		for _, v := range values[:100] {
			want := local.Put(v)
			got, err := f.Put(ctx, v)
			require.NoError(t, err)
			require.Equal(t, want, got, "Put(%q)", v)
			again, err := f.Put(ctx, v)
			require.NoError(t, err)
			assert.False(t, again, "a second Put(%q) reports a change", v)
			found, err := f.MightContain(ctx, v)
			require.NoError(t, err)
			assert.True(t, found, "MightContain(%q) after Put", v)
		}
		require.NoError(t, f.PutMany(ctx, values[100:]))
		for _, v := range values[100:] {
			local.Put(v)
		}

		prefix := []bool{true, false, true}
		all := append(append([]string{}, values...), probes...)
		got, err := f.MightContainMany(ctx, append([]bool{}, prefix...), all)
		require.NoError(t, err)
		require.Len(t, got, len(prefix)+len(all))
		assert.Equal(t, prefix, got[:len(prefix)], "MightContainMany must append to dst")
		falsePositives := 0
		for i, v := range all {
			want := local.MightContain(v)
			if got[len(prefix)+i] != want {
				t.Fatalf("MightContainMany(%q) = %t, the local filter says %t", v, got[len(prefix)+i], want)
			}
			if i >= len(values) && want {
				falsePositives++
			}
		}
		// The probes must not all answer alike, or the comparison tests little.
		assert.Positive(t, falsePositives, "no probe was a false positive")
		assert.Less(t, falsePositives, len(probes)/2)
		for _, v := range probes[:50] {
			found, err := f.MightContain(ctx, v)
			require.NoError(t, err)
			assert.Equal(t, local.MightContain(v), found, "MightContain(%q)", v)
		}

		// Empty batches make no call and change nothing.
		require.NoError(t, f.PutMany(ctx, nil))
		got, err = f.MightContainMany(ctx, prefix, nil)
		require.NoError(t, err)
		assert.Equal(t, prefix, got)

		snap, err := f.Snapshot(ctx)
		require.NoError(t, err)
		assert.True(t, snap.Equal(local))
	})
}

// TestOpenChecksParameters opens an existing filter with each parameter
// changed: every one is an error that shows both configs, and the stored
// filter is untouched.
func TestOpenChecksParameters(t *testing.T) {
	eachServer(t, func(t *testing.T, rdb redis.UniversalClient) {
		ctx := testContext(t)
		name := filterName(t)
		f, err := redisfilter.Open(ctx, rdb, name, funnel.String, 1, 0.01)
		require.NoError(t, err)
		t.Cleanup(func() { f.Delete(context.Background()) })
		_, err = f.Put(ctx, "x")
		require.NoError(t, err)
		before, err := rdb.Get(ctx, f.Keys()[0]).Bytes()
		require.NoError(t, err)

		same, err := redisfilter.Open(ctx, rdb, name, funnel.String, 1, 0.01)
		require.NoError(t, err, "reopening with the same parameters")
		found, err := same.MightContain(ctx, "x")
		require.NoError(t, err)
		assert.True(t, found)

		cases := []struct {
			name string
			open func() error
		}{
			{"bit size", func() error {
				_, err := redisfilter.Open(ctx, rdb, name, funnel.String, 1000, 0.01)
				return err
			}},
			{"strategy", func() error {
				_, err := redisfilter.Open(ctx, rdb, name, funnel.String, 1, 0.01, redisfilter.WithStrategy(strategy.Murmur128Mitz32))
				return err
			}},
			// At n = 1, p = 0.01 only k differs between the two rules.
			{"hash count", func() error {
				_, err := redisfilter.Open(ctx, rdb, name, funnel.String, 1, 0.01, redisfilter.WithLegacyHashCount())
				return err
			}},
			{"funnel", func() error {
				_, err := redisfilter.Open(ctx, rdb, name, funnel.UnencodedChars, 1, 0.01)
				return err
			}},
			{"funnel name", func() error {
				_, err := redisfilter.Open(ctx, rdb, name, funnel.Named("utf8", funnel.String), 1, 0.01)
				return err
			}},
			{"window", func() error {
				_, err := redisfilter.OpenWindowed(ctx, rdb, name, funnel.String, 1, 0.01, time.Hour, 2)
				return err
			}},
		}
		for _, c := range cases {
			err := c.open()
			require.ErrorIs(t, err, redisfilter.ErrMismatch, c.name)
			assert.Contains(t, err.Error(), "bits=64 k=7 strategy=MURMUR128_MITZ_64", c.name)
			t.Logf("%s: %v", c.name, err)
		}
		after, err := rdb.Get(ctx, f.Keys()[0]).Bytes()
		require.NoError(t, err)
		assert.Equal(t, before, after, "a refused Open changed the bits")
	})
}

// TestParametersChangedUnderneath deletes a filter and re-creates it with
// other parameters while a Filter of the old ones is in use: every call of
// the old Filter fails, and none touches the new filter's bits.
func TestParametersChangedUnderneath(t *testing.T) {
	eachServer(t, func(t *testing.T, rdb redis.UniversalClient) {
		ctx := testContext(t)
		name := filterName(t)
		old, err := redisfilter.Open(ctx, rdb, name, funnel.String, 1, 0.01)
		require.NoError(t, err)
		require.NoError(t, old.Delete(ctx))
		// The same size, another k (7 and 6 bits per value): the most dangerous
		// mix-up, since the bitmap alone cannot tell.
		replacement, err := redisfilter.Open(ctx, rdb, name, funnel.String, 1, 0.01, redisfilter.WithLegacyHashCount())
		require.NoError(t, err)
		require.Equal(t, old.BitSize(), replacement.BitSize())
		require.NotEqual(t, old.NumHashFunctions(), replacement.NumHashFunctions())
		t.Cleanup(func() { replacement.Delete(context.Background()) })
		require.NoError(t, replacement.PutMany(ctx, []string{"a", "b"}))
		before, err := rdb.Get(ctx, replacement.Keys()[0]).Bytes()
		require.NoError(t, err)

		_, err = old.Put(ctx, "c")
		assert.ErrorIs(t, err, redisfilter.ErrMismatch, "Put")
		_, err = old.MightContain(ctx, "a")
		assert.ErrorIs(t, err, redisfilter.ErrMismatch, "MightContain")
		assert.ErrorIs(t, old.PutMany(ctx, []string{"c", "d"}), redisfilter.ErrMismatch, "PutMany")
		dst, err := old.MightContainMany(ctx, []bool{true}, []string{"a"})
		assert.ErrorIs(t, err, redisfilter.ErrMismatch, "MightContainMany")
		assert.Equal(t, []bool{true}, dst, "MightContainMany must return dst unchanged on error")
		_, err = old.Snapshot(ctx)
		assert.ErrorIs(t, err, redisfilter.ErrMismatch, "Snapshot")
		_, err = old.BitCount(ctx)
		assert.ErrorIs(t, err, redisfilter.ErrMismatch, "BitCount")
		local, err := bloom.New(funnel.String, 1, 0.01)
		require.NoError(t, err)
		local.Put("z")
		assert.ErrorIs(t, old.Merge(ctx, local), redisfilter.ErrMismatch, "Merge")

		after, err := rdb.Get(ctx, replacement.Keys()[0]).Bytes()
		require.NoError(t, err)
		assert.Equal(t, before, after, "calls with the old parameters changed the bits")
		assertNoMergeKeys(t, rdb, name)
	})
}

// TestWrongKeys puts keys of the wrong type or length where a filter's keys
// go.
func TestWrongKeys(t *testing.T) {
	eachServer(t, func(t *testing.T, rdb redis.UniversalClient) {
		ctx := testContext(t)
		open := func(name string) (*redisfilter.Filter[string], error) {
			return redisfilter.Open(ctx, rdb, name, funnel.String, 100, 0.01)
		}

		t.Run("bitmap is a list", func(t *testing.T) {
			name := filterName(t)
			require.NoError(t, rdb.RPush(ctx, "{"+name+"}", "x").Err())
			_, err := open(name)
			assert.ErrorIs(t, err, redisfilter.ErrNotFilter)
			t.Log(err)
		})
		t.Run("config is a hash", func(t *testing.T) {
			name := filterName(t)
			require.NoError(t, rdb.HSet(ctx, "{"+name+"}:config", "bits", "1").Err())
			_, err := open(name)
			assert.ErrorIs(t, err, redisfilter.ErrNotFilter)
		})
		t.Run("bitmap without config", func(t *testing.T) {
			name := filterName(t)
			f, err := open(name)
			require.NoError(t, err)
			require.NoError(t, rdb.Del(ctx, f.ConfigKeys()[0]).Err())
			_, err = open(name)
			assert.ErrorIs(t, err, redisfilter.ErrLost)
			assert.ErrorContains(t, err, "WithAdopt", "the error says what to do")
			_, err = f.Put(ctx, "x")
			assert.ErrorIs(t, err, redisfilter.ErrLost, "Put without config")
		})
		t.Run("bitmap replaced", func(t *testing.T) {
			name := filterName(t)
			f, err := open(name)
			require.NoError(t, err)
			t.Cleanup(func() { f.Delete(context.Background()) })

			require.NoError(t, rdb.Set(ctx, f.Keys()[0], "short", 0).Err())
			_, err = f.Put(ctx, "x")
			assert.ErrorIs(t, err, redisfilter.ErrNotFilter, "Put on a short string")
			_, err = f.Snapshot(ctx)
			assert.ErrorIs(t, err, redisfilter.ErrNotFilter, "Snapshot of a short string")
			_, err = open(name)
			assert.ErrorIs(t, err, redisfilter.ErrNotFilter, "Open on a short string")

			require.NoError(t, rdb.Del(ctx, f.Keys()[0]).Err())
			require.NoError(t, rdb.SAdd(ctx, f.Keys()[0], "x").Err())
			_, err = f.Put(ctx, "x")
			assert.ErrorIs(t, err, redisfilter.ErrNotFilter, "Put on a set")
			_, err = f.MightContainMany(ctx, nil, []string{"x", "y"})
			assert.ErrorIs(t, err, redisfilter.ErrNotFilter, "MightContainMany on a set")
			_, err = f.Snapshot(ctx)
			assert.ErrorIs(t, err, redisfilter.ErrNotFilter, "Snapshot of a set")
			_, err = f.BitCount(ctx)
			assert.ErrorIs(t, err, redisfilter.ErrNotFilter, "BitCount of a set")
			local, err := bloom.New(funnel.String, 100, 0.01)
			require.NoError(t, err)
			assert.ErrorIs(t, f.Merge(ctx, local), redisfilter.ErrNotFilter, "Merge into a set")
			assertNoMergeKeys(t, rdb, name)
			n, err := rdb.SCard(ctx, f.Keys()[0]).Result()
			require.NoError(t, err)
			assert.EqualValues(t, 1, n, "the set was changed")
		})
	})
}

// TestLost deletes a filter's bitmap, then all its keys, under a Filter in
// use: every call is an error wrapping ErrLost, never an answer; Open does
// not re-create a bitmap whose config exists unless told to, and a filter
// re-created makes the Filters opened before it fail too.
func TestLost(t *testing.T) {
	eachServer(t, func(t *testing.T, rdb redis.UniversalClient) {
		ctx := testContext(t)
		name := filterName(t)
		f, err := redisfilter.Open(ctx, rdb, name, funnel.String, 100, 0.01)
		require.NoError(t, err)
		t.Cleanup(func() { f.Delete(context.Background()) })
		require.NoError(t, f.PutMany(ctx, []string{"a", "b"}))

		require.NoError(t, rdb.Del(ctx, f.Keys()[0]).Err())
		assertLost(t, f, 100)
		exists, err := rdb.Exists(ctx, f.Keys()[0]).Result()
		require.NoError(t, err)
		assert.Zero(t, exists, "a failed call created a bitmap")

		_, err = redisfilter.Open(ctx, rdb, name, funnel.String, 100, 0.01)
		require.ErrorIs(t, err, redisfilter.ErrLost, "Open of a filter whose bitmap is gone")
		assert.ErrorContains(t, err, "WithRecreate", "the error says what to do")
		t.Log(err)
		exists, err = rdb.Exists(ctx, f.Keys()[0]).Result()
		require.NoError(t, err)
		assert.Zero(t, exists, "a refused Open created a bitmap")

		again, err := redisfilter.Open(ctx, rdb, name, funnel.String, 100, 0.01, redisfilter.WithRecreate())
		require.NoError(t, err)
		count, err := again.BitCount(ctx)
		require.NoError(t, err)
		assert.Zero(t, count)
		// The Filter opened before the loss must not read the new, empty
		// bitmap as if it were its own.
		assertLost(t, f, 100)
		_, err = again.Put(ctx, "c")
		require.NoError(t, err)

		require.NoError(t, again.Delete(ctx))
		assertLost(t, again, 100)
		// With nothing left, Open creates the filter anew, and the Filters
		// of the old one still fail.
		fresh, err := redisfilter.Open(ctx, rdb, name, funnel.String, 100, 0.01)
		require.NoError(t, err)
		assertLost(t, again, 100)
		changed, err := fresh.Put(ctx, "a")
		require.NoError(t, err)
		assert.True(t, changed)
	})
}

// assertLost checks that every call on f fails with ErrLost.
func assertLost(t *testing.T, f *redisfilter.Filter[string], n int64) {
	t.Helper()
	ctx := testContext(t)
	_, err := f.Put(ctx, "c")
	assert.ErrorIs(t, err, redisfilter.ErrLost, "Put")
	assert.ErrorIs(t, f.PutMany(ctx, []string{"c", "d"}), redisfilter.ErrLost, "PutMany")
	_, err = f.MightContain(ctx, "a")
	assert.ErrorIs(t, err, redisfilter.ErrLost, "MightContain")
	_, err = f.MightContainMany(ctx, nil, []string{"a", "b"})
	assert.ErrorIs(t, err, redisfilter.ErrLost, "MightContainMany")
	_, err = f.Snapshot(ctx)
	assert.ErrorIs(t, err, redisfilter.ErrLost, "Snapshot")
	_, err = f.BitCount(ctx)
	assert.ErrorIs(t, err, redisfilter.ErrLost, "BitCount")
	local, err := bloom.New(funnel.String, n, 0.01)
	require.NoError(t, err)
	local.Put("z")
	assert.ErrorIs(t, f.Merge(ctx, local), redisfilter.ErrLost, "Merge")
}

func TestOpenArguments(t *testing.T) {
	rdb := sharedClient(t)
	ctx := testContext(t)
	name := filterName(t)
	pairs := funnel.Func[[2]int64](func(v [2]int64, into funnel.Sink) {
		into.PutInt64(v[0])
		into.PutInt64(v[1])
	})
	cases := []struct {
		what string
		err  error
		open func() error
	}{
		{"nil client", bloom.ErrInvalidArgument, func() error {
			_, err := redisfilter.Open(ctx, nil, name, funnel.String, 100, 0.01)
			return err
		}},
		{"empty name", bloom.ErrInvalidArgument, func() error {
			_, err := redisfilter.Open(ctx, rdb, "", funnel.String, 100, 0.01)
			return err
		}},
		{"nil funnel", bloom.ErrInvalidArgument, func() error {
			_, err := redisfilter.Open[string](ctx, rdb, name, nil, 100, 0.01)
			return err
		}},
		{"unnamed Func funnel", bloom.ErrInvalidArgument, func() error {
			_, err := redisfilter.Open(ctx, rdb, name, pairs, 100, 0.01)
			return err
		}},
		{"funnel named \"\"", bloom.ErrInvalidArgument, func() error {
			_, err := redisfilter.Open(ctx, rdb, name, funnel.Named("", pairs), 100, 0.01)
			return err
		}},
		{"nil strategy", bloom.ErrInvalidArgument, func() error {
			_, err := redisfilter.Open(ctx, rdb, name, funnel.String, 100, 0.01, redisfilter.WithStrategy(nil))
			return err
		}},
		{"fpp", bloom.ErrInvalidArgument, func() error {
			_, err := redisfilter.Open(ctx, rdb, name, funnel.String, 100, 1.5)
			return err
		}},
		{"negative n", bloom.ErrInvalidArgument, func() error {
			_, err := redisfilter.Open(ctx, rdb, name, funnel.String, -1, 0.01)
			return err
		}},
		{"shard size not whole words", bloom.ErrInvalidArgument, func() error {
			_, err := redisfilter.Open(ctx, rdb, name, funnel.String, 1000, 0.01, redisfilter.WithShardBytes(100))
			return err
		}},
		{"shard size over 512 MiB", bloom.ErrInvalidArgument, func() error {
			_, err := redisfilter.Open(ctx, rdb, name, funnel.String, 1000, 0.01, redisfilter.WithShardBytes(1<<30))
			return err
		}},
		{"window period", bloom.ErrInvalidArgument, func() error {
			_, err := redisfilter.OpenWindowed(ctx, rdb, name, funnel.String, 100, 0.01, 1500*time.Microsecond, 2)
			return err
		}},
		{"no generations", bloom.ErrInvalidArgument, func() error {
			_, err := redisfilter.OpenWindowed(ctx, rdb, name, funnel.String, 100, 0.01, time.Second, 0)
			return err
		}},
		{"too many generations", bloom.ErrInvalidArgument, func() error {
			_, err := redisfilter.OpenWindowed(ctx, rdb, name, funnel.String, 100, 0.01, time.Second, 65)
			return err
		}},
	}
	for _, c := range cases {
		err := c.open()
		assert.ErrorIs(t, err, c.err, c.what)
		t.Logf("%s: %v", c.what, err)
	}
	_, err := redisfilter.Open(ctx, rdb, name, pairs, 100, 0.01)
	assert.ErrorContains(t, err, "wrap it with funnel.Named", "the advice for an unnamed funnel")
	n, err := rdb.Exists(ctx, "{"+name+"}", "{"+name+"}:config").Result()
	require.NoError(t, err)
	assert.Zero(t, n, "a refused Open created keys")

	// The largest filter Redis holds is allowed: 2³² bits, 512 MiB, is
	// p = 0.01 at about 447 million values. Only sized here, not created.
	bits, _, err := bloom.Size(447_000_000, 0.01)
	require.NoError(t, err)
	require.LessOrEqual(t, bits, int64(1)<<32)
}

// TestMerge ORs local filters into Redis, as PutAll does locally.
func TestMerge(t *testing.T) {
	eachServer(t, func(t *testing.T, rdb redis.UniversalClient) {
		ctx := testContext(t)
		r := rand.New(rand.NewPCG(5, 6))
		for _, s := range strategies {
			t.Run(s.String(), func(t *testing.T) {
				name := filterName(t)
				f, err := redisfilter.Open(ctx, rdb, name, funnel.String, 5000, 0.01, redisfilter.WithStrategy(s))
				require.NoError(t, err)
				t.Cleanup(func() { f.Delete(context.Background()) })
				remoteValues := randomStrings(r, 2000)
				require.NoError(t, f.PutMany(ctx, remoteValues))

				local, err := bloom.New(funnel.String, 5000, 0.01, bloom.WithStrategy(s))
				require.NoError(t, err)
				localValues := randomStrings(r, 2000, remoteValues)
				for _, v := range localValues {
					local.Put(v)
				}
				want := local.Copy()
				for _, v := range remoteValues {
					want.Put(v)
				}

				require.NoError(t, f.Merge(ctx, local))
				snap, err := f.Snapshot(ctx)
				require.NoError(t, err)
				assert.True(t, snap.Equal(want), "Merge differs from PutAll")
				found, err := f.MightContainMany(ctx, nil, localValues)
				require.NoError(t, err)
				assert.NotContains(t, found, false, "a merged value is missing")
				assertNoMergeKeys(t, rdb, name)

				// Incompatible local filters are refused before anything is sent.
				other := strategy.Murmur128Mitz32
				if s == other {
					other = strategy.Murmur128Mitz64
				}
				bad := map[string]func() (*bloom.Filter[string], error){
					"size": func() (*bloom.Filter[string], error) {
						return bloom.New(funnel.String, 6000, 0.01, bloom.WithStrategy(s))
					},
					// 47936 bits as well, but k = 10.
					"k": func() (*bloom.Filter[string], error) {
						return bloom.New(funnel.String, 3334, 0.001, bloom.WithStrategy(s))
					},
					"strategy": func() (*bloom.Filter[string], error) {
						return bloom.New(funnel.String, 5000, 0.01, bloom.WithStrategy(other))
					},
					// Same sizes, but the values are hashed as UTF-16.
					"funnel": func() (*bloom.Filter[string], error) {
						return bloom.New(funnel.UnencodedChars, 5000, 0.01, bloom.WithStrategy(s))
					},
				}
				for what, mk := range bad {
					b, err := mk()
					require.NoError(t, err)
					b.Put("extra")
					err = f.Merge(ctx, b)
					assert.ErrorIs(t, err, bloom.ErrIncompatible, what)
					t.Logf("%s: %v", what, err)
				}
				assert.ErrorIs(t, f.Merge(ctx, nil), bloom.ErrInvalidArgument)
				after, err := f.Snapshot(ctx)
				require.NoError(t, err)
				assert.True(t, after.Equal(want), "a refused Merge changed the filter")
			})
		}
	})
}

// assertNoMergeKeys checks that no temporary key of Merge is left.
func assertNoMergeKeys(t *testing.T, rdb redis.UniversalClient, name string) {
	t.Helper()
	assert.Empty(t, keysMatching(t, rdb, "{"+name+"}:merge:*"), "Merge left temporary keys")
}

// TestScriptCacheFlushed runs every call after SCRIPT FLUSH, as after a
// server restart: each must load its script and succeed, batches of several
// scripts included.
func TestScriptCacheFlushed(t *testing.T) {
	eachServer(t, func(t *testing.T, rdb redis.UniversalClient) {
		ctx := testContext(t)
		r := rand.New(rand.NewPCG(7, 8))
		f, err := redisfilter.Open(ctx, rdb, filterName(t), funnel.String, 10000, 0.01)
		require.NoError(t, err)
		t.Cleanup(func() { f.Delete(context.Background()) })
		local, err := bloom.New(funnel.String, 10000, 0.01)
		require.NoError(t, err)
		values := randomStrings(r, 5000)
		for _, v := range values {
			local.Put(v)
		}
		flush := func() { require.NoError(t, rdb.ScriptFlush(ctx).Err()) }

		flush()
		require.NoError(t, f.PutMany(ctx, values[:4000]))
		flush()
		changed, err := f.Put(ctx, values[4000])
		require.NoError(t, err)
		assert.True(t, changed)
		flush()
		found, err := f.MightContainMany(ctx, nil, values[:4001])
		require.NoError(t, err)
		assert.NotContains(t, found, false)
		flush()
		extra, err := bloom.New(funnel.String, 10000, 0.01)
		require.NoError(t, err)
		for _, v := range values[4001:] {
			extra.Put(v)
		}
		require.NoError(t, f.Merge(ctx, extra))
		flush()
		count, err := f.BitCount(ctx)
		require.NoError(t, err)
		assert.Equal(t, local.BitCount(), count)
		snap, err := f.Snapshot(ctx)
		require.NoError(t, err)
		assert.True(t, snap.Equal(local))
	})
}

func TestString(t *testing.T) {
	rdb := sharedClient(t)
	ctx := testContext(t)
	f, err := redisfilter.Open(ctx, rdb, filterName(t), funnel.String, 1000, 0.01)
	require.NoError(t, err)
	t.Cleanup(func() { f.Delete(context.Background()) })
	s := f.String()
	assert.True(t, strings.HasPrefix(s, "redisfilter.Filter{"), s)
	assert.Contains(t, s, "funnel.String MURMUR128_MITZ_64 9600 bits, 7 hash functions")
	cfg, err := rdb.Get(ctx, f.ConfigKeys()[0]).Result()
	require.NoError(t, err)
	assert.Regexp(t, `^mitzbloom/redisfilter v1 bits=9600 k=7 strategy=MURMUR128_MITZ_64 funnel="funnel.String" id=[0-9a-f]{16} n=1000 p=0.01$`, cfg)
	assert.Equal(t, "{"+filterName(t)+"}", f.Keys()[0])
	assert.Equal(t, "{"+filterName(t)+"}:config", f.ConfigKeys()[0])
}
