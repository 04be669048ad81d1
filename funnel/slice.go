package funnel

import (
	"fmt"

	"github.com/mitzbloom/mitzbloom/internal/sinkbuf"
)

// Slice returns a funnel that feeds a slice so that different slices feed
// different bytes, whatever f: the number of elements as 4 bytes,
// little-endian (a Java int), then for each element in order the number of
// bytes f feeds for it, as 4 more, followed by those bytes. So ["ab" "c"],
// ["a" "bc"] and ["abc"] are three values, where [Sequential] feeds the
// same bytes for them, and nil and an empty slice are one value.
//
// Two slices feed the same bytes only if they have the same length and f
// feeds the same bytes for their elements, one by one: the stream can be
// read back, a count and then that many lengths each followed by its
// bytes, in one way only. Nor is what Slice feeds for one slice ever the
// start of what it feeds for another, so a slice needs no length in front
// of it in a key of several fields, and Slice(Slice(f)) keeps slices of
// slices apart too. The lengths are Java ints: a slice of more than
// 2³¹−1 elements, or an element of more than 2³¹−1 bytes, neither of
// which Java can hold, has its length fed modulo 2³².
//
// The Java funnel that matches Slice(funnel.String), for a List<String>, is
//
//	Funnel<List<String>> listFunnel = (list, into) -> {
//	    into.putInt(list.size());
//	    for (String s : list) {
//	        byte[] b = s.getBytes(StandardCharsets.UTF_8);
//	        into.putInt(b.length).putBytes(b);
//	    }
//	};
//
// and for elements of a fixed size it writes the size, as
// into.putInt(8).putLong(x) for each long of Slice(funnel.Int64). For any
// other element funnel, the Java side collects the bytes the element's
// Funnel feeds with a PrimitiveSink that records them, and puts their
// count and then them (docs/funnels.md has such a funnel).
//
// Slice funnels are [Equal] when their element funnels are. Hashing a
// slice feeds each element to a pooled buffer first, so with the built-in
// element funnels it allocates nothing.
func Slice[T any](f Funnel[T]) Funnel[[]T] { return slice[T]{f} }

type slice[T any] struct {
	elem Funnel[T]
}

func (s slice[T]) Funnel(v []T, into Sink) {
	into.PutInt32(int32(len(v)))
	if len(v) == 0 {
		return
	}
	// Each element is fed to a buffer first, since its length goes before
	// its bytes.
	buf := sinkbuf.Get()
	for _, e := range v {
		buf.Reset()
		s.elem.Funnel(e, buf)
		into.PutInt32(int32(buf.Len()))
		into.PutBytes(buf.Bytes())
	}
	buf.Release()
}

func (s slice[T]) equal(other Funnel[[]T]) bool {
	o, ok := other.(slice[T])
	return ok && Equal(s.elem, o.elem)
}

func (s slice[T]) String() string { return fmt.Sprintf("funnel.Slice(%v)", s.elem) }
