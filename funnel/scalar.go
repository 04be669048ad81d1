package funnel

import (
	"math"

	"github.com/mitzbloom/mitzbloom/internal/murmur3"
)

// Int feeds an int as 8 bytes, little-endian, the bytes [Int64] feeds for
// int64(v), as Guava's Funnels.longFunnel() does for the long of the same
// value. An int is fed as 8 bytes on every platform, so a filter's bits do
// not depend on the size of int. It is ready to use.
var Int Funnel[int] = intFunnel{}

// Uint feeds a uint as 8 bytes, little-endian, the bytes [Uint64] feeds for
// uint64(v), as Guava's Funnels.longFunnel() does for the long with the same
// bits (Long.parseUnsignedLong gives it). A uint is fed as 8 bytes on every
// platform, so a filter's bits do not depend on the size of uint. It is
// ready to use.
var Uint Funnel[uint] = uintFunnel{}

// Uint32 feeds a uint32 as 4 bytes, little-endian, as Guava's
// Funnels.integerFunnel() does for the int with the same bits
// (Integer.parseUnsignedInt gives it). It is ready to use.
var Uint32 Funnel[uint32] = uint32Funnel{}

// Float32 feeds the raw IEEE-754 bits of a float32 as 4 bytes,
// little-endian, as this Java funnel does:
//
//	Funnel<Float> floatFunnel = (f, into) -> into.putFloat(f);
//
// putFloat feeds Float.floatToRawIntBits, so values are told apart by their
// bits, not by ==: 0 and -0 are two values, and so are NaNs with different
// payloads, while a NaN is one value however often it is put. Guava has no
// built-in funnel for floats. Float32 is ready to use.
var Float32 Funnel[float32] = float32Funnel{}

// Float64 feeds the raw IEEE-754 bits of a float64 as 8 bytes,
// little-endian, as this Java funnel does:
//
//	Funnel<Double> doubleFunnel = (d, into) -> into.putDouble(d);
//
// putDouble feeds Double.doubleToRawLongBits, so values are told apart by
// their bits, not by ==: 0 and -0 are two values, and so are NaNs with
// different payloads. Note that Go's math.NaN() has the bits
// 0x7ff8000000000001 and Java's Double.NaN 0x7ff8000000000000: they are two
// values to a filter; math.Float64frombits(0x7ff8000000000000) is Java's.
// Guava has no built-in funnel for doubles. Float64 is ready to use.
var Float64 Funnel[float64] = float64Funnel{}

type intFunnel struct{ builtin }

func (intFunnel) Funnel(v int, into Sink)      { into.PutInt64(int64(v)) }
func (intFunnel) String() string               { return "funnel.Int" }
func (intFunnel) Sum128(v int) (h1, h2 uint64) { return murmur3.Sum64(uint64(int64(v))) }

type uintFunnel struct{ builtin }

func (uintFunnel) Funnel(v uint, into Sink)      { into.PutInt64(int64(uint64(v))) }
func (uintFunnel) String() string                { return "funnel.Uint" }
func (uintFunnel) Sum128(v uint) (h1, h2 uint64) { return murmur3.Sum64(uint64(v)) }

type uint32Funnel struct{ builtin }

func (uint32Funnel) Funnel(v uint32, into Sink)      { into.PutInt32(int32(v)) }
func (uint32Funnel) String() string                  { return "funnel.Uint32" }
func (uint32Funnel) Sum128(v uint32) (h1, h2 uint64) { return murmur3.Sum32(v) }

type float32Funnel struct{ builtin }

func (float32Funnel) Funnel(v float32, into Sink) { into.PutFloat32(v) }
func (float32Funnel) String() string              { return "funnel.Float32" }
func (float32Funnel) Sum128(v float32) (h1, h2 uint64) {
	return murmur3.Sum32(math.Float32bits(v))
}

type float64Funnel struct{ builtin }

func (float64Funnel) Funnel(v float64, into Sink) { into.PutFloat64(v) }
func (float64Funnel) String() string              { return "funnel.Float64" }
func (float64Funnel) Sum128(v float64) (h1, h2 uint64) {
	return murmur3.Sum64(math.Float64bits(v))
}
