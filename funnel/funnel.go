// Package funnel turns Go values into the byte streams that Guava's
// BloomFilter hashes.
//
// A [Funnel] decomposes a value into primitives and feeds them to a [Sink],
// as a Guava Funnel feeds a PrimitiveSink. Each Sink method writes exactly the
// bytes its Guava counterpart writes (little-endian primitives, raw IEEE-754
// bits, UTF-8 or UTF-16 code units), even where another encoding would be
// cheaper: byte-exact encodings are the point, because a Java Funnel and a Go
// Funnel that feed the same primitives in the same order produce the same
// hash, and so the same filter. The README has a table of the Java funnel that
// matches each Go funnel.
//
// The hash depends only on the concatenated bytes, not on how they were split
// between calls, which is also why fields of variable length need a length or
// a tag in front of them when a key has more than one: without it, ("ab","c")
// and ("a","bc") feed the same bytes. [Slice] puts the lengths in for the
// elements of a slice; [Sequential], Guava's sequentialFunnel, does not.
//
// A filter hashes what a funnel feeds with Murmur3-128 (seed 0), as Guava's
// Hashing.murmur3_128() does, and its strategy maps the hash to bit indexes
// (package strategy). The built-in funnels hash a value directly, without a
// Sink, which makes them the fastest.
//
// Filters combine only when their funnels are [Equal]. The built-in funnels are equal to themselves
// everywhere; a funnel made from a function gets an identity that survives
// restarts and other processes from [Named].
package funnel

import (
	"reflect"

	"github.com/mitzbloom/mitzbloom/internal/sinkbuf"
	"unsafe"
)

// A Funnel feeds the primitives that make up a value of type T into a Sink.
//
// A filter calls its Funnel from every goroutine that calls Put or
// MightContain, so a Funnel must be safe for concurrent use; the built-in
// funnels are stateless. A Funnel must feed the same bytes for equal values
// every time, or a filter will report false negatives.
type Funnel[T any] interface {
	Funnel(v T, into Sink)
}

// Func adapts an ordinary function to a Funnel.
//
// A Func funnel is equal (see [Equal]) only to the same function value: the
// same top-level function, or the same closure value. Closures made by two
// calls are two values, even of the same code with equal captured
// variables, so filters built with them never combine. To make funnels
// built separately, or in different processes, equal, name them with
// [Named].
type Func[T any] func(v T, into Sink)

// Funnel calls fn(v, into).
func (fn Func[T]) Funnel(v T, into Sink) { fn(v, into) }

// Equal reports whether a and b are the same funnel, the Go counterpart of
// Guava's Funnel.equals, which filters check before they combine.
//
// Funnels made by [Named] are equal when their names are. Built-in funnels
// equal only themselves; [Sequential] and [Slice] funnels are equal when
// their element funnels are. Func funnels, and any other funnel whose type is a function
// type, are equal when they are the same function value: the same top-level
// function or the same closure value, never two closures however alike. Any
// other funnels are equal when they have the same type and are equal
// comparable values. Funnels that cannot be compared are not equal.
func Equal[T any](a, b Funnel[T]) bool {
	if a == nil || b == nil {
		return a == nil && b == nil
	}
	va, vb := reflect.ValueOf(a), reflect.ValueOf(b)
	if va.Type() != vb.Type() {
		return false
	}
	if e, ok := a.(interface{ equal(Funnel[T]) bool }); ok {
		return e.equal(b)
	}
	if va.Kind() == reflect.Func {
		return funcValue(va) == funcValue(vb)
	}
	// Comparable looks inside interface fields, so == below cannot panic on
	// a struct that holds, say, a func.
	return va.Comparable() && vb.Comparable() && va.Equal(vb)
}

// funcValue returns the pointer a func value is made of: a closure's own
// record of its code and captured variables, allocated when the closure is
// made, or a top-level function's static one. Value.Pointer returns the
// code pointer instead, which closures of one literal share whatever they
// captured, and which inlining can duplicate.
func funcValue(v reflect.Value) unsafe.Pointer {
	p := reflect.New(v.Type())
	p.Elem().Set(v)
	return *(*unsafe.Pointer)(p.UnsafePointer())
}

// Append appends to dst the bytes f feeds for v, the stream a filter hashes,
// and returns the extended slice. It shows what a Funnel feeds, for
// instance to compare it with what a Java Funnel puts into a PrimitiveSink.
func Append[T any](dst []byte, f Funnel[T], v T) []byte {
	buf := sinkbuf.New(dst)
	f.Funnel(v, &buf)
	return buf.Bytes()
}
