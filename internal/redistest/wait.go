package redistest

import (
	"fmt"
	"testing"
	"time"
)

// pollEvery is how often Poll asks: often enough that a test waits little
// past the event, seldom enough that the asking loads nobody.
const pollEvery = 10 * time.Millisecond

// Poll calls cond until it reports true, every few milliseconds, for up to
// timeout, and returns nil once it does. Otherwise it returns an error that
// says how long it waited, with the last error cond gave for not yet.
func Poll(timeout time.Duration, cond func() (bool, error)) error {
	deadline := time.Now().Add(timeout)
	for {
		ok, err := cond()
		if ok {
			return nil
		}
		if time.Now().After(deadline) {
			if err == nil {
				return fmt.Errorf("not after %v", timeout)
			}
			return fmt.Errorf("not after %v: %w", timeout, err)
		}
		time.Sleep(pollEvery)
	}
}

// WaitFor waits, as Poll does, until cond reports that what happened, and
// fails t if it has not within timeout. what reads as the object of "wait
// for", such as "the replica to sync". Like t.Fatal, it must be called from
// the goroutine that runs the test.
func WaitFor(t testing.TB, what string, timeout time.Duration, cond func() (bool, error)) {
	t.Helper()
	if err := Poll(timeout, cond); err != nil {
		t.Fatalf("waited for %s: %v", what, err)
	}
}

// Returns calls call and returns what it returns, and fails t if call has
// not returned within limit: for a call that must end at its deadline on a
// server that answers nothing, where a limit far past the deadline tells a
// call that hangs from one that a busy machine delayed. Like t.Fatal, it
// must be called from the goroutine that runs the test; a call that hangs
// is left running.
func Returns[T any](t testing.TB, limit time.Duration, call func() (T, error)) (T, error) {
	t.Helper()
	type result struct {
		v   T
		err error
	}
	done := make(chan result, 1)
	go func() {
		v, err := call()
		done <- result{v, err}
	}()
	select {
	case r := <-done:
		return r.v, r.err
	case <-time.After(limit):
		t.Fatalf("a call has not returned in %v", limit)
		panic("unreachable")
	}
}
