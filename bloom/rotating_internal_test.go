package bloom

import (
	"runtime"
	"testing"
	"time"

	"github.com/mitzbloom/mitzbloom/bloom/bloomtest"
	"github.com/mitzbloom/mitzbloom/funnel"
	"github.com/mitzbloom/mitzbloom/internal/race"
)

// TestRotatingPutAfterRotations holds a Put between its load of the
// generations and the setting of its bits while two rotations drop the
// generation it loaded: the value must still be found afterwards.
func TestRotatingPutAfterRotations(t *testing.T) {
	const w = time.Minute
	clock := bloomtest.NewClock(time.Time{})
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
// generations of 64 values turn over every few microseconds (see
// RotationRace). The race of a Put with two rotations is pinned down by the
// deterministic test above.
func TestRotatingPutRacesRotation(t *testing.T) {
	const writers, readers = 8, 2
	// More threads than cores: the kernel then preempts writers at any
	// instruction, not only where the Go scheduler would.
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(writers + readers))
	perWriter := int64(150000)
	if testing.Short() || race.Enabled {
		perWriter = 25000
	}
	r, err := NewRotating(funnel.Int64, 64, 0.01, time.Hour, WithClock(bloomtest.NewClock(time.Time{})))
	if err != nil {
		t.Fatal(err)
	}
	rotations := func() int64 { return r.gens.Load().rotations }

	checked, lost := RotationRace{Writers: writers, Readers: readers, PerWriter: perWriter, Rotations: rotations}.Run(r)
	t.Logf("%d rotations, %d values checked", rotations(), checked)
	if lost != 0 {
		t.Errorf("%d values put within the last rotation were not found", lost)
	}
	if checked < 1000 {
		t.Errorf("only %d checks", checked)
	}
}

// hasherFunc is a hashing.Hasher made of a function.
type hasherFunc[T any] func(T) (uint64, uint64)

func (f hasherFunc[T]) Sum128(v T) (uint64, uint64) { return f(v) }
