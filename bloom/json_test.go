package bloom_test

import (
	"encoding/json"
	"go/ast"
	"go/doc"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mitzbloom/mitzbloom/bloom"
	"github.com/mitzbloom/mitzbloom/bloom/bloomtest"
	"github.com/mitzbloom/mitzbloom/funnel"
)

// exportedTypes returns the names of the exported types that the package
// in dir declares, as go doc lists them, from its source.
func exportedTypes(t *testing.T, dir string) []string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	fset := token.NewFileSet()
	var files []*ast.File
	for _, e := range entries {
		name := e.Name()
		if !strings.HasSuffix(name, ".go") || strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, filepath.Join(dir, name), nil, parser.ParseComments)
		require.NoError(t, err)
		files = append(files, f)
	}
	pkg, err := doc.NewFromFiles(fset, files, "github.com/mitzbloom/mitzbloom/bloom")
	require.NoError(t, err)
	var names []string
	for _, typ := range pkg.Types {
		names = append(names, typ.Name)
	}
	return names
}

// TestJSONEveryType marshals a value of each exported type of this package
// with encoding/json: each writes its bytes, or its fields, or returns an
// error, and none writes {}, as a type whose state is all unexported would.
// The values are checked against the types the package declares, so that a
// type added later without a value here fails the test.
func TestJSONEveryType(t *testing.T) {
	clock := bloomtest.NewClock(epoch)
	filter := putAll(mustNew(t, funnel.String, 100, 0.01), "a")
	builder, err := bloom.NewBuilder(funnel.String, 100, 0.01)
	require.NoError(t, err)
	rotating := mustNewRotating(t, funnel.String, 100, 0.01, time.Minute, bloom.WithClock(clock))
	scalable, _ := grownScalable(t, 2)
	values := map[string]any{
		"Filter":          filter,
		"Builder":         builder,
		"Rotating":        rotating,
		"Scalable":        scalable,
		"Option":          bloom.WithGrowth(3),
		"RotatingStats":   rotating.Stats(),
		"GenerationStats": rotating.Stats().Current,
		"ScalableStats":   scalable.Stats(),
		"StageStats":      scalable.Stats().Stages[0],
	}
	// An interface type has no values of its own: what json.Marshal sees
	// is the type of whatever implements it.
	interfaces := []string{"Clock"}

	for _, name := range exportedTypes(t, ".") {
		if slices.Contains(interfaces, name) {
			continue
		}
		v, ok := values[name]
		if !assert.True(t, ok, "bloom.%s has no value in TestJSONEveryType: add one", name) {
			continue
		}
		b, err := json.Marshal(v)
		if err != nil {
			t.Logf("%s: %v", name, err)
			continue
		}
		assert.NotEqual(t, "{}", string(b), "bloom.%s marshals as {}", name)
		t.Logf("%s: %.60s", name, b)
	}
	for _, name := range interfaces {
		assert.Contains(t, exportedTypes(t, "."), name, "an interface listed in TestJSONEveryType is gone")
	}

	// The filters write their bytes, the Builder an error that says what to
	// marshal instead.
	for name, v := range map[string]interface{ MarshalText() ([]byte, error) }{"Filter": filter, "Rotating": rotating, "Scalable": scalable} {
		b, err := json.Marshal(v)
		require.NoError(t, err, name)
		text, err := v.MarshalText()
		require.NoError(t, err, name)
		assert.Equal(t, `"`+string(text)+`"`, string(b), name)
	}
	_, err = json.Marshal(builder)
	assert.ErrorIs(t, err, bloom.ErrInvalidArgument)
	assert.ErrorContains(t, err, "a Builder is not data: encode the Filter its Filter method returns")
}
