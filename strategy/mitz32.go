package strategy

import "github.com/mitzbloom/mitzbloom/internal/probe"

type mitz32 struct{}

func (mitz32) Ordinal() int   { return 0 }
func (mitz32) String() string { return "MURMUR128_MITZ_32" }
func (mitz32) isStrategy()    {}

func (mitz32) AppendIndexes(dst []int64, h1, _ uint64, k int, bitSize int64) []int64 {
	p := probe.NewMitz32(h1)
	for i := range k {
		dst = append(dst, int64(p.Combined(i)%uint64(bitSize)))
	}
	return dst
}
