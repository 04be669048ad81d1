package redisfilter

import (
	"fmt"
	"maps"
	"os"
	"os/exec"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mitzbloom/mitzbloom/redisfilter/internal/wire"
)

var allScripts = map[string]wire.Script{
	"guard": guardScript, "unguard": unguardScript, "read": readScript,
	"merge": mergeScript, "inspect": inspectScript, "claim": claimScript,
	"create": createScript, "changes": changesScript, "push": pushScript,
	"delete": deleteScript,
}

// TestScriptsAll checks that allScripts, which the other tests walk, has
// every script of lua/ but the libraries.
func TestScriptsAll(t *testing.T) {
	entries, err := luaFiles.ReadDir("lua")
	require.NoError(t, err)
	var files []string
	for _, e := range entries {
		if name := strings.TrimSuffix(e.Name(), ".lua"); name != "lib" && name != "log" {
			files = append(files, name)
		}
	}
	assert.ElementsMatch(t, files, slices.Collect(maps.Keys(allScripts)))
}

func TestScriptText(t *testing.T) {
	for name, s := range allScripts {
		src := luaSource(name)
		assert.True(t, strings.HasPrefix(s.Text(), strings.SplitN(src, "\n", 2)[0]+"\n"), "%s starts with its shebang", name)
		assert.Equal(t, strings.HasPrefix(src, "#!lua flags=no-writes\n"), s.ReadOnly(), name)
		for line := range strings.Lines(s.Text()) {
			assert.False(t, strings.HasPrefix(strings.TrimSpace(line), "--"), "%s sends a comment: %q", name, line)
		}
		assert.Contains(t, src, "-- KEYS", "%s names its KEYS at the top", name)
		if regexp.MustCompile(`check_\w+\(|problem\(|foreign\(|HOLD|GENS_MARK`).MatchString(src) {
			assert.Contains(t, s.Text(), "local function check_config(", "%s has lib.lua's functions", name)
		}
		assert.NotContains(t, s.Text(), "'TIME'", "%s calls TIME, which ACL categories leave out", name)
		if regexp.MustCompile(`(read|append|reset)_log\(|log_bytes\(|set_bits\(`).MatchString(src) {
			assert.Contains(t, s.Text(), "local function append_log(", "%s has log.lua's functions", name)
		}
	}
}

// TestLogHeader checks that the change log's header is as long in Go as in
// Lua, and that a window's record has the same mark.
func TestLogHeader(t *testing.T) {
	assert.Contains(t, luaSource("lib"), "\nlocal GENS_MARK = '"+gensMark+"'\n")
	assert.Contains(t, luaSource("log"), "\nlocal LOG_HEADER = "+strconv.Itoa(logHeader)+"\n")
	assert.Len(t, fmt.Sprintf(logHeaderFormat, 123, 456), logHeader)
}

// TestScriptCodes checks that the problem codes the scripts report are the
// codes of errors.go's table.
func TestScriptCodes(t *testing.T) {
	known := make(map[string]bool)
	for _, c := range codes {
		if strings.HasPrefix(c.code, "MITZBLOOM_") {
			known[strings.TrimPrefix(c.code, "MITZBLOOM_")] = true
		}
	}
	used := make(map[string]bool)
	for _, name := range append([]string{"lib", "log"}, slices.Collect(maps.Keys(allScripts))...) {
		for _, m := range regexp.MustCompile(`problem\('([A-Z]+)'`).FindAllStringSubmatch(luaSource(name), -1) {
			assert.True(t, known[m[1]], "%s.lua reports %s, which errors.go does not know", name, m[1])
			used[m[1]] = true
		}
	}
	for code := range known {
		assert.True(t, used[code], "errors.go has MITZBLOOM_%s, which no script reports", code)
	}
}

// TestScriptsCompile compiles every script as it is sent with luac5.1 -p
// (Redis runs Lua 5.1), if it is on the PATH; CI installs it.
func TestScriptsCompile(t *testing.T) {
	luac, err := exec.LookPath("luac5.1")
	if err != nil {
		if os.Getenv("CI") != "" {
			t.Fatal("luac5.1 is not on the PATH; .ci/run installs the Debian package lua5.1")
		}
		t.Skip("luac5.1 is not on the PATH; install the Debian package lua5.1")
	}
	for name, s := range allScripts {
		cmd := exec.Command(luac, "-p", "-")
		cmd.Stdin = strings.NewReader(s.Text())
		out, err := cmd.CombinedOutput()
		require.NoError(t, err, "%s: %s", name, out)
	}
}

// TestScriptReplies checks that the replies of changes.lua and push.lua have
// as many fields as logproto.go reads: the count of each return statement
// that builds a table, at the top level of its braces.
func TestScriptReplies(t *testing.T) {
	fields := func(name string) []int {
		var counts []int
		for _, m := range regexp.MustCompile(`(?m)^\s*return (\{.*\})\s*$`).FindAllStringSubmatch(luaSource(name), -1) {
			n, depth := 1, 0
			for _, r := range m[1] {
				switch r {
				case '{', '(':
					depth++
				case '}', ')':
					depth--
				case ',':
					if depth == 1 {
						n++
					}
				}
			}
			counts = append(counts, n)
		}
		return counts
	}
	assert.ElementsMatch(t, []int{changesFields, changesFields + 1}, fields("changes"), "changes.lua's replies, without and with a range")
	assert.Equal(t, []int{pushFields}, fields("push"), "push.lua's reply")
}
