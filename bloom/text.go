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
// filter as a string rather than as an empty object.

// MarshalText returns the bytes [Filter.MarshalBinary] returns in standard
// base64, with padding, so that encoding/json writes f as a string. Java
// reads it with
//
//	BloomFilter.readFrom(new ByteArrayInputStream(Base64.getDecoder().decode(s)), funnel)
func (f *Filter[T]) MarshalText() ([]byte, error) {
	if err := f.usable("MarshalText"); err != nil {
		return nil, err
	}
	return f.AppendText(nil)
}

// AppendText appends the text MarshalText returns to b and returns the
// extended slice.
func (f *Filter[T]) AppendText(b []byte) ([]byte, error) {
	if err := f.usable("AppendText"); err != nil {
		return b, err
	}
	return appendBase64(b, HeaderSize+8*f.bits.WordCount(), f)
}

// UnmarshalText replaces f with the filter in text, which MarshalText or
// Java's Base64.getEncoder() wrote, as [Filter.UnmarshalBinary] replaces it
// with the decoded bytes: f keeps its funnel, so it must have been made by
// New or ReadFrom, and takes the size, hash functions and strategy of the
// filter in text. A zero Filter, such as the one encoding/json makes for a
// nil *Filter field, has no funnel: UnmarshalText returns an error wrapping
// [ErrInvalidArgument] for it. Text that is not base64 is an error wrapping
// [ErrCorrupt]. On error f is unchanged. UnmarshalText must not run
// concurrently with any other method of f.
func (f *Filter[T]) UnmarshalText(text []byte) error {
	return unmarshalText(text, f.funnel != nil, "Filter", "New or ReadFrom", f.UnmarshalBinary)
}

// MarshalText returns the bytes [Rotating.MarshalBinary] returns, the two
// generations as two Guava filters back to back, in standard base64 with
// padding, so that encoding/json writes r as a string. Java decodes it and
// calls BloomFilter.readFrom twice on the bytes.
func (r *Rotating[T]) MarshalText() ([]byte, error) {
	if r.gens.Load() == nil {
		return nil, r.zero("MarshalText")
	}
	return r.AppendText(nil)
}

// AppendText appends the text MarshalText returns to b and returns the
// extended slice.
func (r *Rotating[T]) AppendText(b []byte) ([]byte, error) {
	if r.gens.Load() == nil {
		return b, r.zero("AppendText")
	}
	return appendBase64(b, 2*(HeaderSize+8*r.words), r)
}

// UnmarshalText replaces r's generations with the two in text, which
// MarshalText wrote, as [Rotating.UnmarshalBinary] does with the decoded
// bytes: r keeps its funnel, sizing, window and clock, and the generations
// must be the size NewRotating gave r's. A zero Rotating has no funnel:
// UnmarshalText returns an error wrapping [ErrInvalidArgument] for it. Text
// that is not base64 is an error wrapping [ErrCorrupt]. On error r is
// unchanged.
func (r *Rotating[T]) UnmarshalText(text []byte) error {
	return unmarshalText(text, r.funnel != nil, "Rotating", "NewRotating or ReadRotating", r.UnmarshalBinary)
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
// UnmarshalBinary of a Filter or a Rotating, named by typ, after checking
// that it has a funnel, which only its makers give it.
func unmarshalText(text []byte, hasFunnel bool, typ, makers string, unmarshalBinary func([]byte) error) error {
	if !hasFunnel {
		return fmt.Errorf("%w: UnmarshalText into a %s with no funnel, such as the zero %s encoding/json makes for a nil *%s; "+
			"create it with %s before decoding into it", ErrInvalidArgument, typ, typ, typ, makers)
	}
	data := make([]byte, base64.StdEncoding.DecodedLen(len(text)))
	n, err := base64.StdEncoding.Decode(data, text)
	if err != nil {
		return fmt.Errorf("%w: not standard base64: %w", ErrCorrupt, err)
	}
	return unmarshalBinary(data[:n])
}
