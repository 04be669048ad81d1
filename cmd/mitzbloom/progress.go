package main

import (
	"fmt"
	"io"
	"strconv"
	"sync"
	"sync/atomic"
	"time"
)

// progressInterval is how often progress is redrawn.
const progressInterval = 500 * time.Millisecond

// A progress redraws a line of progress on a terminal while a build runs.
// A nil *progress does nothing, so that a quiet build need not check.
type progress struct {
	w          io.Writer
	start      time.Time
	totalBytes int64 // 0 when unknown
	keys       atomic.Int64
	bytes      atomic.Int64
	done       chan struct{}
	wg         sync.WaitGroup
}

// startProgress starts redrawing progress on w, for inputs of totalBytes
// bytes, or of unknown size if totalBytes is 0.
func startProgress(w io.Writer, totalBytes int64) *progress {
	p := &progress{w: w, start: time.Now(), totalBytes: totalBytes, done: make(chan struct{})}
	p.wg.Add(1)
	go func() {
		defer p.wg.Done()
		t := time.NewTicker(progressInterval)
		defer t.Stop()
		for {
			select {
			case <-t.C:
				p.draw("\r")
			case <-p.done:
				p.draw("\r")
				fmt.Fprintln(p.w)
				return
			}
		}
	}()
	return p
}

// add counts keys and bytes read.
func (p *progress) add(keys, bytes int64) {
	if p == nil {
		return
	}
	p.keys.Add(keys)
	p.bytes.Add(bytes)
}

// stop draws the final progress and stops.
func (p *progress) stop() {
	if p == nil {
		return
	}
	close(p.done)
	p.wg.Wait()
}

func (p *progress) draw(prefix string) {
	line := formatProgress(p.keys.Load(), p.bytes.Load(), p.totalBytes, time.Since(p.start))
	// Spaces after the text erase the end of a longer previous line.
	fmt.Fprintf(p.w, "%s%-40s", prefix, line)
}

// formatProgress describes a build that has read keys keys and bytes bytes
// of totalBytes (0 if unknown) in elapsed, as in
// "1.25M keys, 2.50M keys/s, 42%".
func formatProgress(keys, bytes, totalBytes int64, elapsed time.Duration) string {
	s := formatCount(keys) + " keys"
	if elapsed > 0 {
		s += ", " + formatCount(int64(float64(keys)/elapsed.Seconds())) + " keys/s"
	}
	if totalBytes > 0 {
		s += fmt.Sprintf(", %d%%", min(100, bytes*100/totalBytes))
	}
	return s
}

// formatCount writes n with three significant digits and an SI suffix from
// 10,000 up: 9999, 10.0k, 1.25M, 3.00G.
func formatCount(n int64) string {
	if n < 10000 {
		return strconv.FormatInt(n, 10)
	}
	v, suffix := float64(n), ""
	for _, s := range []string{"k", "M", "G", "T", "P", "E"} {
		if v < 999.5 {
			break
		}
		v, suffix = v/1000, s
	}
	switch {
	case v < 9.995:
		return fmt.Sprintf("%.2f%s", v, suffix)
	case v < 99.95:
		return fmt.Sprintf("%.1f%s", v, suffix)
	}
	return fmt.Sprintf("%.0f%s", v, suffix)
}
