package bench

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestMedian(t *testing.T) {
	xs := []float64{3, 1, 2}
	assert.Equal(t, 2.0, Median(xs))
	assert.Equal(t, []float64{3, 1, 2}, xs, "Median leaves its argument as it was")
	assert.Equal(t, 2.5, Median([]float64{4, 1, 3, 2}))
	assert.Equal(t, 7.0, Median([]float64{7}))
	assert.True(t, Median(nil) != Median(nil), "NaN for no runs")
}
