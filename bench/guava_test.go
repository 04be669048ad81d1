package bench

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestParseGuava(t *testing.T) {
	out := []byte(`# java.version=17.0.15 guava=31.1.0.jre
result op=Put key=int64 n=10000 ns_per_op=21.5000 bytes_per_op=96.0000 ops=9302272

stats key=int64 n=10000 bits=95872 held_out=1000000 false_positives=10046 present_probes=10000 false_negatives=0 fill_seconds=0.004
result op=MightContain key=int64 n=10000 ns_per_op=18.2500 bytes_per_op=0.0000 ops=100
`)
	r, err := parseGuava(out)
	require.NoError(t, err)
	assert.Equal(t, "java.version=17.0.15 guava=31.1.0.jre", r.JVM)
	assert.Equal(t, []GuavaResult{
		{Op: Put, Key: "int64", N: 1e4, NsPerOp: 21.5, BytesPerOp: 96, Ops: 9302272},
		{Op: MightContain, Key: "int64", N: 1e4, NsPerOp: 18.25, BytesPerOp: 0, Ops: 100},
	}, r.Results)
	assert.Equal(t, []Stats{{N: 1e4, Bits: 95872, HeapBytes: 95872 / 8, HeldOut: 1e6, FalsePositives: 10046,
		PresentProbes: 1e4, FillSeconds: 0.004}}, r.Stats)

	for _, bad := range []string{
		"result op=Put key=int64 n=ten ns_per_op=1 bytes_per_op=1 ops=1",
		"result op=Put key=int64 n=10 bytes_per_op=1 ops=1",
		"stats key=int64 n=10 bits",
		"surprise x=1",
	} {
		_, err := parseGuava([]byte(bad + "\n"))
		assert.Error(t, err, bad)
	}
}

// TestGuavaMatchesMitzbloom runs the Java harness briefly and checks it
// against the Go side: mitzbloom builds Guava's filters bit for bit, so from
// the same keys both must count exactly the same false positives, which
// holds only if both sides make the same keys and count the same way.
func TestGuavaMatchesMitzbloom(t *testing.T) {
	g := guava(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cfg := Config{ProbeHalf: 2000, HeldOut: 50_000}
	const n = 20_000
	for _, w := range Workloads() {
		run, err := g.Run(ctx, w.KeyName(), MightContain, n, GuavaSettings{Count: 2, Iteration: time.Millisecond, Config: cfg})
		require.NoError(t, err)
		require.Len(t, run.Stats, 1)
		got, err := w.Measure("mitzbloom", n, cfg)
		require.NoError(t, err)
		java := run.Stats[0]
		assert.Equal(t, got.Bits, java.Bits, w.KeyName())
		assert.Equal(t, got.FalsePositives, java.FalsePositives, w.KeyName())
		assert.Equal(t, got.PresentProbes, java.PresentProbes, w.KeyName())
		assert.Zero(t, java.FalseNegatives, w.KeyName())
		t.Logf("%s: %d false positives of %d on both sides", w.KeyName(), got.FalsePositives, got.HeldOut)

		checkResults(t, run, w.KeyName(), MightContain, n, 2)

		run, err = g.Run(ctx, w.KeyName(), Put, 1000, GuavaSettings{Count: 3, Iteration: time.Millisecond, Config: cfg})
		require.NoError(t, err)
		assert.Empty(t, run.Stats)
		checkResults(t, run, w.KeyName(), Put, 1000, 3)
	}
}

func checkResults(t *testing.T, run *GuavaRun, key string, op Op, n int64, count int) {
	t.Helper()
	assert.Contains(t, run.JVM, "java.version=")
	require.Len(t, run.Results, count)
	for _, r := range run.Results {
		assert.Equal(t, key, r.Key)
		assert.Equal(t, op, r.Op)
		assert.Equal(t, n, r.N)
		assert.Positive(t, r.NsPerOp)
		assert.Positive(t, r.Ops)
	}
}
