package addr

import (
	"net/netip"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mitzbloom/mitzbloom/bloom"
	"github.com/mitzbloom/mitzbloom/bloom/bloomtest"
	"github.com/mitzbloom/mitzbloom/funnel"
)

// The benchmarks share the keys, made once per process, and report, besides
// ns/op and allocations, B/key (see BytesPerKey), new/op (the share of keys
// a Recorder called new) and found/op (the share of probes MightContain
// found).
var (
	streamKeys   = sync.OnceValue(func() []netip.AddrPort { return ZipfKeys(StreamLen) })
	absentKeys   = sync.OnceValue(func() []netip.AddrPort { return AbsentKeys(StreamLen) })
	distinctKeys = sync.OnceValue(func() []netip.AddrPort { return Keys(0, Distinct) })
)

var (
	bytesPerKeyMu   sync.Mutex
	bytesPerKeyMemo = map[Impl]float64{}
)

// bytesPerKey is BytesPerKey(impl, Distinct), measured once per process:
// filling a map of a million keys takes a second.
func bytesPerKey(b *testing.B, impl Impl) float64 {
	bytesPerKeyMu.Lock()
	defer bytesPerKeyMu.Unlock()
	v, ok := bytesPerKeyMemo[impl]
	if !ok {
		var err error
		if v, err = BytesPerKey(impl, Distinct); err != nil {
			b.Fatal(err)
		}
		bytesPerKeyMemo[impl] = v
	}
	return v
}

// windows are the windows BenchmarkAddrSeen runs, each with the recorders
// that answer correctly in it: a Filter never forgets, so it takes part only
// where nothing is forgotten.
var windows = []struct {
	name   string
	window time.Duration
	impls  []Impl
}{
	{"long", LongWindow, Impls},
	{"short", ShortWindow, []Impl{Rotating, MapSweep, SyncMap}},
}

// BenchmarkAddrSeen records the stream from one goroutine in each
// recorder, in its steady state (see Stream.Warm), as sub-benchmarks named
// "window=long/impl=rotating". With the long window every key has been seen
// and nothing is forgotten; with the short one the Rotating rotates, the
// maps sweep, and about one key in five is new. Rotations and sweeps, and
// the allocations of new generations and new entries, are timed with the
// keys.
func BenchmarkAddrSeen(b *testing.B) { benchmarkSeen(b, false) }

// BenchmarkAddrSeenParallel is BenchmarkAddrSeen from all Ps at once, on
// one shared recorder. The map is behind a sync.Mutex, taken once per key;
// the others take no lock.
func BenchmarkAddrSeenParallel(b *testing.B) { benchmarkSeen(b, true) }

func benchmarkSeen(b *testing.B, parallel bool) {
	for _, w := range windows {
		for _, impl := range w.impls {
			b.Run("window="+w.name+"/impl="+string(impl), func(b *testing.B) {
				perKey := bytesPerKey(b, impl)
				s := warmStream(b, impl, w.window, parallel)
				b.ReportAllocs()
				var fresh int64
				if parallel {
					var goroutines, total atomic.Int64
					b.ResetTimer()
					b.RunParallel(func(pb *testing.PB) {
						// Goroutines start far apart in the stream, at
						// multiples of the golden ratio of its length.
						c := s.Cursor(int(uint64(goroutines.Add(1)) * 0x9e3779b97f4a7c15 >> 44))
						n := int64(0)
						for pb.Next() {
							if c.Next() {
								n++
							}
						}
						total.Add(n)
					})
					b.StopTimer()
					fresh = total.Load()
				} else {
					c := s.Cursor(0)
					for b.Loop() {
						if c.Next() {
							fresh++
						}
					}
				}
				b.ReportMetric(float64(fresh)/float64(b.N), "new/op")
				b.ReportMetric(perKey, "B/key")
			})
		}
	}
}

// warmStream returns the stream of a new recorder, warmed up.
func warmStream(b *testing.B, impl Impl, window time.Duration, shared bool) *Stream {
	rec, err := New(impl, Distinct, window, shared)
	if err != nil {
		b.Fatal(err)
	}
	s, err := NewStream(rec, streamKeys())
	if err != nil {
		b.Fatal(err)
	}
	s.Warm(window)
	return s
}

// warmFilter returns a Filter that holds the stream's keys.
func warmFilter(b *testing.B) *bloom.Filter[netip.AddrPort] {
	return warmStream(b, Filter, LongWindow, false).rec.(filterRecorder).f
}

// warmRotating returns a Rotating that holds the stream's keys in both
// generations, with a window that does not end.
func warmRotating(b *testing.B) *bloom.Rotating[netip.AddrPort] {
	r := warmStream(b, Rotating, LongWindow, false).rec.(*rotatingRecorder).r
	if st := r.Stats(); st.Rotations != 1 || st.EarlyRotations != 0 {
		b.Fatalf("warm Rotating has rotated %d times, %d early; want once, on time", st.Rotations, st.EarlyRotations)
	}
	return r
}

// BenchmarkAddrPut compares Rotating.Put with Filter.Put on the same keys,
// in filters sized alike. The calls are direct, not through a Recorder.
//
// keys=stream puts the stream into filters that hold it already (see
// warmFilter and warmRotating): every Put finds its bits set, and the Rotating's finds them
// in its current generation.
//
// keys=new puts distinct keys, each once, into filters that hold none of
// them: every Put sets bits, and the Rotating's also looks the key up in its
// previous generation, which holds another half million keys. Every half
// million Puts the filters are made anew, with the timer stopped; a garbage
// collection before that lets the new filters reuse the pages of the old
// ones, already touched, so that no Put waits for the kernel to fault in a
// page (which, measured with getrusage, otherwise happened about 300 times
// per new filter).
func BenchmarkAddrPut(b *testing.B) {
	b.Run("keys=stream/impl=rotating", func(b *testing.B) {
		r := warmRotating(b)
		keys := streamKeys()
		b.ReportAllocs()
		i := 0
		for b.Loop() {
			r.Put(keys[i])
			i = (i + 1) & (len(keys) - 1)
		}
	})
	b.Run("keys=stream/impl=filter", func(b *testing.B) {
		f := warmFilter(b)
		keys := streamKeys()
		b.ReportAllocs()
		i := 0
		for b.Loop() {
			f.Put(keys[i])
			i = (i + 1) & (len(keys) - 1)
		}
	})
	old, fresh := distinctKeys()[:Distinct/2], distinctKeys()[Distinct/2:]
	b.Run("keys=new/impl=rotating", func(b *testing.B) {
		var r *bloom.Rotating[netip.AddrPort]
		reset := func() {
			r = nil
			runtime.GC()
			clock := bloomtest.NewClock(Epoch)
			var err error
			if r, err = bloom.NewRotating(funnel.AddrPort, Distinct, FPP, LongWindow, bloom.WithClock(clock)); err != nil {
				b.Fatal(err)
			}
			for _, k := range old {
				r.Put(k)
			}
			clock.Advance(LongWindow)
		}
		reset() // and again in the loop, which then reuses these pages
		b.ReportAllocs()
		i := len(fresh)
		for b.Loop() {
			if i == len(fresh) {
				b.StopTimer()
				reset()
				b.StartTimer()
				i = 0
			}
			r.Put(fresh[i])
			i++
		}
	})
	b.Run("keys=new/impl=filter", func(b *testing.B) {
		var f *bloom.Filter[netip.AddrPort]
		reset := func() {
			f = nil
			runtime.GC()
			var err error
			if f, err = bloom.New(funnel.AddrPort, Distinct, FPP); err != nil {
				b.Fatal(err)
			}
		}
		reset()
		for _, k := range fresh {
			f.Put(k) // so that the pages of the first filter have been touched
		}
		b.ReportAllocs()
		i := len(fresh)
		for b.Loop() {
			if i == len(fresh) {
				b.StopTimer()
				reset()
				b.StartTimer()
				i = 0
			}
			f.Put(fresh[i])
			i++
		}
	})
}

// BenchmarkAddrMightContain compares Rotating.MightContain with
// Filter.MightContain on filters that hold the stream (see warmFilter and
// warmRotating).
// keys=stream asks about the stream, which both find at once, the Rotating
// in its current generation; keys=absent asks about addresses never put,
// which the Rotating looks for in both generations. found/op is the share
// found: 1 for the stream, the false-positive rate for absent keys.
func BenchmarkAddrMightContain(b *testing.B) {
	for _, keys := range []struct {
		name string
		keys func() []netip.AddrPort
	}{{"stream", streamKeys}, {"absent", absentKeys}} {
		b.Run("keys="+keys.name+"/impl=rotating", func(b *testing.B) {
			r := warmRotating(b)
			probes := keys.keys()
			b.ReportAllocs()
			i, found := 0, 0
			for b.Loop() {
				if r.MightContain(probes[i]) {
					found++
				}
				i = (i + 1) & (len(probes) - 1)
			}
			b.ReportMetric(float64(found)/float64(b.N), "found/op")
		})
		b.Run("keys="+keys.name+"/impl=filter", func(b *testing.B) {
			f := warmFilter(b)
			probes := keys.keys()
			b.ReportAllocs()
			i, found := 0, 0
			for b.Loop() {
				if f.MightContain(probes[i]) {
					found++
				}
				i = (i + 1) & (len(probes) - 1)
			}
			b.ReportMetric(float64(found)/float64(b.N), "found/op")
		})
	}
}
