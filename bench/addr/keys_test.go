package addr

import (
	"net/netip"
	"slices"
	"testing"
)

func TestKeyDistinct(t *testing.T) {
	keys := Keys(0, Distinct+StreamLen) // the stream's addresses and the absent ones
	seen := make(map[netip.AddrPort]struct{}, len(keys))
	var v6, https, http int
	docPrefix := netip.MustParsePrefix("2001:db8::/32")
	for i, k := range keys {
		if _, dup := seen[k]; dup {
			t.Fatalf("Key(%d) = %v, a key of a smaller index", i, k)
		}
		seen[k] = struct{}{}
		switch a := k.Addr(); {
		case a.Is4():
		case a.Is6() && !a.Is4In6() && docPrefix.Contains(a):
			v6++
		default:
			t.Fatalf("Key(%d) = %v, neither IPv4 nor in %v", i, k, docPrefix)
		}
		switch p := k.Port(); {
		case p == 443:
			https++
		case p == 80:
			http++
		case p < 32768 || p >= 61000:
			t.Fatalf("Key(%d) = %v, port outside 443, 80 and [32768, 61000)", i, k)
		}
	}
	if want := len(keys) / 10; v6 != want {
		t.Errorf("%d IPv6 keys of %d, want %d", v6, len(keys), want)
	}
	n := float64(len(keys))
	if f := float64(https) / n; f < 0.59 || f > 0.61 {
		t.Errorf("port 443 on %.3f of the keys, want about 0.60", f)
	}
	if f := float64(http) / n; f < 0.14 || f > 0.16 {
		t.Errorf("port 80 on %.3f of the keys, want about 0.15", f)
	}
}

func TestZipfKeys(t *testing.T) {
	keys := ZipfKeys(StreamLen)
	if !slices.Equal(keys, ZipfKeys(StreamLen)) {
		t.Fatal("two streams differ")
	}
	index := make(map[netip.AddrPort]int, Distinct)
	for i, k := range Keys(0, Distinct) {
		index[k] = i
	}
	count := make(map[int]int)
	window := make(map[int]struct{})
	for i, k := range keys {
		idx, ok := index[k]
		if !ok {
			t.Fatalf("stream key %d, %v, is not the key of an index below %d", i, k, Distinct)
		}
		count[idx]++
		if i < int(ShortWindow/OpTime) {
			window[idx] = struct{}{}
		}
	}
	// The numbers that ZipfS's doc comment states.
	if f := float64(count[0]) / StreamLen; f < 0.07 || f > 0.08 {
		t.Errorf("the most frequent key is %.4f of the stream, want about 0.074", f)
	}
	if n := len(count); n < 205_000 || n > 225_000 {
		t.Errorf("%d distinct keys in the stream, want about 215,000", n)
	}
	if n := len(window); n < 70_000 || n > 80_000 {
		t.Errorf("%d distinct keys in the first short window, want about 75,000", n)
	}
	// Frequency falls with the index, as (1+k)^-1.01 does.
	for _, k := range []int{1, 10, 100} {
		if count[0] <= count[k] || count[k] <= count[10*k] {
			t.Errorf("counts of indexes 0, %d, %d: %d, %d, %d; want decreasing", k, 10*k, count[0], count[k], count[10*k])
		}
	}
	t.Logf("%d distinct keys; index 0 is %.4f of the stream; %d distinct in the first %v", len(count), float64(count[0])/StreamLen, len(window), ShortWindow)

	for i, k := range AbsentKeys(1 << 16) {
		if _, ok := index[k]; ok {
			t.Fatalf("absent key %d, %v, is the key of index %d", i, k, index[k])
		}
	}
}
