package splitmix

import "testing"

// TestAt checks At against the first outputs of the reference splitmix64
// (Vigna's splitmix64.c) seeded with 0 and with 1234567.
func TestAt(t *testing.T) {
	for _, c := range []struct {
		seed, index, want uint64
	}{
		{0, 0, 0xe220a8397b1dcdaf},
		{0, 1, 0x6e789e6aa1b965f4},
		{1234567, 0, 0x599ed017fb08fc85},
		{1234567, 1, 0x2c73f08458540fa5},
	} {
		if got := At(c.seed, c.index); got != c.want {
			t.Errorf("At(%d, %d) = %#x, want %#x", c.seed, c.index, got, c.want)
		}
	}
}
