package bench

import (
	"fmt"
	"testing"

	"github.com/mitzbloom/mitzbloom/funnel"
)

// HugeMaps, if set, makes the map of strings take part at 1e8 keys too.
// It is off by default: such a map holds about 8 GB and takes minutes to
// fill, for a number nobody needs in order to see that a map is large.
var HugeMaps = false

// A Suite is a workload: a key type, its key function and the contenders
// that take such keys.
type Suite[K any] struct {
	// Key names the key type in benchmark names and reports.
	Key string
	// KeyOf returns the key of an index (see [Int64Key]).
	KeyOf func(index uint64) K
	// Contenders are the contenders, in the order of the reports, which
	// give every time as a ratio to the time of the one named "mitzbloom".
	Contenders []Contender[K]
}

// Int64Suite is the workload of int64 keys ([Int64Key]).
func Int64Suite() *Suite[int64] {
	return &Suite[int64]{
		Key:   "int64",
		KeyOf: Int64Key,
		Contenders: []Contender[int64]{
			Mitzbloom(funnel.Int64),
			MitzbloomBatch[int64](),
			MitzbloomUnsync(funnel.Int64),
			MitzbloomUnsyncBatch[int64](),
			BitsAndBloomsInt64(),
			BlobloomInt64(),
			Map[int64](),
		},
	}
}

// HostPortSuite is the workload of host:port string keys ([HostPortKey]).
func HostPortSuite() *Suite[string] {
	m := Map[string]()
	m.Skip = func(n int64) string {
		if n >= 1e8 && !HugeMaps {
			return "a map[string]struct{} of 1e8 host:port keys holds about 8 GB; skipped (see HugeMaps)"
		}
		return ""
	}
	return &Suite[string]{
		Key:   "hostport",
		KeyOf: HostPortKey,
		Contenders: []Contender[string]{
			Mitzbloom(funnel.String),
			MitzbloomBatch[string](),
			MitzbloomUnsync(funnel.String),
			MitzbloomUnsyncBatch[string](),
			BitsAndBloomsString(),
			BlobloomString(),
			m,
		},
	}
}

// A Workload is a [Suite] with its key type hidden, so that suites of
// different key types fit in one list.
type Workload interface {
	// KeyName returns the name of the key type.
	KeyName() string
	// ContenderNames returns the names of the contenders, in order.
	ContenderNames() []string
	// Skip returns why the contender sits out filters of n keys, or "".
	Skip(contender string, n int64) string
	// Takes reports whether the contender runs op.
	Takes(contender string, op Op) bool
	// Benchmark returns the benchmark of op for the contender on filters of
	// n keys.
	Benchmark(op Op, contender string, n int64, cfg Config) func(*testing.B)
	// Measure returns the memory and false-positive rate of the
	// contender's filter of n keys, filled.
	Measure(contender string, n int64, cfg Config) (Stats, error)
}

// Workloads returns every workload: int64 keys, then host:port strings.
func Workloads() []Workload {
	return []Workload{Int64Suite(), HostPortSuite()}
}

// KeyName returns s.Key.
func (s *Suite[K]) KeyName() string { return s.Key }

// ContenderNames returns the names of s's contenders.
func (s *Suite[K]) ContenderNames() []string {
	names := make([]string, len(s.Contenders))
	for i := range s.Contenders {
		names[i] = s.Contenders[i].Name
	}
	return names
}

// Skip returns why the named contender sits out filters of n keys, or "".
func (s *Suite[K]) Skip(contender string, n int64) string {
	c, base, err := s.resolve(contender)
	if err != nil {
		return err.Error()
	}
	if why := c.skip(n); why != "" {
		return why
	}
	return base.skip(n)
}

// Takes reports whether the named contender runs op.
func (s *Suite[K]) Takes(contender string, op Op) bool {
	c, err := s.contender(contender)
	return err == nil && c.takes(op)
}

// resolve returns the named contender and the contender whose sets it
// uses: its base, or itself.
func (s *Suite[K]) resolve(name string) (c, base *Contender[K], err error) {
	c, err = s.contender(name)
	if err != nil || c.Base == "" {
		return c, c, err
	}
	base, err = s.contender(c.Base)
	if err == nil && base.Base != "" {
		err = fmt.Errorf("bench: contender %q is based on %q, itself based on %q", c.Name, base.Name, base.Base)
	}
	return c, base, err
}

func (s *Suite[K]) contender(name string) (*Contender[K], error) {
	for i := range s.Contenders {
		if s.Contenders[i].Name == name {
			return &s.Contenders[i], nil
		}
	}
	return nil, fmt.Errorf("bench: no contender %q for %s keys", name, s.Key)
}
