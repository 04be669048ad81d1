package bloom_test

import (
	"bytes"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"net"
	"net/netip"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mitzbloom/mitzbloom/bloom"
	"github.com/mitzbloom/mitzbloom/bloom/mapped"
	"github.com/mitzbloom/mitzbloom/bloom/raw"
	"github.com/mitzbloom/mitzbloom/funnel"
	"github.com/mitzbloom/mitzbloom/internal/golden"
	"github.com/mitzbloom/mitzbloom/internal/javatest"
	"github.com/mitzbloom/mitzbloom/internal/testkeys"
	"github.com/mitzbloom/mitzbloom/strategy"
)

// TestJavaInterop checks the library against the real Guava of this machine,
// not against stored vectors: filters built on each side from the same values
// must serialize to the same bytes and be read by the other side as equal,
// and sizing must agree with the JVM's own Math.log over many (n, p). The
// Guava side is testdata/interop/Interop.java, whose header describes the
// exchange; it is compiled and run once, since JVM start-up dominates the
// runtime.
//
// Debian's Guava is 31.1, which computes k with the legacy rule, so every Go
// filter and sizing here uses WithLegacyHashCount.
func TestJavaInterop(t *testing.T) {
	javatest.Tools(t) // skip before building anything when Java is missing
	data := t.TempDir()

	// A fixed seed: a failure must reproduce, and the values are only there
	// to be varied, not to be fresh each run.
	r := rand.New(rand.NewPCG(0x6d69747a, 0x626c6f6f6d))
	filters := interopFilterCases(r)
	sizes := interopSizeCases(r)

	var cases bytes.Buffer
	for _, c := range filters {
		c.prepare(t, data, &cases)
	}
	for _, s := range sizes {
		fmt.Fprintf(&cases, "size %d %016x\n", s.n, math.Float64bits(s.p))
	}
	require.NoError(t, os.WriteFile(filepath.Join(data, "cases.txt"), cases.Bytes(), 0o644))

	start := time.Now()
	out := javatest.Program(t, []string{filepath.Join("testdata", "interop", "Interop.java")}, "Interop", data)
	t.Logf("javac and java %v", time.Since(start).Round(time.Millisecond))

	report := parseJavaReport(t, out, len(filters), len(sizes))
	probeAnswers := map[bool]int{}
	for _, c := range filters {
		java, ok := report.filters[c.name()]
		if !assert.True(t, ok, "no report for filter %s", c.name()) {
			continue
		}
		for _, p := range java.probes {
			probeAnswers[p == '1']++
		}
		t.Run(c.name(), func(t *testing.T) { c.check(t, data, java) })
	}
	// Probes that Guava answers only one way would not show that the two
	// sides agree on which bits a value hits.
	assert.Positive(t, probeAnswers[true], "no probe was a false positive in Guava: the probes test nothing")
	assert.Positive(t, probeAnswers[false], "every probe was positive in Guava: the probes test nothing")
	t.Logf("%d filters; Guava answered %d probes true, %d false", len(filters), probeAnswers[true], probeAnswers[false])

	t.Run("sizing", func(t *testing.T) { checkInteropSizes(t, sizes, report.sizes) })
}

// interopFilter is one filter built on both sides; its type parameter is
// hidden so that cases of every funnel fit in one list.
type interopFilter interface {
	name() string
	// prepare builds the Go filter, writes it to dir for Java to read and
	// appends the case to cases for Java to build its own.
	prepare(t *testing.T, dir string, cases io.Writer)
	// check compares the Go filter with what Java built and reported.
	check(t *testing.T, dir string, java javaFilter)
}

type interopCase[T any] struct {
	id         string
	javaFunnel string // the funnel's name in Interop.java
	f          funnel.Funnel[T]
	encode     func(T) string // the value as Interop.java decodes it
	strategy   strategy.Strategy
	n          int64
	fpp        float64
	inserts    []T
	probes     []T

	goFilter *bloom.Filter[T]
	goPuts   []bool
}

func (c *interopCase[T]) name() string { return c.id }

func (c *interopCase[T]) prepare(t *testing.T, dir string, cases io.Writer) {
	filter, err := bloom.New(c.f, c.n, c.fpp, bloom.WithStrategy(c.strategy), bloom.WithLegacyHashCount())
	require.NoError(t, err, c.id)
	c.goPuts = make([]bool, len(c.inserts))
	for i, v := range c.inserts {
		c.goPuts[i] = filter.Put(v)
	}
	c.goFilter = filter

	// Through WriteTo and a file rather than MarshalBinary, so that what
	// Guava reads is what a Go service would send it.
	file, err := os.Create(filepath.Join(dir, "go-"+c.id+".bin"))
	require.NoError(t, err)
	_, err = filter.WriteTo(file)
	require.NoError(t, err)
	require.NoError(t, file.Close())
	// And as encoding/json writes a struct holding it, for Guava to decode.
	doc, err := json.Marshal(struct {
		Filter *bloom.Filter[T] `json:"filter"`
	}{filter})
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(dir, "go-"+c.id+".json"), doc, 0o644))

	fmt.Fprintf(cases, "filter %s %s %d %d %016x\n", c.id, c.javaFunnel, c.strategy.Ordinal(), c.n, math.Float64bits(c.fpp))
	for _, v := range c.inserts {
		fmt.Fprintf(cases, "i %s\n", c.encode(v))
	}
	for _, v := range c.probes {
		fmt.Fprintf(cases, "p %s\n", c.encode(v))
	}
	fmt.Fprintln(cases, "end")
}

func (c *interopCase[T]) check(t *testing.T, dir string, java javaFilter) {
	// Guava reading what Go wrote: the same filter as Guava's own, holding
	// every value, with nothing left over in the stream.
	assert.True(t, java.goEquals, "Guava: readFrom(Go's bytes).equals(its own filter) is false")
	assert.True(t, java.goContainsAll, "Guava: the filter read from Go's bytes lacks a value put in it")
	assert.Zero(t, java.goRest, "Guava's readFrom left bytes of Go's stream unread")
	assert.True(t, java.goJSONEquals, "Guava: readFrom(Base64.getDecoder().decode(Go's JSON string)).equals(its own filter) is false")

	c.compareAnswers(t, "put results", java.puts, c.inserts, c.goPuts)

	// Go reading what Guava wrote.
	javaBytes, err := os.ReadFile(filepath.Join(dir, "java-"+c.id+".bin"))
	require.NoError(t, err)
	goBytes, err := c.goFilter.MarshalBinary()
	require.NoError(t, err)
	if !bytes.Equal(javaBytes, goBytes) {
		t.Errorf("Guava's writeTo and Go's MarshalBinary differ: %s", describeDiff(javaBytes, goBytes))
	}

	in := bytes.NewReader(javaBytes)
	read, err := bloom.ReadFrom(in, c.f)
	require.NoError(t, err)
	assert.Zero(t, in.Len(), "ReadFrom left bytes of Guava's stream unread")
	// What Java's Base64.getEncoder() makes of them, as a Java service
	// would put the filter in a JSON document.
	javaText, err := os.ReadFile(filepath.Join(dir, "java-"+c.id+".b64"))
	require.NoError(t, err)
	fromText, err := bloom.New(c.f, 1, 0.5)
	require.NoError(t, err)
	require.NoError(t, fromText.UnmarshalText(javaText), "UnmarshalText of Java's base64")
	assert.True(t, fromText.Equal(read), "UnmarshalText of Java's base64 and ReadFrom of its bytes differ")
	assert.Equal(t, c.strategy, raw.Strategy(read))
	missing := 0
	for _, v := range c.inserts {
		if !read.MightContain(v) {
			missing++
		}
	}
	assert.Zero(t, missing, "values put in Guava's filter that MightContain denies")
	probes := make([]bool, len(c.probes))
	for i, v := range c.probes {
		probes[i] = read.MightContain(v)
	}
	c.compareAnswers(t, "answers to held-out probes", java.probes, c.probes, probes)

	// Opened in place, the files Guava and Go wrote answer as the filters
	// read from them.
	checkMapped(t, filepath.Join(dir, "java-"+c.id+".bin"), read, c.f, append(slices.Clone(c.inserts), c.probes...))
	checkMapped(t, filepath.Join(dir, "go-"+c.id+".bin"), c.goFilter, c.f, append(slices.Clone(c.inserts), c.probes...))

	wantCount := java.count
	if java.saturated {
		// Guava throws; the Go API documents MaxInt64 instead.
		wantCount = math.MaxInt64
	}
	assert.Equal(t, wantCount, read.ApproximateElementCount(), "approximate element count, Guava first")

	javaFpp, goFpp := math.Float64frombits(java.fppBits), read.ExpectedFPP()
	if math.Float64bits(goFpp) != java.fppBits {
		// Java's Math.pow is not always correctly rounded and Go's is, so
		// the last bit may legitimately differ; anything more is a bug.
		rel := math.Abs(goFpp-javaFpp) / math.Abs(javaFpp)
		if rel <= 1e-12 {
			t.Logf("expected FPP differs in the last bits: Guava %v (%016x), Go %v (%016x)", javaFpp, java.fppBits, goFpp, math.Float64bits(goFpp))
		} else {
			t.Errorf("expected FPP: Guava %v (%016x), Go %v (%016x)", javaFpp, java.fppBits, goFpp, math.Float64bits(goFpp))
		}
	}
}

// checkMapped opens the filter file path in place and checks that it
// answers every lookup and statistic of values as want does, and writes
// the file's bytes.
func checkMapped[T any](t *testing.T, path string, want *bloom.Filter[T], f funnel.Funnel[T], values []T) {
	t.Helper()
	m, err := mapped.Open(path, f)
	require.NoError(t, err)
	defer func() { assert.NoError(t, m.Close()) }()
	name := filepath.Base(path)
	assert.Equal(t, want.BitSize(), m.BitSize(), name)
	assert.Equal(t, want.NumHashFunctions(), m.NumHashFunctions(), name)
	assert.Equal(t, want.BitCount(), m.BitCount(), name)
	assert.Equal(t, want.ApproximateElementCount(), m.ApproximateElementCount(), name)
	assert.Equal(t, math.Float64bits(want.ExpectedFPP()), math.Float64bits(m.ExpectedFPP()), name)
	assert.Equal(t, want.MightContainMany(nil, values), m.MightContainMany(nil, values), "%s: MightContainMany", name)
	for i, v := range values {
		if m.MightContain(v) != want.MightContain(v) {
			t.Errorf("%s: MightContain of value %d: mapped %v, read %v", name, i, m.MightContain(v), want.MightContain(v))
			break
		}
	}
	file, err := os.ReadFile(path)
	require.NoError(t, err)
	var buf bytes.Buffer
	_, err = m.WriteTo(&buf)
	require.NoError(t, err)
	assert.True(t, bytes.Equal(file, buf.Bytes()), "%s: WriteTo of the file opened in place", name)
}

// describeDiff says where two serialized filters first differ, which is more
// telling than two kilobytes of hex.
func describeDiff(java, gob []byte) string {
	header := func(b []byte) string { return hex.EncodeToString(b[:min(len(b), raw.HeaderSize)]) }
	for i := range min(len(java), len(gob)) {
		if java[i] != gob[i] {
			return fmt.Sprintf("lengths %d (Guava) and %d (Go), headers %s and %s, first difference at byte %d: %02x and %02x",
				len(java), len(gob), header(java), header(gob), i, java[i], gob[i])
		}
	}
	return fmt.Sprintf("lengths %d (Guava) and %d (Go), headers %s and %s, one a prefix of the other",
		len(java), len(gob), header(java), header(gob))
}

// compareAnswers reports which of Go's answers for values differ from
// Guava's, given as a string of '0' and '1': a handful of values says more
// than two long strings of digits.
func (c *interopCase[T]) compareAnswers(t *testing.T, what, java string, values []T, goAnswers []bool) {
	t.Helper()
	if len(java) != len(goAnswers) {
		t.Errorf("%s: Guava gave %d answers for %d values", what, len(java), len(goAnswers))
		return
	}
	var examples []string
	differ := 0
	for i, got := range goAnswers {
		if got != (java[i] == '1') {
			differ++
			if len(examples) < 5 {
				examples = append(examples, fmt.Sprintf("#%d %q: Guava %t, Go %t", i, c.encode(values[i]), !got, got))
			}
		}
	}
	if differ > 0 {
		t.Errorf("%s: %d of %d differ from Guava's, e.g. %s", what, differ, len(goAnswers), strings.Join(examples, "; "))
	}
}

// valueGen makes the values of one funnel: the fixed ones are the edge cases
// every filter starts with, random ones fill it up and make the probes.
type valueGen[T any] struct {
	fixed  []T
	random func(r *rand.Rand) T
}

// interopSize is one sizing of the filters. interopSizes has a comfortably
// sized one, an overfilled one whose probes are often false positives, and
// n = 0, which Guava sizes as 1 and where its legacy k (6 for p = 0.01)
// differs from the current rule.
type interopSize struct {
	n               int64
	fpp             float64
	inserts, probes int
	label           string
}

var interopSizes = []interopSize{
	{1000, 0.01, 700, 300, "n1000"},
	{50, 0.2, 120, 300, "n50-overfilled"},
	{0, 0.01, 5, 100, "n0"},
}

func newInteropCases[T any](r *rand.Rand, javaFunnel string, f funnel.Funnel[T], encode func(T) string, gen valueGen[T]) []interopFilter {
	var out []interopFilter
	for _, size := range interopSizes {
		inserts, probes := interopValues(r, f, gen, size.inserts, size.probes)
		for _, s := range []strategy.Strategy{strategy.Murmur128Mitz32, strategy.Murmur128Mitz64} {
			out = append(out, &interopCase[T]{
				id:         fmt.Sprintf("%s-%s-%s", javaFunnel, s, size.label),
				javaFunnel: javaFunnel,
				f:          f,
				encode:     encode,
				strategy:   s,
				n:          size.n,
				fpp:        size.fpp,
				inserts:    inserts,
				probes:     probes,
			})
		}
	}
	return out
}

// interopValues returns distinct values to put and probes distinct from
// them. Distinct means distinct bytes fed to the hash, since two values that
// funnel alike (nil and an empty list) are one value to a filter.
func interopValues[T any](r *rand.Rand, f funnel.Funnel[T], gen valueGen[T], nInserts, nProbes int) (inserts, probes []T) {
	seen := map[string]bool{}
	add := func(list []T, v T) []T {
		key := string(funnel.Append(nil, f, v))
		if seen[key] {
			return list
		}
		seen[key] = true
		return append(list, v)
	}
	for _, v := range gen.fixed {
		if len(inserts) == nInserts {
			break
		}
		inserts = add(inserts, v)
	}
	for len(inserts) < nInserts {
		inserts = add(inserts, gen.random(r))
	}
	for len(probes) < nProbes {
		probes = add(probes, gen.random(r))
	}
	return inserts, probes
}

func interopFilterCases(r *rand.Rand) []interopFilter {
	hexString := func(s string) string { return hex.EncodeToString([]byte(s)) }
	texts := valueGen[string]{
		fixed:  []string{"", "a", "hello", "héllo", "中文", "\U0001F600", "a\U0001F600b", "\x00", "\U0010FFFF", "\uFFFF"},
		random: randomString,
	}
	ints := valueGen[int32]{
		fixed:  []int32{0, 1, -1, 1234, math.MinInt32, math.MaxInt32},
		random: randomInt32,
	}
	longs := valueGen[int64]{
		fixed:  []int64{0, 1, -1, 1234, math.MinInt64, math.MaxInt64},
		random: randomInt64,
	}
	var cases []interopFilter
	cases = append(cases, newInteropCases(r, "bytes", funnel.Bytes, hex.EncodeToString, valueGen[[]byte]{
		fixed: [][]byte{{}, {0}, {0xff}, []byte("0123456789abcdef"), []byte("0123456789abcdef0")},
		random: func(r *rand.Rand) []byte {
			return testkeys.Bytes(r, r.IntN(41))
		},
	})...)
	cases = append(cases, newInteropCases(r, "string", funnel.String, hexString, texts)...)
	cases = append(cases, newInteropCases(r, "unencodedChars", funnel.UnencodedChars, hexString, texts)...)
	cases = append(cases, newInteropCases(r, "int", funnel.Int32, func(v int32) string { return strconv.FormatInt(int64(v), 10) }, ints)...)
	cases = append(cases, newInteropCases(r, "long", funnel.Int64, func(v int64) string { return strconv.FormatInt(v, 10) }, longs)...)
	cases = append(cases, newInteropCases(r, "sequentialLong", funnel.Sequential(funnel.Int64), encodeLongs, valueGen[[]int64]{
		fixed: [][]int64{nil, {0}, {1, 2, 3}, {math.MinInt64, math.MaxInt64}},
		random: func(r *rand.Rand) []int64 {
			v := make([]int64, r.IntN(6))
			for i := range v {
				v[i] = randomInt64(r)
			}
			return v
		},
	})...)
	cases = append(cases, newInteropCases(r, "record", golden.RecordFunnel, encodeRecord, valueGen[golden.Record]{
		fixed: []golden.Record{
			{},
			{
				Byte: math.MinInt8, Bool: true, Short: math.MinInt16, Char: 0xd800, // a lone surrogate is a valid Java char
				Int: math.MinInt32, Long: math.MinInt64,
				FloatBits:  int32(math.Float32bits(float32(math.Copysign(0, -1)))),
				DoubleBits: int64(0x7ff8000000000123), // NaN with a payload
				String:     "中文\U0001F600", Chars: "h\u00e9llo\U0001F600", Bytes: "00ff",
			},
		},
		random: randomRecord,
	})...)
	cases = append(cases, newInteropCases(r, "unsignedLong", funnel.Uint64, func(v uint64) string { return strconv.FormatUint(v, 10) }, valueGen[uint64]{
		fixed:  []uint64{0, 1, math.MaxInt64, 1 << 63, math.MaxUint64},
		random: func(r *rand.Rand) uint64 { return uint64(randomInt64(r)) },
	})...)
	cases = append(cases, interopBoolCases()...)
	addrs := valueGen[netip.Addr]{
		fixed: []netip.Addr{
			netip.MustParseAddr("0.0.0.0"), netip.MustParseAddr("255.255.255.255"),
			netip.MustParseAddr("::ffff:1.2.3.4"), netip.MustParseAddr("1.2.3.5"),
			netip.MustParseAddr("::1.2.3.6"), // IPv4-compatible: 16 bytes in Java too
			netip.MustParseAddr("::"), netip.MustParseAddr("::1"), netip.MustParseAddr("fe80::1%1"),
			netip.MustParseAddr("2001:db8::8a2e:370:7334"), netip.MustParseAddr("ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff"),
		},
		random: testkeys.Addr,
	}
	cases = append(cases, newInteropCases(r, "addr", funnel.Addr, encodeAddr, addrs)...)
	cases = append(cases, newInteropCases(r, "addrPort", funnel.AddrPort, encodeAddrPort, valueGen[netip.AddrPort]{
		fixed: []netip.AddrPort{
			netip.MustParseAddrPort("1.2.3.4:0"), netip.MustParseAddrPort("1.2.3.4:65535"),
			netip.MustParseAddrPort("[::ffff:1.2.3.4]:443"), netip.MustParseAddrPort("[::]:0"),
			netip.MustParseAddrPort("[::1]:80"), netip.MustParseAddrPort("[fe80::1%2]:32768"),
		},
		random: func(r *rand.Rand) netip.AddrPort {
			port := uint16(r.Uint32())
			if r.IntN(2) == 0 {
				port = []uint16{0, 22, 80, 443, 8080, 32767, 32768, 65535}[r.IntN(8)]
			}
			return netip.AddrPortFrom(testkeys.Addr(r), port)
		},
	})...)
	// net.IP values of 4 bytes and of 16, IPv4-mapped or not; Java gets
	// the text of the same address, "::ffff:a.b.c.d" for a mapped one.
	ipOf := func(a netip.Addr) net.IP {
		if a.Is4() && a.As4()[3]%2 == 0 {
			return net.IP(a.AsSlice()).To16() // what net.ParseIP returns
		}
		return net.IP(a.AsSlice())
	}
	ips := valueGen[net.IP]{random: func(r *rand.Rand) net.IP { return ipOf(testkeys.Addr(r)) }}
	for _, a := range addrs.fixed {
		ips.fixed = append(ips.fixed, ipOf(a))
	}
	cases = append(cases, newInteropCases(r, "ip", funnel.IP, func(ip net.IP) string {
		a, ok := netip.AddrFromSlice(ip)
		if !ok {
			panic(fmt.Sprintf("interop IP %v is not an address", ip))
		}
		return encodeAddr(a)
	}, ips)...)
	cases = append(cases, interopScalarAndSliceCases(r)...)
	return cases
}

// interopBoolCases are the filters of funnel.Bool. Two values cannot fill
// the usual sizes, so each filter holds one of them or both, the second
// true put twice so that a put that changes nothing is compared too.
func interopBoolCases() []interopFilter {
	var out []interopFilter
	for _, s := range []strategy.Strategy{strategy.Murmur128Mitz32, strategy.Murmur128Mitz64} {
		for _, c := range []struct {
			label           string
			inserts, probes []bool
		}{
			{"true", []bool{true}, []bool{false}},
			{"false", []bool{false}, []bool{true}},
			{"both", []bool{false, true, true}, []bool{true, false}},
		} {
			out = append(out, &interopCase[bool]{
				id:         fmt.Sprintf("bool-%s-%s", s, c.label),
				javaFunnel: "bool",
				f:          funnel.Bool,
				encode: func(v bool) string {
					if v {
						return "1"
					}
					return "0"
				},
				strategy: s,
				n:        1,
				fpp:      0.01,
				inserts:  c.inserts,
				probes:   c.probes,
			})
		}
	}
	return out
}

// encodeAddr returns the text InetAddress.getByName parses in Interop.java,
// so that Java's own parsing decides what an IPv4-mapped address is. Half of
// the IPv6 addresses are written out in full, "0000:…:ffff:0102:0304" for a
// mapped one, which Java must map too.
func encodeAddr(a netip.Addr) string {
	if a.Is6() && a.As16()[15]%2 == 1 {
		return a.StringExpanded()
	}
	return a.String()
}

func encodeAddrPort(ap netip.AddrPort) string {
	return encodeAddr(ap.Addr()) + "," + strconv.Itoa(int(ap.Port()))
}

func encodeLongs(v []int64) string {
	s := make([]string, len(v))
	for i, x := range v {
		s[i] = strconv.FormatInt(x, 10)
	}
	return strings.Join(s, ",")
}

func encodeRecord(v golden.Record) string {
	b := 0
	if v.Bool {
		b = 1
	}
	return fmt.Sprintf("%d,%d,%d,%d,%d,%d,%08x,%016x,%s,%s,%s", v.Byte, b, v.Short, v.Char, v.Int, v.Long,
		uint32(v.FloatBits), uint64(v.DoubleBits), hex.EncodeToString([]byte(v.String)), hex.EncodeToString([]byte(v.Chars)), v.Bytes)
}

// interopRunes mixes ASCII with 2-, 3- and 4-byte UTF-8, the BMP's edges and
// characters outside the BMP, which are two UTF-16 units to unencodedChars.
var interopRunes = []rune("abcxyz019 -_.:/\u00e9\u00df\u20ac\u4e2d\u6587\u00fc\x00\x7f\u0080\u07ff\u0800\ufffd\uffff\ue000\U00010000\U0001F600\U0001D11E\U0010FFFF")

func randomString(r *rand.Rand) string {
	rs := make([]rune, r.IntN(13))
	for i := range rs {
		rs[i] = interopRunes[r.IntN(len(interopRunes))]
	}
	return string(rs)
}

// Small numbers as often as any: they are what real keys look like.
func randomInt32(r *rand.Rand) int32 {
	if r.IntN(2) == 0 {
		return int32(r.IntN(2001) - 1000)
	}
	return int32(r.Uint32())
}

func randomInt64(r *rand.Rand) int64 {
	if r.IntN(2) == 0 {
		return int64(r.IntN(2001) - 1000)
	}
	return int64(r.Uint64())
}

// Special floats travel as bit patterns. NaNs are quiet ones only: a
// signalling NaN may be quieted by Java's Float.intBitsToFloat, which would
// be a test artefact and not a difference between the libraries.
var (
	interopFloatBits  = []uint32{0, 0x80000000, 0x7f800000, 0xff800000, 0x7fc00000, 0x7fc00123, 0xffc00001, 1, 0x7f7fffff}
	interopDoubleBits = []uint64{0, 0x8000000000000000, 0x7ff0000000000000, 0xfff0000000000000, 0x7ff8000000000000, 0x7ff8000000000123, 0xfff8000000000001, 1, 0x7fefffffffffffff}
)

func randomRecord(r *rand.Rand) golden.Record {
	fb := math.Float32bits(float32(r.NormFloat64() * 1e3))
	if r.IntN(4) == 0 {
		fb = interopFloatBits[r.IntN(len(interopFloatBits))]
	}
	db := math.Float64bits(r.NormFloat64() * 1e6)
	if r.IntN(4) == 0 {
		db = interopDoubleBits[r.IntN(len(interopDoubleBits))]
	}
	return golden.Record{
		Byte:       int8(r.Uint32()),
		Bool:       r.IntN(2) == 1,
		Short:      int16(r.Uint32()),
		Char:       uint16(r.Uint32()),
		Int:        randomInt32(r),
		Long:       randomInt64(r),
		FloatBits:  int32(fb),
		DoubleBits: int64(db),
		String:     randomString(r),
		Chars:      randomString(r),
		Bytes:      hex.EncodeToString(testkeys.Bytes(r, r.IntN(9))),
	}
}

type sizeCase struct {
	n int64
	p float64
}

// interopSizeCases returns the (n, p) pairs to size on both sides: random
// ones, log-uniform so that every magnitude is tried and most p are ones
// where Go's math.Log and Java's Math.log may differ, and fixed ones that
// are known to be delicate.
func interopSizeCases(r *rand.Rand) []sizeCase {
	var cases []sizeCase
	for _, p := range []float64{0.01, 0.03, math.SmallestNonzeroFloat64, 0.5, 0.99} {
		for _, n := range []int64{0, 1, 2, 3, 10, 100, 1000, 1e6, 1e9, math.MaxInt32, 1e12} {
			cases = append(cases, sizeCase{n, p})
		}
	}
	cases = append(cases,
		// n where a Math.log of 0.01 1 ulp off changes numBits.
		sizeCase{144705823, 0.01}, sizeCase{40610944, 0.01}, sizeCase{58348897, 0.01},
		// (long) of a double beyond Long.MAX_VALUE saturates.
		sizeCase{math.MaxInt64, 0.5},
	)
	logMaxN := math.Log(1e12)
	logMinP, logMaxP := math.Log(1e-300), math.Log(0.999)
	for range 20000 {
		n := int64(math.Exp(r.Float64() * logMaxN))
		p := math.Exp(logMinP + r.Float64()*(logMaxP-logMinP))
		cases = append(cases, sizeCase{n, p})
	}
	return cases
}

func checkInteropSizes(t *testing.T, cases []sizeCase, java []javaSize) {
	require.Len(t, java, len(cases))
	outcomes := map[string]int{}
	failures := 0
	fail := func(format string, args ...any) {
		failures++
		if failures <= 20 {
			t.Errorf(format, args...)
		}
	}
	for i, c := range cases {
		j := java[i]
		if j.n != c.n || j.pBits != math.Float64bits(c.p) {
			t.Fatalf("sizing line %d is for n=%d p=%016x, want n=%d p=%016x", i, j.n, j.pBits, c.n, math.Float64bits(c.p))
		}
		bitSize, k, err := bloom.Size(c.n, c.p, bloom.WithLegacyHashCount())
		what := fmt.Sprintf("n=%d p=%v (%016x): Guava numBits %d k %d", c.n, c.p, math.Float64bits(c.p), j.numBits, j.k)

		var wantErr string
		switch words := (j.numBits-1)/64 + 1; {
		case j.numBits == 0:
			wantErr = "of 0 bits"
			outcomes["no bits"]++
		case words > math.MaxInt32:
			wantErr = fmt.Sprintf("of %d bits", j.numBits)
			outcomes["too many bits"]++
		case j.k > 255:
			wantErr = fmt.Sprintf("of %d bits: number of hash functions (%d)", j.numBits, j.k)
			outcomes["k > 255"]++
		default:
			outcomes["ok"]++
			if err != nil {
				fail("%s: Go says %v", what, err)
			} else if bitSize != words*64 || k != j.k {
				fail("%s (bitSize %d): Go bitSize %d k %d", what, words*64, bitSize, k)
			}
			continue
		}
		if err == nil {
			fail("%s: Go returns bitSize %d k %d, want an error containing %q", what, bitSize, k, wantErr)
		} else if !strings.Contains(err.Error(), wantErr) || !errors.Is(err, bloom.ErrInvalidArgument) {
			fail("%s: Go error %q, want ErrInvalidArgument containing %q", what, err, wantErr)
		}
	}
	if failures > 0 {
		t.Errorf("%d of %d sizings differ from Guava", failures, len(cases))
	}
	t.Logf("%d sizings: %v", len(cases), outcomes)
	// Each of Guava's outcomes must have been exercised, or a change to the
	// cases could silently stop testing one.
	for _, o := range []string{"ok", "no bits", "too many bits", "k > 255"} {
		assert.Positive(t, outcomes[o], "no sizing case ends in %q", o)
	}
}

// javaFilter is Interop.java's report on one filter.
type javaFilter struct {
	puts, probes  string // put and mightContain results, '0' or '1' each
	count         int64
	saturated     bool
	fppBits       uint64
	goEquals      bool
	goContainsAll bool
	goRest        int64
	goJSONEquals  bool
}

type javaSize struct {
	n       int64
	pBits   uint64
	numBits int64
	k       int
}

type javaReport struct {
	filters map[string]javaFilter
	sizes   []javaSize
}

func parseJavaReport(t *testing.T, out string, nFilters, nSizes int) javaReport {
	t.Helper()
	report := javaReport{filters: map[string]javaFilter{}}
	lines := strings.Split(strings.TrimRight(out, "\r\n"), "\n")
	last := strings.TrimSpace(lines[len(lines)-1])
	// The last line vouches that the report is complete.
	require.Equal(t, fmt.Sprintf("end %d %d", nFilters, nSizes), last, "Interop.java's report is incomplete")
	for _, line := range lines[:len(lines)-1] {
		w := strings.Fields(line)
		switch {
		case len(w) == 5 && w[0] == "size":
			report.sizes = append(report.sizes, javaSize{
				n:       mustParseInt(t, w[1], 64),
				pBits:   mustParseHex(t, w[2]),
				numBits: mustParseInt(t, w[3], 64),
				k:       int(mustParseInt(t, w[4], 32)),
			})
		case len(w) == 10 && w[0] == "filter":
			kv := map[string]string{}
			for _, f := range w[2:] {
				k, v, ok := strings.Cut(f, "=")
				require.True(t, ok, "bad report field %q", f)
				kv[k] = v
			}
			var jf javaFilter
			jf.puts, jf.probes = kv["puts"], kv["probes"]
			require.Equal(t, "", strings.Trim(jf.puts+jf.probes, "01"), "answers other than 0 and 1 in %q", line)
			if kv["count"] == "saturated" {
				jf.saturated = true
			} else {
				jf.count = mustParseInt(t, kv["count"], 64)
			}
			jf.fppBits = mustParseHex(t, kv["fpp"])
			jf.goEquals = mustParseBool(t, kv["goEquals"])
			jf.goContainsAll = mustParseBool(t, kv["goContainsAll"])
			jf.goRest = mustParseInt(t, kv["goRest"], 64)
			jf.goJSONEquals = mustParseBool(t, kv["goJSONEquals"])
			report.filters[w[1]] = jf
		default:
			t.Fatalf("unexpected report line from Interop.java: %q", line)
		}
	}
	return report
}

func mustParseInt(t *testing.T, s string, bitSize int) int64 {
	t.Helper()
	v, err := strconv.ParseInt(s, 10, bitSize)
	require.NoError(t, err)
	return v
}

func mustParseHex(t *testing.T, s string) uint64 {
	t.Helper()
	v, err := strconv.ParseUint(s, 16, 64)
	require.NoError(t, err)
	return v
}

func mustParseBool(t *testing.T, s string) bool {
	t.Helper()
	v, err := strconv.ParseBool(s)
	require.NoError(t, err)
	return v
}
