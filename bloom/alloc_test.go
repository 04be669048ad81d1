package bloom_test

import (
	"net"
	"net/netip"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/mitzbloom/mitzbloom/bloom"
	"github.com/mitzbloom/mitzbloom/funnel"
	"github.com/mitzbloom/mitzbloom/internal/race"
	"github.com/mitzbloom/mitzbloom/strategy"
)

func allocsOf[T any](t *testing.T, f funnel.Funnel[T], v T) {
	t.Helper()
	for _, s := range []strategy.Strategy{strategy.Murmur128Mitz32, strategy.Murmur128Mitz64} {
		for _, m := range writeModes {
			filter := mustNewMode(t, m, f, 1000, 0.01, bloom.WithStrategy(s))
			assert.Zero(t, testing.AllocsPerRun(1000, func() { filter.Put(v) }), "Put %T %v %s", f, s, m.name)
			assert.Zero(t, testing.AllocsPerRun(1000, func() { filter.MightContain(v) }), "MightContain %T %v %s", f, s, m.name)
		}
	}
}

// TestZeroAllocs requires Put and MightContain to allocate nothing with
// every built-in funnel and both strategies.
func TestZeroAllocs(t *testing.T) {
	if race.Enabled {
		t.Skip("the race detector makes sync.Pool drop items at random, so allocation counts mean nothing; .ci/run also runs the tests without -race")
	}
	allocsOf(t, funnel.Bytes, []byte("some bytes"))
	allocsOf(t, funnel.String, "a string")
	allocsOf(t, funnel.UnencodedChars, "chars with é and \U0001F600")
	allocsOf(t, funnel.Int32, 42)
	allocsOf(t, funnel.Int64, -42)
	allocsOf(t, funnel.Uint64, 1<<63)
	allocsOf(t, funnel.Bool, true)
	allocsOf(t, funnel.Addr, netip.MustParseAddr("2001:db8::1"))
	allocsOf(t, funnel.AddrPort, netip.MustParseAddrPort("10.0.0.1:443"))
	allocsOf(t, funnel.IP, net.ParseIP("10.0.0.1"))
	allocsOf(t, funnel.Sequential(funnel.Int64), []int64{1, 2, 3})
	allocsOf(t, funnel.Named("dest/v1", funnel.AddrPort), netip.MustParseAddrPort("10.0.0.1:443"))
	allocsOf(t, funnel.Func[[2]int64](func(v [2]int64, s funnel.Sink) {
		s.PutInt64(v[0])
		s.PutInt64(v[1])
	}), [2]int64{1, 2})
}
