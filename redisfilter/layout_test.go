package redisfilter

import (
	"bufio"
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// recordedSlots returns testdata/keyslots.txt: hash tags and the slots that
// a real Redis Cluster node gave them.
func recordedSlots(t testing.TB) map[string]uint16 {
	t.Helper()
	f, err := os.Open("testdata/keyslots.txt")
	require.NoError(t, err)
	defer f.Close()
	slots := make(map[string]uint16)
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		if strings.HasPrefix(line, "#") {
			continue
		}
		slot, quoted, ok := strings.Cut(line, "\t")
		require.True(t, ok, "line %q", line)
		n, err := strconv.ParseUint(slot, 10, 16)
		require.NoError(t, err, "line %q", line)
		tag, err := strconv.Unquote(quoted)
		require.NoError(t, err, "line %q", line)
		slots[tag] = uint16(n)
	}
	require.NoError(t, sc.Err())
	require.Greater(t, len(slots), 50)
	return slots
}

// TestKeySlot checks the CRC16 of hash tags against the slots a real server
// gave them.
func TestKeySlot(t *testing.T) {
	for tag, want := range recordedSlots(t) {
		assert.Equal(t, want, keySlot(tag), "CLUSTER KEYSLOT {%s}", tag)
	}
	// crc16 continues from a prefix's CRC, as layout computes name#s.j.
	assert.Equal(t, keySlot("name#17.42"), crc16(crc16(0, "name#17."), "42")%clusterSlots)
}

func TestShardLayout(t *testing.T) {
	const name = "users"
	t.Run("one string", func(t *testing.T) {
		shards := layout(name, 9600, 1200)
		require.Len(t, shards, 1)
		s := shards[0]
		assert.Equal(t, shard{first: 0, nbits: 9600, tag: name, key: "{users}", cfgKey: "{users}:config", holdKey: "{users}:hold", gensKey: "{users}:generations",
			logKey: "{users}:changes"}, s)
		assert.Equal(t, "{users}:1234", s.genKey(1234))
		assert.Equal(t, "{users}", s.dataKey(false))
		assert.Equal(t, "{users}:generations", s.dataKey(true))
	})
	for _, n := range []int64{2, 3, 6, 19, 256} {
		shards := layout(name, n*640-64, 80) // the last shard one word short
		require.Len(t, shards, int(n))
		assert.Equal(t, name, shards[0].tag, "shard 0 is {name} whatever the number of shards")
		k0 := int64(keySlot(name)) * n / clusterSlots
		if int64(keySlot(name)) >= (k0+1)*clusterSlots/n {
			k0++
		}
		for i, s := range shards {
			assert.Equal(t, int64(i)*640, s.first, "n=%d shard %d", n, i)
			want := int64(640)
			if i == len(shards)-1 {
				want = 576
			}
			assert.Equal(t, want, s.nbits, "n=%d shard %d", n, i)
			if i > 0 {
				assert.True(t, s.tag == name+"#"+strconv.Itoa(i) || strings.HasPrefix(s.tag, name+"#"+strconv.Itoa(i)+"."), "n=%d shard %d tag %q", n, i, s.tag)
			}
			assert.Equal(t, "{"+s.tag+"}", s.key)
			k := (k0 + int64(i)) % n
			slot := int64(keySlot(s.tag))
			assert.True(t, k*clusterSlots/n <= slot && slot < (k+1)*clusterSlots/n, "n=%d shard %d: slot %d outside range %d", n, i, slot, k)
		}
	}
	t.Run("beyond evenShards", func(t *testing.T) {
		shards := layout(name, 293*64, 8)
		seen := make(map[uint16]bool)
		for i, s := range shards {
			slot := keySlot(s.tag)
			assert.False(t, seen[slot], "shard %d shares slot %d", i, slot)
			seen[slot] = true
		}
	})
	t.Run("the same for every process", func(t *testing.T) {
		assert.Equal(t, layout(name, 19*640, 80), layout(name, 19*640, 80))
	})
}

func TestShardBytesFor(t *testing.T) {
	tests := []struct {
		nbytes, asked, want int64
		err                 string
	}{
		{1200, 0, 1200, ""},
		{defaultShardBytes, 0, defaultShardBytes, ""},
		{defaultShardBytes + 8, 0, defaultShardBytes, ""},
		{1200, 64, 64, ""},
		{1200, 4096, 1200, ""},
		{1200, 100, 0, "shard size (100 bytes) must be a positive multiple of 8"},
		{1200, -8, 0, "must be a positive multiple of 8"},
		{1200, maxShardBytes + 8, 0, "at most 536870912 (512 MiB)"},
	}
	for _, tc := range tests {
		got, err := shardBytesFor(tc.nbytes, tc.asked)
		if tc.err != "" {
			assert.ErrorContains(t, err, tc.err, "%d bytes, asked %d", tc.nbytes, tc.asked)
			continue
		}
		assert.NoError(t, err)
		assert.Equal(t, tc.want, got, "%d bytes, asked %d", tc.nbytes, tc.asked)
	}
}

func TestValidName(t *testing.T) {
	for _, name := range []string{"a", "users", "with space", "π", "a:b", strings.Repeat("n", maxNameLen)} {
		assert.NoError(t, validName(name), "%q", name)
	}
	tests := map[string]string{
		"":                                "empty",
		strings.Repeat("n", maxNameLen+1): "257 bytes long",
		"\xff":                            "not valid UTF-8",
		"a{b":                             "'{', '}' or '#'",
		"a}b":                             "'{', '}' or '#'",
		"a#1":                             "'{', '}' or '#'",
		"a\nb":                            "control character",
		"a\x7fb":                          "control character",
		"a\u0085b":                        "control character",
		"a\u009fb":                        "control character",
	}
	for name, want := range tests {
		assert.ErrorContains(t, validName(name), want, "%q", name)
	}
}
