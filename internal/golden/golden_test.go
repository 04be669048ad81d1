package golden

import (
	"bytes"
	"os"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestCopyMatchesShared keeps the embedded copy identical to the vectors in
// the shared folder beside the repository, where that folder exists (it does
// in CI, and on every developer machine).
func TestCopyMatchesShared(t *testing.T) {
	shared, err := os.ReadFile("../../../shared/guava-golden/vectors.json")
	if os.IsNotExist(err) && os.Getenv("CI") == "" {
		t.Skip("../shared/guava-golden is not beside the repository; nothing to compare the copy with")
	}
	require.NoError(t, err)
	require.True(t, bytes.Equal(shared, vectorsJSON), "internal/golden/vectors.json differs from ../shared/guava-golden/vectors.json: copy it again")
}

func TestLoad(t *testing.T) {
	v, err := Load()
	require.NoError(t, err)
	require.Equal(t, "31.1", v.GuavaVersion)
	require.Len(t, v.Sizing, 255)
	require.Len(t, v.Hashes, 84)
	require.Len(t, v.Filters, 42)
	require.Len(t, v.Ruled, 6)
	require.Len(t, v.Unions, 4)
}
