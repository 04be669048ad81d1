package redisfilter_test

import (
	"encoding/json"
	"go/ast"
	"go/doc"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mitzbloom/mitzbloom/bloom"
	"github.com/mitzbloom/mitzbloom/redisfilter"
)

// exportedTypes returns the names of the exported types that this package
// declares, as go doc lists them, from its source.
func exportedTypes(t *testing.T) []string {
	t.Helper()
	entries, err := os.ReadDir(".")
	require.NoError(t, err)
	fset := token.NewFileSet()
	var files []*ast.File
	for _, e := range entries {
		name := e.Name()
		if !strings.HasSuffix(name, ".go") || strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, filepath.Join(".", name), nil, parser.ParseComments)
		require.NoError(t, err)
		files = append(files, f)
	}
	pkg, err := doc.NewFromFiles(fset, files, "github.com/mitzbloom/mitzbloom/redisfilter")
	require.NoError(t, err)
	var names []string
	for _, typ := range pkg.Types {
		names = append(names, typ.Name)
	}
	return names
}

// TestJSONEveryType marshals a value of each exported type of this package
// with encoding/json: the statistics write their fields, and the handles to
// Redis and the options return an error that says what to encode instead;
// none writes {}. The values are checked against the types the package
// declares, so that a type added later without a value here fails the test.
func TestJSONEveryType(t *testing.T) {
	values := map[string]struct {
		v       any
		instead string // what the error says to encode, or "" for data
	}{
		"Filter":         {new(redisfilter.Filter[string]), "encode the bloom.Filter that Snapshot returns"},
		"Windowed":       {new(redisfilter.Windowed[string]), "encode the bloom.Filter of a generation that Snapshot returns"},
		"Hybrid":         {new(redisfilter.Hybrid[string]), "encode the bloom.Filter that Copy returns"},
		"Option":         {redisfilter.WithAdopt(), "encode the values it was made from"},
		"HybridStats":    {redisfilter.HybridStats{Syncs: 1}, ""},
		"SyncStats":      {redisfilter.SyncStats{Pushed: 1}, ""},
		"FullPushReason": {redisfilter.FullPushOverflow, ""},
	}
	for _, name := range exportedTypes(t) {
		c, ok := values[name]
		if !assert.True(t, ok, "redisfilter.%s has no value in TestJSONEveryType: add one", name) {
			continue
		}
		b, err := json.Marshal(c.v)
		if c.instead == "" {
			require.NoError(t, err, name)
			assert.NotEqual(t, "{}", string(b), name)
			continue
		}
		assert.ErrorIs(t, err, bloom.ErrInvalidArgument, name)
		assert.ErrorContains(t, err, c.instead, name)
	}
}
