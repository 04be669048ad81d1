package strategy

import "github.com/mitzbloom/mitzbloom/internal/probe"

type mitz64 struct{}

func (mitz64) Ordinal() int   { return 1 }
func (mitz64) String() string { return "MURMUR128_MITZ_64" }
func (mitz64) isStrategy()    {}

func (mitz64) AppendIndexes(dst []int64, h1, h2 uint64, k int, bitSize int64) []int64 {
	p := probe.Mitz64{H1: h1, H2: h2}
	for i := range k {
		dst = append(dst, int64(p.Combined(i)%uint64(bitSize)))
	}
	return dst
}
