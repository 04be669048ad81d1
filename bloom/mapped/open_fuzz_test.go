package mapped_test

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/mitzbloom/mitzbloom/bloom"
	"github.com/mitzbloom/mitzbloom/bloom/mapped"
	"github.com/mitzbloom/mitzbloom/funnel"
	"github.com/mitzbloom/mitzbloom/internal/golden"
)

// FuzzOpen writes arbitrary bytes to a file and opens it in place, seeded
// with Guava's good and bad streams and filters Guava wrote. Open must
// accept exactly the files UnmarshalBinary accepts, refuse the others with
// UnmarshalBinary's error, and answer from an accepted file as
// UnmarshalBinary's filter does: the same statistics, lookups and bytes.
func FuzzOpen(f *testing.F) {
	for _, h := range []string{
		"01", "010500000001", "0105000000010000000000000003", "01050000000100000000000000030909",
		"0205000000010000000000000003", "ff05000000010000000000000003", "0005000000010000000000000003",
		"0100000000010000000000000003", "01ff000000010000000000000003", "010500000000", "0105ffffffff",
		"0105000000020000000000000003", "070000000000", "010580000000", "01057fffffff",
		"01050000000100000000000000030105000000010000000000000003",
	} {
		f.Add(golden.MustHex(h))
	}
	if v, err := golden.Load(); err == nil {
		for _, c := range v.Filters[:8] {
			f.Add(golden.MustHex(c.SerializedHex))
		}
	}
	dir := f.TempDir()
	path := filepath.Join(dir, "f.bin")
	probes := []string{"", "a", "b", "hello", "10.0.0.1:443", "x", "y", "z"}
	f.Fuzz(func(t *testing.T, data []byte) {
		if err := os.WriteFile(path, data, 0o644); err != nil {
			t.Fatal(err)
		}
		m, err := mapped.Open(path, funnel.String)
		var want bloom.Filter[string]
		werr := want.UnmarshalBinary(data)
		if len(data) == 0 {
			if err == nil {
				t.Fatal("Open accepted an empty file")
			}
			return
		}
		if (err == nil) != (werr == nil) {
			t.Fatalf("Open: %v; UnmarshalBinary: %v", err, werr)
		}
		if err != nil {
			if pe, ok := err.(*os.PathError); !ok || pe.Err.Error() != werr.Error() {
				t.Fatalf("Open: %v; UnmarshalBinary: %v", err, werr)
			}
			return
		}
		defer m.Close()
		if m.BitSize() != want.BitSize() || m.NumHashFunctions() != want.NumHashFunctions() ||
			m.BitCount() != want.BitCount() || m.ApproximateElementCount() != want.ApproximateElementCount() {
			t.Fatalf("Open: %v; UnmarshalBinary: %v", m, &want)
		}
		got := m.MightContainMany(nil, probes)
		for i, p := range probes {
			if got[i] != want.MightContain(p) || m.MightContain(p) != got[i] {
				t.Fatalf("%q: Open's filter says %v, UnmarshalBinary's %v", p, got[i], want.MightContain(p))
			}
		}
		var out bytes.Buffer
		if _, err := m.WriteTo(&out); err != nil || !bytes.Equal(out.Bytes(), data) {
			t.Fatalf("WriteTo: %v, %x of %x", err, out.Bytes(), data)
		}
		if err := m.Close(); err != nil {
			t.Fatal(err)
		}
	})
}
