package bloom

// Clear removes every value from f, leaving it as [New] made it, every bit
// zero, with its size, hash functions, strategy and funnel. It allocates
// nothing; it reads every word and writes those with a bit set.
//
// Clear is safe for concurrent use with Put and MightContain, but it is not
// one atomic step: it zeroes f one 64-bit word at a time. Once Clear has
// returned, a value whose Put returned before Clear began is forgotten
// (barring false positives, as for any value never put), and a value whose
// Put begins after Clear returned is found, as always. A value put while
// Clear runs may be kept, forgotten, or kept in part, so that a
// MightContain of it may report false later; put it again if it must stay.
// A MightContain while Clear runs may report a value put before Clear
// either way.
func (f *Filter[T]) Clear() { f.bits.Clear() }

// Clear removes every value from r: it empties both generations in place
// and starts a new window now, as if r had just been made; the counts of
// rotations in [Rotating.Stats] go on. It allocates only the record of the
// two generations, about a kilobyte. Under concurrent Put and MightContain
// it promises what [Filter.Clear] does.
func (r *Rotating[T]) Clear() {
	r.mu.Lock() // no rotation in between
	defer r.mu.Unlock()
	g := r.gens.Load()
	g.cur.f.bits.Clear()
	g.prev.f.bits.Clear()
	now := r.clock.Now()
	// The timer set for the end of the old window finds the new one not
	// over, and sets itself for its end.
	r.gens.Store(&generations[T]{
		cur:       r.newGeneration(g.cur.f, now, 0),
		prev:      r.newGeneration(g.prev.f, now.Add(-r.window), 0),
		rotations: g.rotations,
		early:     g.early,
	})
}

// Clear removes every value from s and returns it to one stage: it empties
// the first stage in place and drops the others, which the garbage
// collector frees once no Put or MightContain uses them; s then grows again
// as a new Scalable does. It allocates only the record of the stage. Under
// concurrent Put and MightContain it promises what [Filter.Clear] does: a
// value put while Clear runs may be kept, or lost with the stage it went
// into.
func (s *Scalable[T]) Clear() {
	first := s.stages.Load().stages[0]
	first.f.bits.Clear()
	// A stage that a Put adds meanwhile is dropped too: either this Store
	// replaces the list that holds it, or grow, which installs a stage only
	// in place of the list it grew, finds the list replaced.
	s.stages.Store(&stageList[T]{stages: []*stage[T]{
		s.newStage(stageSize{n: first.expected, p: first.fpp}, first.f, 0),
	}})
}
