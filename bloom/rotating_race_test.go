package bloom

import (
	"runtime"
	"sync"
	"sync/atomic"
)

// A RotationRace races Puts into a Rotating with lookups while rotations
// drop generations, for the tests that check a value is found for a window
// whatever a rotation races with: TestRotatingPutRacesRotation here and
// TestRotatingConcurrent in package bloom_test, which is why it is
// exported.
//
// Each writer puts its own values and publishes some of them after their
// Put returned, with the rotation count read before the Put began: the
// value ends in that generation or a newer one, so while at most one more
// rotation has happened it must be found. (A count read after Put returns
// would not do: a writer preempted between Put's last check and that read
// can see rotations that legitimately dropped its value.) Readers look up
// the published values until the writers are done.
type RotationRace struct {
	Writers, Readers int
	// PerWriter is the number of values each writer puts.
	PerWriter int64
	// PublishEvery is how often a writer publishes a value: one Put in
	// every PublishEvery (every Put if 0).
	PublishEvery int64
	// Rotations returns the rotation count of the Rotating.
	Rotations func() int64
	// AfterPut, if not nil, runs in writer w after its ith Put.
	AfterPut func(w, i int64)
	// AfterLookup, if not nil, runs in a reader after its jth lookup.
	AfterLookup func(j int)
}

// Run runs the race on r and returns the number of values checked, those
// looked up while at most one rotation had happened since their Put began,
// and how many of them were not found.
func (c RotationRace) Run(r *Rotating[int64]) (checked, lost int64) {
	every := max(c.PublishEvery, 1)
	type mark struct{ v, rotations int64 }
	published := make([]atomic.Pointer[mark], c.Writers)
	var done atomic.Bool
	var nChecked, nLost atomic.Int64
	// The readers start first and the writers yield after each value they
	// publish, so that lookups run beside the Puts on a machine busy with
	// other work too, where writers left alone finish before a reader is
	// scheduled and leave nothing recent to check.
	var writing, reading, started sync.WaitGroup
	for rd := range c.Readers {
		reading.Add(1)
		started.Add(1)
		go func() {
			defer reading.Done()
			started.Done()
			for j := 0; !done.Load(); j++ {
				m := published[(rd+j)%c.Writers].Load()
				if m == nil {
					runtime.Gosched()
					continue
				}
				found := r.MightContain(m.v)
				if c.Rotations()-m.rotations <= 1 {
					nChecked.Add(1)
					if !found {
						nLost.Add(1)
					}
				}
				if c.AfterLookup != nil {
					c.AfterLookup(j)
				}
			}
		}()
	}
	started.Wait()
	for w := range int64(c.Writers) {
		writing.Add(1)
		go func() {
			defer writing.Done()
			for i := range c.PerWriter {
				v := w*c.PerWriter + i
				var before int64
				if i%every == 0 {
					before = c.Rotations()
				}
				r.Put(v)
				if i%every == 0 {
					published[w].Store(&mark{v, before})
					runtime.Gosched()
				}
				if c.AfterPut != nil {
					c.AfterPut(w, i)
				}
			}
		}()
	}
	writing.Wait()
	done.Store(true)
	reading.Wait()
	return nChecked.Load(), nLost.Load()
}
