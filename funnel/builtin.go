package funnel

import (
	"github.com/mitzbloom/mitzbloom/internal/direct"
	"github.com/mitzbloom/mitzbloom/internal/murmur3"
)

// The built-in funnels also hash a value directly, with a Sum128 method
// that returns the Murmur3-128 hash of the bytes Funnel feeds. A filter looks
// for that method once and then skips the Sink, its buffer and a call per
// primitive: most of the cost of a Put for small keys. The method is trusted
// only on the funnels that embed builtin, whose unexported isBuiltin method
// no type outside this package can have, and only through direct.Of, which
// this package sets.

func init() { direct.Of = directOf }

// directOf is direct.Of: f, or the funnel a named f wraps, if it is a
// built-in funnel with a direct hash, and nil otherwise.
func directOf(f any) any {
	if n, ok := f.(interface{ wrapped() any }); ok {
		f = n.wrapped()
	}
	if _, ok := f.(interface{ isBuiltin() }); ok {
		return f
	}
	return nil
}

// builtin marks a built-in funnel.
type builtin struct{}

// isBuiltin marks the funnel as one whose Sum128 hashes exactly the bytes
// its Funnel method feeds.
func (builtin) isBuiltin() {}

// Bytes feeds a byte slice as it is, as Guava's Funnels.byteArrayFunnel()
// does. It is ready to use.
var Bytes Funnel[[]byte] = bytesFunnel{}

// String feeds a string's bytes, as Guava's Funnels.stringFunnel(UTF_8) does
// for the same text. It is ready to use.
var String Funnel[string] = stringFunnel{}

// UnencodedChars feeds a string as UTF-16 code units, little-endian, as
// Guava's Funnels.unencodedCharsFunnel() does for the same text (see
// [Sink.PutUnencodedChars]). It is ready to use.
var UnencodedChars Funnel[string] = unencodedCharsFunnel{}

// Int32 feeds an int32 as 4 bytes, little-endian, as Guava's
// Funnels.integerFunnel() does. It is ready to use.
var Int32 Funnel[int32] = int32Funnel{}

// Int64 feeds an int64 as 8 bytes, little-endian, as Guava's
// Funnels.longFunnel() does. It is ready to use.
var Int64 Funnel[int64] = int64Funnel{}

type bytesFunnel struct{ builtin }

func (bytesFunnel) Funnel(v []byte, into Sink)      { into.PutBytes(v) }
func (bytesFunnel) String() string                  { return "funnel.Bytes" }
func (bytesFunnel) Sum128(v []byte) (h1, h2 uint64) { return murmur3.Sum128(v) }

type stringFunnel struct{ builtin }

func (stringFunnel) Funnel(v string, into Sink)      { into.PutString(v) }
func (stringFunnel) String() string                  { return "funnel.String" }
func (stringFunnel) Sum128(v string) (h1, h2 uint64) { return murmur3.SumString(v) }

// unencodedCharsFunnel has no direct hash, so it is not marked builtin: it
// is hashed from the UTF-16 code units it feeds.
type unencodedCharsFunnel struct{}

func (unencodedCharsFunnel) Funnel(v string, into Sink) { into.PutUnencodedChars(v) }
func (unencodedCharsFunnel) String() string             { return "funnel.UnencodedChars" }

type int32Funnel struct{ builtin }

func (int32Funnel) Funnel(v int32, into Sink)      { into.PutInt32(v) }
func (int32Funnel) String() string                 { return "funnel.Int32" }
func (int32Funnel) Sum128(v int32) (h1, h2 uint64) { return murmur3.Sum32(uint32(v)) }

type int64Funnel struct{ builtin }

func (int64Funnel) Funnel(v int64, into Sink)      { into.PutInt64(v) }
func (int64Funnel) String() string                 { return "funnel.Int64" }
func (int64Funnel) Sum128(v int64) (h1, h2 uint64) { return murmur3.Sum64(uint64(v)) }
