package bloom

import (
	"github.com/mitzbloom/mitzbloom/internal/bitarray"
	"github.com/mitzbloom/mitzbloom/internal/filterbits"
)

func init() {
	filterbits.Of = func(f any) *bitarray.Array {
		if b, ok := f.(interface{ bitArray() *bitarray.Array }); ok {
			return b.bitArray()
		}
		return nil
	}
}

// bitArray returns f's bits, for filterbits.Of, which the bench module
// reads.
func (f *Filter[T]) bitArray() *bitarray.Array { return f.bits }
