package bloomprom

import (
	"math/rand/v2"
	"runtime"
	"sync"
	"testing"
)

// TestStripesSpread requires goroutines to count in different stripes:
// 8 goroutines, which Go starts on stacks apart, must pick more than one.
func TestStripesSpread(t *testing.T) {
	s := newStripes(4)
	if len(s.s) != 16 {
		t.Fatalf("4 processors: %d stripes, want 16", len(s.s))
	}
	var mu sync.Mutex
	picked := map[*stripe]bool{}
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			st := s.mine()
			mu.Lock()
			picked[st] = true
			mu.Unlock()
		})
	}
	wg.Wait()
	t.Logf("8 goroutines counted in %d of %d stripes", len(picked), len(s.s))
	if len(picked) < 2 {
		t.Errorf("8 goroutines all counted in one stripe")
	}
	for procs, want := range map[int]int{1: 8, 2: 8, 3: 16, 8: 32, 64: 256} {
		if got := len(newStripes(procs).s); got != want {
			t.Errorf("newStripes(%d) has %d stripes, want %d", procs, got, want)
		}
	}
}

// BenchmarkStripeChoice times ways for a goroutine to pick the stripe it
// counts in, each adding 1 to it, from all processors at once: by the
// address of its stack (what stripes do), at random with math/rand/v2, by
// a token kept in a sync.Pool (per processor, as puzpuzpuz/xsync's Counter
// does), and one counter for all.
func BenchmarkStripeChoice(b *testing.B) {
	s := newStripes(runtime.GOMAXPROCS(0))
	mask := uint32(len(s.s) - 1)
	type token struct{ i uint32 }
	pool := sync.Pool{New: func() any { return &token{rand.Uint32()} }}
	var one stripe
	for _, bc := range []struct {
		name string
		add  func()
	}{
		{"by=stack", func() { s.add(true) }},
		{"by=rand", func() { s.s[rand.Uint32()&mask].maybe.Add(1) }},
		{"by=pool", func() {
			tk := pool.Get().(*token)
			s.s[tk.i&mask].maybe.Add(1)
			pool.Put(tk)
		}},
		{"by=none", func() { one.maybe.Add(1) }},
	} {
		b.Run(bc.name, func(b *testing.B) {
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					bc.add()
				}
			})
		})
	}
}
