package bloom_test

import (
	"encoding/hex"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mitzbloom/mitzbloom/bloom"
	"github.com/mitzbloom/mitzbloom/funnel"
	"github.com/mitzbloom/mitzbloom/internal/javatest"
)

// TestScalableJavaInterop has real Guava read a grown Scalable the way
// Scalable.WriteTo documents, readFrom until the stream ends, and requires
// that it finds the stages the Go side has, each compatible with the
// filter Guava's own create makes for the stage's sizing, with the same
// counts and rates, and that it answers mightContain across them exactly as
// Go's MightContain does, for values put and values never put. The Java
// side is testdata/interop/ScalableInterop.java.
//
// Debian's Guava is 31.1, which computes k with the legacy rule, so the
// Scalable uses WithLegacyHashCount.
func TestScalableJavaInterop(t *testing.T) {
	s := mustNewScalable(t, funnel.String, 100, 0.01, bloom.WithLegacyHashCount())
	const puts, absent = 20_000, 20_000
	for i := range puts {
		s.Put(fmt.Sprint("put-", i))
	}
	st := s.Stats()
	require.Greater(t, len(st.Stages), 5)

	dir := t.TempDir()
	stream := filepath.Join(dir, "scalable.bin")
	file, err := os.Create(stream)
	require.NoError(t, err)
	_, err = s.WriteTo(file)
	require.NoError(t, err)
	require.NoError(t, file.Close())

	var cases strings.Builder
	for _, stage := range st.Stages {
		fmt.Fprintf(&cases, "stage %d %016x\n", stage.ExpectedInsertions, math.Float64bits(stage.FPP))
	}
	var probes []string
	for i := 0; i < puts; i += 10 {
		probes = append(probes, fmt.Sprint("put-", i))
	}
	for i := range absent {
		probes = append(probes, fmt.Sprint("absent-", i))
	}
	goAnswers := make([]byte, len(probes))
	for i, v := range probes {
		fmt.Fprintf(&cases, "p %s\n", hex.EncodeToString([]byte(v)))
		goAnswers[i] = '0'
		if s.MightContain(v) {
			goAnswers[i] = '1'
		}
	}
	casesFile := filepath.Join(dir, "cases.txt")
	require.NoError(t, os.WriteFile(casesFile, []byte(cases.String()), 0o644))

	out := javatest.Program(t, []string{filepath.Join("testdata", "interop", "ScalableInterop.java")}, "ScalableInterop", stream, casesFile)

	lines := strings.Split(strings.TrimSpace(out), "\n")
	require.Equal(t, fmt.Sprint("end ", len(st.Stages)), lines[len(lines)-1], "Guava read another number of stages")
	require.Len(t, lines, len(st.Stages)+2)
	for i, stage := range st.Stages {
		f := strings.Fields(lines[i])
		require.Len(t, f, 5, lines[i])
		assert.Equal(t, fmt.Sprint(i), f[1])
		assert.Equal(t, "compatible=true", f[2], "stage %d is not the filter Guava's create(funnel, %d, %v) makes", i, stage.ExpectedInsertions, stage.FPP)
		assert.Equal(t, fmt.Sprint("count=", stage.ApproximateElementCount), f[3], "stage %d", i)
		bits, err := strconv.ParseUint(strings.TrimPrefix(f[4], "fpp="), 16, 64)
		require.NoError(t, err)
		// Java's Math.pow may differ from Go's correctly rounded power in
		// the last bit (see Filter.ExpectedFPP); no more.
		assert.InEpsilon(t, stage.ExpectedFPP, math.Float64frombits(bits), 1e-12, "stage %d expectedFpp", i)
	}
	javaAnswers := strings.TrimPrefix(lines[len(lines)-2], "answers ")
	require.Len(t, javaAnswers, len(probes))
	for i := range probes {
		if javaAnswers[i] != goAnswers[i] {
			t.Errorf("%s: Guava says %c, Go %c", probes[i], javaAnswers[i], goAnswers[i])
		}
	}
	// The absent probes must include false positives, or they would not
	// show that the two sides test the same bits.
	positives := strings.Count(javaAnswers[puts/10:], "1")
	assert.Positive(t, positives, "no absent value was a false positive")
	assert.Equal(t, puts/10, strings.Count(javaAnswers[:puts/10], "1"), "Guava misses put values")
	t.Logf("%d stages; Guava and Go agree on %d probes, %d false positives among %d absent values", len(st.Stages), len(probes), positives, absent)
}
