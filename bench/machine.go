package bench

import (
	"math"
	"os"
	"slices"
	"strings"
)

// Median returns the median of xs, the mean of the middle two for an even
// count, or NaN for none. xs is left as it is.
func Median(xs []float64) float64 {
	if len(xs) == 0 {
		return math.NaN()
	}
	s := slices.Sorted(slices.Values(xs))
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

// LoadAverage returns the machine's 1-, 5- and 15-minute load averages,
// as /proc/loadavg gives them, or "unknown", for reports to say how busy
// the machine was while they measured.
func LoadAverage() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "unknown"
	}
	f := strings.Fields(string(b))
	if len(f) < 3 {
		return "unknown"
	}
	return strings.Join(f[:3], " ")
}
