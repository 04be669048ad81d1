package bloom

import (
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mitzbloom/mitzbloom/funnel"
	"github.com/mitzbloom/mitzbloom/internal/race"
)

// TestRotatingPutAfterRotations holds a Put between its load of the
// generations and the setting of its bits while two rotations drop the
// generation it loaded: the value must still be found afterwards.
func TestRotatingPutAfterRotations(t *testing.T) {
	const w = time.Minute
	clock := NewManualClock(time.Time{})
	r, err := NewRotating(funnel.Int64, 1000, 0.01, w, WithClock(clock))
	if err != nil {
		t.Fatal(err)
	}
	loaded := r.gens.Load().cur
	hash := r.hash
	hashing, resume := make(chan struct{}), make(chan struct{})
	// Put hashes after loading the generations, so holding the hash holds
	// Put in between.
	r.hash = hasherFunc[int64](func(v int64) (uint64, uint64) {
		close(hashing)
		<-resume
		return hash.Sum128(v)
	})
	isNew := make(chan bool)
	go func() { isNew <- r.Put(42) }()
	<-hashing
	clock.Advance(2 * w)
	close(resume)
	if !<-isNew {
		t.Error("Put(42) = false, want true")
	}
	r.hash = hash
	h1, h2 := hash.Sum128(42)
	if !loaded.has(h1, h2) {
		t.Fatal("Put did not set 42's bits in the generation it loaded first; the test no longer holds Put where it means to")
	}
	if !r.MightContain(42) {
		t.Error("42 is lost: its bits went into a generation that two rotations had dropped")
	}
	if got := r.Stats().Current.Inserts; got != 1 {
		t.Errorf("current generation has %d inserts, want 1", got)
	}
}

// TestRotatingPutRacesRotation puts and looks up from many goroutines while
// generations of 64 values turn over every few microseconds. Each value is
// published with the rotation count read before its Put began: the Put ends
// in that generation or a newer one, so while at most one more rotation has
// happened the value must be found. (A count read after Put returns would
// not do: a writer preempted between Put's last check and that read can see
// rotations that legitimately dropped its value. The race of a Put with two
// rotations is pinned down by the deterministic test above.)
func TestRotatingPutRacesRotation(t *testing.T) {
	const writers, readers = 8, 2
	// More threads than cores: the kernel then preempts writers at any
	// instruction, not only where the Go scheduler would.
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(writers + readers))
	perWriter := int64(150000)
	if testing.Short() || race.Enabled {
		perWriter = 25000
	}
	r, err := NewRotating(funnel.Int64, 64, 0.01, time.Hour, WithClock(NewManualClock(time.Time{})))
	if err != nil {
		t.Fatal(err)
	}
	rotations := func() int64 { return r.gens.Load().rotations }

	type mark struct{ v, rotations int64 }
	var published [writers]atomic.Pointer[mark]
	var writing, reading sync.WaitGroup
	for w := range int64(writers) {
		writing.Add(1)
		go func() {
			defer writing.Done()
			for i := range perWriter {
				v := w*perWriter + i
				before := rotations()
				r.Put(v)
				published[w].Store(&mark{v, before})
			}
		}()
	}
	var done atomic.Bool
	var checked, lost atomic.Int64
	for rd := range readers {
		reading.Add(1)
		go func() {
			defer reading.Done()
			for j := 0; !done.Load(); j++ {
				m := published[(rd+j)%writers].Load()
				if m == nil {
					continue
				}
				found := r.MightContain(m.v)
				if rotations()-m.rotations <= 1 {
					checked.Add(1)
					if !found {
						lost.Add(1)
					}
				}
			}
		}()
	}
	writing.Wait()
	done.Store(true)
	reading.Wait()
	t.Logf("%d rotations, %d values checked", rotations(), checked.Load())
	if lost.Load() != 0 {
		t.Errorf("%d values put within the last rotation were not found", lost.Load())
	}
	if checked.Load() < 1000 {
		t.Errorf("only %d checks", checked.Load())
	}
}

// hasherFunc is a funnel.Hasher made of a function.
type hasherFunc[T any] func(T) (uint64, uint64)

func (f hasherFunc[T]) Sum128(v T) (uint64, uint64) { return f(v) }
