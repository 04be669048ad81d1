package bloomprom

import (
	"math/bits"
	"runtime"
	"sync/atomic"
	"unsafe"
)

// A Lookups counts the answers of a filter's lookups, maybe or no, for
// [Collector.Register] to report as mitzbloom_filter_lookups_total: the
// rate of "maybe" answers, which false positives raise as a filter fills.
// Its MightContain and MightContainMany are the filter's, counted; put
// values in the filter itself.
//
// A Lookups is safe for concurrent use by multiple goroutines, and counting
// costs a few nanoseconds a lookup, in a cache line that the goroutine
// picks by where its stack is, so that goroutines on other cores write
// other lines (two goroutines pick the same one with a probability of one
// in 4·GOMAXPROCS); a scrape adds the lines up.
type Lookups[T any] struct {
	f interface {
		MightContain(T) bool
		MightContainMany(dst []bool, vs []T) []bool
	}
	filter any // f as given, for Register
	c      *stripes
}

// CountLookups returns a Lookups of f, a *bloom.Filter, *bloom.Rotating,
// *bloom.Scalable or *redisfilter.Hybrid of values of type T. It holds
// its counts in 128 bytes for each of 4 stripes per processor that Go may
// use at once (GOMAXPROCS), 8 stripes at least, rounded up to a power of 2.
func CountLookups[T any](f interface {
	MightContain(T) bool
	MightContainMany(dst []bool, vs []T) []bool
}) *Lookups[T] {
	return &Lookups[T]{f: f, filter: f, c: newStripes(runtime.GOMAXPROCS(0))}
}

// MightContain returns what the filter's MightContain returns for v, and
// counts the answer.
func (l *Lookups[T]) MightContain(v T) bool {
	found := l.f.MightContain(v)
	l.c.add(found)
	return found
}

// MightContainMany returns what the filter's MightContainMany returns, and
// counts the answers it appended, with two atomic adds for the batch.
func (l *Lookups[T]) MightContainMany(dst []bool, vs []T) []bool {
	n := len(dst)
	dst = l.f.MightContainMany(dst, vs)
	var maybe int64
	for _, found := range dst[n:] {
		if found {
			maybe++
		}
	}
	l.c.addMany(maybe, int64(len(dst)-n)-maybe)
	return dst
}

// Counts returns the number of lookups that answered maybe, and of those
// that answered no, so far. Lookups that run meanwhile may or may not be
// counted.
func (l *Lookups[T]) Counts() (maybe, no int64) { return l.c.sum() }

// lookupCounter is a Lookups of any type, for Register.
type lookupCounter interface {
	counts() *stripes
	unwrap() any
}

func (l *Lookups[T]) counts() *stripes { return l.c }
func (l *Lookups[T]) unwrap() any      { return l.filter }

// stripes are counters that many goroutines add to at once without
// writing the same cache line: a goroutine adds to the stripe that the
// address of its stack picks, and a reader adds the stripes up. Two
// goroutines pick the same stripe with a probability of one in the number
// of stripes, 4 per processor: such a pair, if it runs at once on two
// cores, writes one line, as goroutines counting in one counter all do.
//
// The stack is what tells goroutines apart at no cost: Go has no
// processor-local storage, and the alternatives measured slower on one
// processor (BenchmarkStripeChoice): a random stripe each time, which
// math/rand/v2 draws in about 10 ns, and a token from a sync.Pool, whose
// Get and Put take about as long.
type stripes struct {
	shift uint // the stripe of an address a is its hash's top bits: hash(a) >> shift
	s     []stripe
}

// stripe is one goroutine's share of the counts, alone in 128 bytes: two
// cache lines, since some processors (Intel's, with the adjacent-line
// prefetcher) move lines in pairs.
type stripe struct {
	maybe, no atomic.Int64
	_         [128 - 16]byte
}

// stackShift drops the bits of an address that differ within one
// goroutine's stack, whose smallest size is 2 KiB, so that a goroutine
// keeps its stripe while its frames come and go, and two goroutines,
// whose stacks are apart, likely pick two.
const stackShift = 11

func newStripes(procs int) *stripes {
	n := max(8, 1<<bits.Len(uint(procs*4-1))) // a power of 2, 4 per processor
	return &stripes{shift: uint(64 - bits.TrailingZeros(uint(n))), s: make([]stripe, n)}
}

// mine returns the stripe of the calling goroutine.
func (s *stripes) mine() *stripe {
	var here byte
	// Fibonacci hashing of the address: its top bits are well mixed.
	// The pointer becomes a number, so here stays on the stack.
	a := uint64(uintptr(unsafe.Pointer(&here))) >> stackShift
	return &s.s[(a*0x9E3779B97F4A7C15)>>s.shift&uint64(len(s.s)-1)]
}

// add counts one answer.
func (s *stripes) add(found bool) {
	st := s.mine()
	if found {
		st.maybe.Add(1)
	} else {
		st.no.Add(1)
	}
}

// addMany counts maybe and no answers.
func (s *stripes) addMany(maybe, no int64) {
	st := s.mine()
	if maybe > 0 {
		st.maybe.Add(maybe)
	}
	if no > 0 {
		st.no.Add(no)
	}
}

// sum returns the counts of all the stripes.
func (s *stripes) sum() (maybe, no int64) {
	for i := range s.s {
		maybe += s.s[i].maybe.Load()
		no += s.s[i].no.Load()
	}
	return maybe, no
}
