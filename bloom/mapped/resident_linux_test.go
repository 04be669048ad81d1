package mapped_test

import (
	"bufio"
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mitzbloom/mitzbloom/bloom"
	"github.com/mitzbloom/mitzbloom/bloom/mapped"
	"github.com/mitzbloom/mitzbloom/funnel"
)

// mappedKiB returns the resident memory of the process's mappings of path,
// from /proc/self/smaps, and the part of it that is anonymous memory (a
// private copy), and whether it found a mapping.
func mappedKiB(t *testing.T, path string) (rss, anon int64, found bool) {
	t.Helper()
	f, err := os.Open("/proc/self/smaps")
	if err != nil {
		t.Skipf("no smaps to read: %v", err)
	}
	defer f.Close()
	inside := false
	for s := bufio.NewScanner(f); s.Scan(); {
		fields := strings.Fields(s.Text())
		if len(fields) >= 5 && strings.Contains(fields[0], "-") && !strings.HasSuffix(fields[0], ":") {
			inside = len(fields) >= 6 && fields[5] == path
			found = found || inside
			continue
		}
		if !inside || len(fields) != 3 {
			continue
		}
		var kib int64
		switch fields[0] {
		case "Rss:":
			_, err = fmt.Sscan(fields[1], &kib)
			rss += kib
		case "Anonymous:":
			_, err = fmt.Sscan(fields[1], &kib)
			anon += kib
		}
		require.NoError(t, err)
	}
	return rss, anon, found
}

// TestResidentMemory checks that opening a file maps it without reading
// it, that lookups make no private copy of what they read, and that
// BitCount maps it all. The kernel maps in the page cache a folio at a
// time, up to 2 MiB on file systems that keep large folios (ext4 since
// Linux 6.11), rather than the 4 KiB page a lookup reads: how much of the
// file a few lookups map in depends on the kernel, and is logged.
func TestResidentMemory(t *testing.T) {
	const n = 20e6 // 23 MiB of filter
	f, err := bloom.New(funnel.Int64, n, 0.01)
	require.NoError(t, err)
	keys := make([]int64, 1000)
	for i := range keys {
		keys[i] = int64(i)
	}
	f.PutMany(keys)
	path := writeFile(t, t.TempDir(), f)
	fileKiB := (f.BitSize()/8 + 6) / 1024

	m, err := mapped.Open(path, funnel.Int64)
	require.NoError(t, err)
	defer m.Close()
	opened, anon, ok := mappedKiB(t, path)
	require.True(t, ok, "no mapping of %s in /proc/self/smaps", path)
	t.Logf("a %d KiB file: %d KiB resident after Open", fileKiB, opened)
	assert.LessOrEqual(t, opened, int64(2048), "Open mapped in more than the folio of the header")
	assert.Zero(t, anon)

	const lookups = 100
	for _, k := range keys[:lookups] {
		require.True(t, m.MightContain(k))
	}
	looked, anon, _ := mappedKiB(t, path)
	t.Logf("%d KiB resident after %d lookups of %d pages each", looked, lookups, m.NumHashFunctions())
	assert.Zero(t, anon, "lookups made a private copy of what they read")

	require.Positive(t, m.BitCount())
	counted, anon, _ := mappedKiB(t, path)
	t.Logf("%d KiB resident after BitCount", counted)
	assert.GreaterOrEqual(t, counted, fileKiB, "BitCount read the whole file")
	assert.Zero(t, anon)

	require.NoError(t, m.Close())
	_, _, ok = mappedKiB(t, path)
	assert.False(t, ok, "the mapping outlived Close")
}
