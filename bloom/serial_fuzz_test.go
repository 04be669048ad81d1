package bloom_test

import (
	"bytes"
	"encoding/binary"
	"errors"
	"io"
	"math"
	"testing"

	"github.com/mitzbloom/mitzbloom/bloom"
	"github.com/mitzbloom/mitzbloom/funnel"
	"github.com/mitzbloom/mitzbloom/internal/golden"
	"github.com/mitzbloom/mitzbloom/strategy"
)

// FuzzReadFrom feeds arbitrary streams to ReadFrom, seeded with Guava's good
// and bad streams. Whatever it accepts must re-serialize to exactly the bytes
// it consumed; whatever it rejects must be rejected with one of the
// documented errors, and UnmarshalBinary must agree.
func FuzzReadFrom(f *testing.F) {
	for _, h := range []string{
		"", "01", "010500000001", "0105000000010000000000000003", "01050000000100000000000000030909",
		"0205000000010000000000000003", "ff05000000010000000000000003", "0005000000010000000000000003",
		"0100000000010000000000000003", "01ff000000010000000000000003", "010500000000", "0105ffffffff",
		"0105000000020000000000000003", "070000000000", "010580000000", "01057fffffff",
	} {
		f.Add(golden.MustHex(h))
	}
	if v, err := golden.Load(); err == nil {
		for _, c := range v.Filters[:8] {
			f.Add(golden.MustHex(c.SerializedHex))
		}
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		r := bytes.NewReader(data)
		filter, err := bloom.ReadFrom(r, funnel.String)
		unmarshalled := mustNew(t, funnel.String, 1, 0.5)
		uerr := unmarshalled.UnmarshalBinary(data)
		if err != nil {
			if filter != nil {
				t.Fatalf("ReadFrom returned a filter and %v", err)
			}
			// On a 32-bit platform a filter over 2 GiB is too large.
			tooLarge := len(data) >= 6 && int64(int32(binary.BigEndian.Uint32(data[2:]))) > math.MaxInt/8
			if !errors.Is(err, bloom.ErrCorrupt) && !(len(data) == 0 && err == io.EOF) && !(tooLarge && errors.Is(err, bloom.ErrTooLarge)) {
				t.Fatalf("ReadFrom(%x): undocumented error %v", data, err)
			}
			if uerr == nil {
				t.Fatalf("UnmarshalBinary accepted what ReadFrom rejected (%v)", err)
			}
			return
		}
		consumed := len(data) - r.Len()
		if want := 6 + int(filter.BitSize()/8); consumed != want {
			t.Fatalf("consumed %d bytes of a %d-byte filter", consumed, want)
		}
		out, err := filter.MarshalBinary()
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(out, data[:consumed]) {
			t.Fatalf("re-serialized %x, read %x", out, data[:consumed])
		}
		if (uerr == nil) != (consumed == len(data)) {
			t.Fatalf("UnmarshalBinary of %d bytes holding a %d-byte filter: %v", len(data), consumed, uerr)
		}
		if uerr == nil && !unmarshalled.Equal(filter) {
			t.Fatal("UnmarshalBinary and ReadFrom disagree")
		}
		// A filter read from anywhere is usable.
		filter.Put("x")
		if !filter.MightContain("x") {
			t.Fatal("false negative after Put")
		}
		_ = filter.ApproximateElementCount()
		_ = filter.ExpectedFPP()
	})
}

// FuzzRoundTrip builds filters of arbitrary sizes from arbitrary values,
// writes and reads them back, and checks that nothing changed: no false
// negatives, equal filters, and that New and Size agree, including on errors.
func FuzzRoundTrip(f *testing.F) {
	f.Add(int64(1000), 0.01, false, []byte("a\x00bc\x00\x00d"))
	f.Add(int64(0), 0.5, true, []byte{})
	f.Add(int64(3), 0.2, true, []byte("\xff\xfe\x00x"))
	f.Add(int64(-1), 0.01, false, []byte("x"))
	f.Add(int64(1), math.SmallestNonzeroFloat64, false, []byte("x"))
	f.Fuzz(func(t *testing.T, n int64, p float64, mitz32 bool, values []byte) {
		s := strategy.Murmur128Mitz64
		if mitz32 {
			s = strategy.Murmur128Mitz32
		}
		opts := []bloom.Option{bloom.WithStrategy(s)}
		bits, k, serr := bloom.Size(n, p, opts...)
		if serr == nil && bits > 1<<22 {
			t.Skip("larger than this fuzzer allocates")
		}
		filter, err := bloom.New(funnel.String, n, p, opts...)
		if (err == nil) != (serr == nil) || (err != nil && err.Error() != serr.Error()) {
			t.Fatalf("New says %v, Size says %v", err, serr)
		}
		if err != nil {
			if !errors.Is(err, bloom.ErrInvalidArgument) {
				t.Fatalf("undocumented error %v", err)
			}
			return
		}
		if filter.BitSize() != bits || filter.NumHashFunctions() != k {
			t.Fatalf("New built %d bits, k=%d; Size said %d, %d", filter.BitSize(), filter.NumHashFunctions(), bits, k)
		}
		keys := bytes.Split(values, []byte{0})
		for _, key := range keys {
			filter.Put(string(key))
		}
		var buf bytes.Buffer
		if _, err := filter.WriteTo(&buf); err != nil {
			t.Fatal(err)
		}
		back, err := bloom.ReadFrom(&buf, funnel.String)
		if err != nil {
			t.Fatal(err)
		}
		if !back.Equal(filter) {
			t.Fatal("read back a different filter")
		}
		for _, key := range keys {
			if !back.MightContain(string(key)) {
				t.Fatalf("false negative for %q", key)
			}
		}
	})
}
