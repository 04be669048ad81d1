package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mitzbloom/mitzbloom/bloom"
	"github.com/mitzbloom/mitzbloom/bloom/bloomtest"
	"github.com/mitzbloom/mitzbloom/funnel"
)

// TestStdinAsFile checks that a filter on standard input, which is read
// into memory, reads as its file does, which is opened in place (one
// filter) or read with ReadRotating or ReadScalable: inspect describes it
// alike, query answers alike, and -max-bytes refuses it alike.
func TestStdinAsFile(t *testing.T) {
	dir := t.TempDir()
	var keys []string
	for i := range 3000 {
		keys = append(keys, "key"+strconv.Itoa(i))
	}
	probes := append(append([]string(nil), keys[:200]...), "absent1", "absent2", "absent3")

	one := filepath.Join(dir, "one.bin")
	mustRun(t, strings.Join(keys, "\n")+"\n", "build", "-n", "3000", "-p", "0.01", "-o", one)
	scalable := filepath.Join(dir, "scalable.bin")
	mustRun(t, strings.Join(keys, "\n")+"\n", "build", "-scalable", "-n", "300", "-p", "0.01", "-o", scalable)
	rotating := filepath.Join(dir, "rotating.bin")
	clock := bloomtest.NewClock(time.Unix(0, 0))
	rot, err := bloom.NewRotating(funnel.String, 2000, 0.01, time.Minute, bloom.WithClock(clock))
	require.NoError(t, err)
	rot.PutMany(keys[:1500])
	clock.Advance(time.Minute)
	rot.PutMany(keys[1500:])
	b, err := rot.MarshalBinary()
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(rotating, b, 0o644))

	for _, path := range []string{one, scalable, rotating} {
		name := filepath.Base(path)
		data, err := os.ReadFile(path)
		require.NoError(t, err)

		var fromFile, fromStdin report
		require.NoError(t, json.Unmarshal([]byte(mustRun(t, "", "inspect", "-json", path).stdout), &fromFile), name)
		require.NoError(t, json.Unmarshal([]byte(mustRun(t, string(data), "inspect", "-json", "-").stdout), &fromStdin), name)
		fromStdin.File = fromFile.File
		assert.True(t, jsonEqual(t, fromFile, fromStdin), "%s: inspect of the file and of stdin differ", name)
		if path != rotating { // whose report is of its generations' union
			assert.EqualValues(t, len(data), fromFile.Bytes, name)
		}

		q := mitzbloom(t, strings.Join(probes, "\n")+"\n", "query", path)
		qs := mitzbloom(t, string(data), append([]string{"query", "-", "--"}, probes...)...)
		assert.Equal(t, q.stdout, qs.stdout, "%s: query of the file and of stdin differ", name)
		assert.Equal(t, exitAbsent, q.status, name)
		for _, line := range strings.Split(q.stdout, "\n")[:200] {
			assert.True(t, strings.HasSuffix(line, "\tmaybe"), "%s: a key put is absent: %q", name, line)
		}

		limit := strconv.Itoa(len(data) - 1)
		for _, res := range []result{
			mitzbloom(t, "", "inspect", "-max-bytes", limit, path),
			mitzbloom(t, string(data), "inspect", "-max-bytes", limit, "-"),
		} {
			assert.Equal(t, exitError, res.status, name)
			assert.Contains(t, res.stderr, "more than -max-bytes "+limit, name)
		}
	}
}
