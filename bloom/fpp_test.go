package bloom_test

import (
	"fmt"
	"math"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/mitzbloom/mitzbloom/bloom"
	"github.com/mitzbloom/mitzbloom/funnel"
	"github.com/mitzbloom/mitzbloom/strategy"
)

// TestMeasuredFPP fills filters to their expected insertions and measures
// the false-positive rate on values never put: it must be near the requested
// p, and near what ExpectedFPP predicts.
func TestMeasuredFPP(t *testing.T) {
	n, probes := int64(100000), int64(200000)
	if testing.Short() {
		n, probes = 20000, 50000
	}
	for _, p := range []float64{0.1, 0.01, 0.001} {
		for _, s := range []strategy.Strategy{strategy.Murmur128Mitz32, strategy.Murmur128Mitz64} {
			t.Run(fmt.Sprintf("p=%v/%v", p, s), func(t *testing.T) {
				f := mustNew(t, funnel.Int64, n, p, bloom.WithStrategy(s))
				for i := range n {
					f.Put(i)
				}
				fp := 0
				for i := range probes {
					if f.MightContain(n + i) {
						fp++
					}
				}
				measured := float64(fp) / float64(probes)
				t.Logf("requested %v, expected %.5f, measured %.5f", p, f.ExpectedFPP(), measured)
				// Four standard deviations of a binomial count, plus 10%
				// for the gap between the estimate and the truth.
				tolerance := 4*math.Sqrt(p/float64(probes)) + 0.1*p
				assert.Less(t, measured, p+tolerance)
				assert.InDelta(t, f.ExpectedFPP(), measured, tolerance)
				assert.InEpsilon(t, n, f.ApproximateElementCount(), 0.02)
			})
		}
	}
}
