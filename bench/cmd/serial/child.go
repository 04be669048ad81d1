package main

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"runtime/metrics"
	"time"

	"github.com/mitzbloom/mitzbloom/bloom"
	"github.com/mitzbloom/mitzbloom/bloom/mapped"
	"github.com/mitzbloom/mitzbloom/funnel"
)

// The operations a child process times, once, on a filter file of int64
// keys. Each runs in a process of its own, as a service loads its filter
// once at start-up: the memory it allocates is new to the process, and its
// first touch is part of the time, as it is for the service.
const (
	opReadFile = "os.ReadFile"
	// opReadFileLoaded is os.ReadFile in a process that holds the filter,
	// read from the same file, already: the memory MarshalBinary starts
	// from, and the baseline it is held to.
	opReadFileLoaded = "os.ReadFile, the filter in memory"
	opReadFrom       = "ReadFrom(*os.File)"
	opReadBufio      = "ReadFrom(bufio.Reader)"
	opReadLimit      = "ReadFromLimit(*os.File)"
	opUnmarshal      = "UnmarshalBinary"
	opMarshal        = "MarshalBinary"
	opWriteTo        = "WriteTo(io.Discard)"
	opCopy           = "copy"
	opMappedOpen     = "mapped.Open"
	opMappedQuery    = "mapped.Open+MightContain"
	opGuavaRead      = "Guava readFrom"
	opGuavaWrite     = "Guava writeTo(nullOutputStream)"
	// The command-line tool, timed as a whole process.
	opQuery   = "mitzbloom query"
	opInspect = "mitzbloom inspect"
)

// A timing is what a child reports: the seconds its operation took, timed
// inside the process, and the longest the runtime took to stop the world
// for the garbage collector meanwhile (0 if it never did); and the seconds
// from the process's start to its end, which the parent times.
type timing struct {
	seconds, stopping, wall float64
}

func (t timing) String() string {
	return fmt.Sprintf("seconds=%.6f stopping=%.6f", t.seconds, t.stopping)
}

// runChild runs op on the file path and prints its timing.
func runChild(op, path string) error {
	if op == opResident || op == opShared {
		return runResident(op, path)
	}
	var prepared any
	prepare, run, err := childOp(op, path)
	if err != nil {
		return err
	}
	if prepare != nil {
		if prepared, err = prepare(); err != nil {
			return err
		}
	}
	before := maxStopping()
	start := time.Now()
	err = run(prepared)
	d := time.Since(start)
	if err != nil {
		return err
	}
	t := timing{seconds: d.Seconds()}
	if after := maxStopping(); after > before {
		t.stopping = after
	}
	fmt.Println(t)
	return nil
}

// childOp returns the untimed preparation of op, if any, and op itself,
// which takes what the preparation made.
func childOp(op, path string) (prepare func() (any, error), run func(any) error, err error) {
	readFilter := func() (any, error) {
		f, err := os.Open(path)
		if err != nil {
			return nil, err
		}
		defer f.Close()
		return bloom.ReadFrom(f, funnel.Int64)
	}
	readFile := func() (any, error) { return os.ReadFile(path) }
	switch op {
	case opReadFile, opReadFileLoaded:
		if op == opReadFileLoaded {
			prepare = readFilter
		}
		return prepare, func(any) error {
			_, err := os.ReadFile(path)
			return err
		}, nil
	case opReadFrom, opReadBufio, opReadLimit:
		return nil, func(any) error {
			f, err := os.Open(path)
			if err != nil {
				return err
			}
			defer f.Close()
			switch op {
			case opReadBufio:
				_, err = bloom.ReadFrom(bufio.NewReader(f), funnel.Int64)
			case opReadLimit:
				_, err = bloom.ReadFromLimit(f, funnel.Int64, 1<<40)
			default:
				_, err = bloom.ReadFrom(f, funnel.Int64)
			}
			return err
		}, nil
	case opUnmarshal:
		return readFile, func(b any) error {
			var f bloom.Filter[int64]
			return f.UnmarshalBinary(b.([]byte))
		}, nil
	case opMarshal:
		return readFilter, func(f any) error {
			_, err := f.(*bloom.Filter[int64]).MarshalBinary()
			return err
		}, nil
	case opWriteTo:
		return readFilter, func(f any) error {
			_, err := f.(*bloom.Filter[int64]).WriteTo(io.Discard)
			return err
		}, nil
	case opCopy:
		// The same bytes, copied into memory already touched.
		return func() (any, error) {
				b, err := os.ReadFile(path)
				if err != nil {
					return nil, err
				}
				dst := make([]byte, len(b))
				for i := range dst {
					dst[i] = 1
				}
				return [2][]byte{dst, b}, nil
			}, func(v any) error {
				b := v.([2][]byte)
				copy(b[0], b[1])
				return nil
			}, nil
	case opMappedOpen, opMappedQuery:
		return nil, func(any) error {
			f, err := mapped.Open(path, funnel.Int64)
			if err != nil {
				return err
			}
			if op == opMappedQuery {
				for k := range int64(10) {
					f.MightContain(k)
				}
			}
			return f.Close()
		}, nil
	}
	return nil, nil, fmt.Errorf("no operation %q", op)
}

// maxStopping returns the longest time the runtime has taken to stop the
// world for the garbage collector so far, the upper bound of the highest
// bucket of its histogram that holds a pause: how long a goroutine kept the
// others waiting, as one in a copy that cannot be preempted would.
func maxStopping() float64 {
	s := []metrics.Sample{{Name: "/sched/pauses/stopping/gc:seconds"}}
	metrics.Read(s)
	if s[0].Value.Kind() != metrics.KindFloat64Histogram {
		return 0
	}
	h := s[0].Value.Float64Histogram()
	for i := len(h.Counts) - 1; i >= 0; i-- {
		if h.Counts[i] > 0 {
			return h.Buckets[i+1]
		}
	}
	return 0
}

// parseTiming parses what a child printed.
func parseTiming(out string) (timing, error) {
	var t timing
	if _, err := fmt.Sscanf(out, "seconds=%g stopping=%g", &t.seconds, &t.stopping); err != nil {
		return t, fmt.Errorf("child printed %q: %w", out, err)
	}
	if t.seconds <= 0 {
		return t, errors.New("child timed nothing")
	}
	return t, nil
}
