package golden

import (
	"bytes"
	"errors"
	"io/fs"
	"os"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestCopyMatchesShared keeps the embedded copy identical to the vectors the
// project's maintainers keep beside the repository, in ../shared, where that
// folder exists. A clone has none: the copy here is what the tests use.
func TestCopyMatchesShared(t *testing.T) {
	const path = "../../../shared/guava-golden/vectors.json"
	shared, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		t.Skipf("%s does not exist: no upstream copy to compare vectors.json with", path)
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
