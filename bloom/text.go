package bloom

import (
	"encoding/base64"
	"fmt"
	"io"
	"slices"
)

// The text form of a filter is its binary form, Guava's writeTo format, in
// standard base64 (RFC 4648 §4, with padding): a JSON string that a Java
// service decodes with java.util.Base64.getDecoder() and reads with
// BloomFilter.readFrom. Encoders that look for encoding.TextMarshaler
// (encoding/json, encoding/xml and most YAML and TOML packages) then write a
// filter of any of the three types as a string rather than as an empty
// object.

// MarshalText returns the bytes [Filter.MarshalBinary] returns in standard
// base64, with padding, so that encoding/json writes f as a string. Java
// reads it with
//
//	BloomFilter.readFrom(new ByteArrayInputStream(Base64.getDecoder().decode(s)), funnel)
func (f *Filter[T]) MarshalText() ([]byte, error) {
	if err := f.usable("MarshalText"); err != nil {
		return nil, err
	}
	return appendBase64(nil, headerSize+8*f.bits.WordCount(), f)
}

// UnmarshalText replaces f with the filter in text, which MarshalText or
// Java's Base64.getEncoder() wrote, as [Filter.UnmarshalBinary] replaces it
// with the decoded bytes: f takes the size, hash functions and strategy of
// the filter in text, and keeps its funnel. A zero Filter, such as
// encoding/json makes for a nil *Filter or a map value, takes the default
// funnel of T (see the package documentation); for a T without one,
// UnmarshalText returns an error wrapping [ErrInvalidArgument] that says to
// make the filter first. Text that is not base64 is an error wrapping
// [ErrCorrupt]. On error f is unchanged. UnmarshalText must not run
// concurrently with any other method of f.
func (f *Filter[T]) UnmarshalText(text []byte) error {
	if _, err := funnelOrDefault(f.funnel, "Filter", "New or ReadFrom"); err != nil {
		return err
	}
	return unmarshalText(text, f.UnmarshalBinary)
}

// MarshalText returns the bytes [Rotating.MarshalBinary] returns, the two
// generations as two Guava filters back to back, in standard base64 with
// padding, so that encoding/json writes r as a string. Java decodes it and
// calls BloomFilter.readFrom twice on the bytes.
func (r *Rotating[T]) MarshalText() ([]byte, error) {
	g := r.gens.Load()
	if g == nil {
		return nil, r.zero("MarshalText")
	}
	return appendBase64(nil, g.size(), r)
}

// UnmarshalText replaces r's generations with the two in text, which
// MarshalText wrote, as [Rotating.UnmarshalBinary] does with the decoded
// bytes, which says what a zero Rotating becomes. Text that is not base64
// is an error wrapping [ErrCorrupt]. On error r is unchanged.
func (r *Rotating[T]) UnmarshalText(text []byte) error {
	if _, err := funnelOrDefault(r.funnel, "Rotating", "NewRotating or ReadRotating"); err != nil {
		return err
	}
	return unmarshalText(text, r.UnmarshalBinary)
}

// MarshalText returns the bytes [Scalable.MarshalBinary] returns, the
// stages as Guava filters back to back, in standard base64 with padding, so
// that encoding/json writes s as a string. Java decodes it and reads the
// stages from the bytes as [Scalable.WriteTo] shows.
func (s *Scalable[T]) MarshalText() ([]byte, error) {
	l := s.stages.Load()
	if l == nil {
		return nil, s.zero("MarshalText")
	}
	return appendBase64(nil, l.size(), s)
}

// UnmarshalText replaces s's stages with those in text, which MarshalText
// wrote, as [Scalable.UnmarshalBinary] does with the decoded bytes, which
// says what a zero Scalable becomes. Text that is not base64 is an error
// wrapping [ErrCorrupt]. On error s is unchanged.
func (s *Scalable[T]) UnmarshalText(text []byte) error {
	if _, err := funnelOrDefault(s.funnel, "Scalable", "NewScalable or ReadScalable"); err != nil {
		return err
	}
	return unmarshalText(text, s.UnmarshalBinary)
}

// appendBase64 appends to b, in standard base64, the size bytes that w
// writes, encoding them as w writes them rather than from a copy of them
// all.
func appendBase64(b []byte, size int, w io.WriterTo) ([]byte, error) {
	out := &appender{b: slices.Grow(b, base64.StdEncoding.EncodedLen(size))}
	enc := base64.NewEncoder(base64.StdEncoding, out)
	if _, err := w.WriteTo(enc); err != nil {
		return b, err
	}
	if err := enc.Close(); err != nil {
		return b, err
	}
	return out.b, nil
}

// An appender is an io.Writer that appends to b.
type appender struct{ b []byte }

func (a *appender) Write(p []byte) (int, error) {
	a.b = append(a.b, p...)
	return len(p), nil
}

// unmarshalText decodes the base64 of text and passes the bytes to the
// UnmarshalBinary of a Filter, a Rotating or a Scalable.
func unmarshalText(text []byte, unmarshalBinary func([]byte) error) error {
	data := make([]byte, base64.StdEncoding.DecodedLen(len(text)))
	n, err := base64.StdEncoding.Decode(data, text)
	if err != nil {
		return fmt.Errorf("%w: not standard base64: %w", ErrCorrupt, err)
	}
	return unmarshalBinary(data[:n])
}
