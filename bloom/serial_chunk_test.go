package bloom_test

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"testing/iotest"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mitzbloom/mitzbloom/bloom"
	"github.com/mitzbloom/mitzbloom/bloom/raw"
	"github.com/mitzbloom/mitzbloom/funnel"
)

// chunkWords is the number of words in the chunks WriteTo and ReadFrom
// move at a time (256 KiB); a stream of unknown size is read into parts of
// 1, 1, 2, 4, … chunks until they hold half of its words.
const chunkWords = 256 << 10 / 8

// chunkSizes are word counts on both sides of every boundary the encoding
// and decoding loops have: the 8 words of an unrolled step, a chunk, the
// two chunks below which a stream of unknown size is read at once, and the
// parts such a stream is read into before the filter is allocated.
var chunkSizes = []int{
	1, 7, 8, 9, 63, 65,
	chunkWords - 1, chunkWords, chunkWords + 1,
	2*chunkWords - 1, 2 * chunkWords, 2*chunkWords + 1,
	4*chunkWords - 3, 4 * chunkWords, 4*chunkWords + 5,
	8*chunkWords + 7,
}

// randomFilter returns a filter of words words whose bits are random, with
// about half of them set, as in a full filter, and its encoding in Guava's
// writeTo format, made here byte by byte as the reference that the
// encoders must match.
func randomFilter(t testing.TB, words int, seed uint64) (*bloom.Filter[int64], []byte) {
	t.Helper()
	// At p = 0.5 New makes m = n·ln 2/ln²2 = n/ln 2 bits, rounded down,
	// and a filter of at least one word.
	f, err := bloom.New(funnel.Int64, int64(float64(words*64)*0.6931471805599453), 0.5)
	require.NoError(t, err)
	require.EqualValues(t, words*64, f.BitSize(), "the sizing of a filter of %d words", words)
	r := rand.New(rand.NewPCG(seed, uint64(words)))
	enc := binary.BigEndian.AppendUint32([]byte{byte(raw.Strategy(f).Ordinal()), byte(f.NumHashFunctions())}, uint32(words))
	for range words {
		enc = binary.BigEndian.AppendUint64(enc, r.Uint64())
	}
	require.NoError(t, raw.OrEncoded(f, 0, string(enc[6:])))
	return f, enc
}

// callRecorder is a writer that records the size of each Write.
type callRecorder struct {
	bytes.Buffer
	calls []int
}

func (w *callRecorder) Write(p []byte) (int, error) {
	w.calls = append(w.calls, len(p))
	return w.Buffer.Write(p)
}

// TestRoundTripChunkBoundaries writes and reads filters of every size in
// chunkSizes through every reader ReadFrom treats differently: one that
// tells its size (*bytes.Reader, *os.File), one that does not
// (bufio.Reader, io.MultiReader, a reader returning half of what is asked),
// and UnmarshalBinary's bytes. Each must give back the same filter, read
// exactly its bytes and leave what follows in the reader.
func TestRoundTripChunkBoundaries(t *testing.T) {
	sizes := chunkSizes
	if testing.Short() {
		sizes = []int{1, 9, chunkWords + 1, 2*chunkWords + 1, 4*chunkWords + 5}
	}
	dir := t.TempDir()
	for _, words := range sizes {
		t.Run(fmt.Sprintf("words=%d", words), func(t *testing.T) {
			f, want := randomFilter(t, words, 1)
			got, err := f.MarshalBinary()
			require.NoError(t, err)
			assert.True(t, bytes.Equal(want, got), "MarshalBinary differs from the bytes the filter was made of")

			var w callRecorder
			n, err := f.WriteTo(&w)
			require.NoError(t, err)
			assert.EqualValues(t, len(want), n)
			assert.True(t, bytes.Equal(want, w.Bytes()), "WriteTo writes what MarshalBinary returns")
			for i, c := range w.calls {
				assert.LessOrEqual(t, c, 6+8*chunkWords, "WriteTo's write %d", i)
			}
			assert.Len(t, w.calls, (words+chunkWords-1)/chunkWords, "one write per chunk")

			const trailer = "trailing"
			stream := append(append([]byte(nil), want...), trailer...)
			path := filepath.Join(dir, fmt.Sprintf("f%d.bin", words))
			require.NoError(t, os.WriteFile(path, stream, 0o644))
			file, err := os.Open(path)
			require.NoError(t, err)
			defer file.Close()
			readers := map[string]io.Reader{
				"bytes.Reader": bytes.NewReader(stream),
				"os.File":      file,
				"bufio.Reader": bufio.NewReader(bytes.NewReader(stream)),
				"MultiReader":  io.MultiReader(bytes.NewReader(stream[:len(stream)/3]), bytes.NewReader(stream[len(stream)/3:])),
				"HalfReader":   iotest.HalfReader(bytes.NewReader(stream)),
			}
			for name, r := range readers {
				got, err := bloom.ReadFrom(r, funnel.Int64)
				require.NoError(t, err, name)
				assert.True(t, got.Equal(f), "%s: the filter read differs", name)
				rest, err := io.ReadAll(r)
				require.NoError(t, err, name)
				assert.Equal(t, trailer, string(rest), "%s: the bytes after the filter", name)
			}
			var u bloom.Filter[int64]
			require.NoError(t, u.UnmarshalBinary(want))
			assert.True(t, u.Equal(f), "UnmarshalBinary")
		})
	}
}

// TestTruncatedAtChunkBoundaries cuts filters short at and around the
// chunk boundaries, through each kind of reader: each must say how many of
// the filter's bytes arrived, having allocated no more than a few times
// that.
func TestTruncatedAtChunkBoundaries(t *testing.T) {
	const words = 8*chunkWords + 7
	_, full := randomFilter(t, words, 2)
	dir := t.TempDir()
	cuts := []int{6, 7, 6 + 8*chunkWords - 1, 6 + 8*chunkWords, 6 + 8*chunkWords + 1,
		6 + 16*chunkWords + 3, 6 + 32*chunkWords, len(full) - 1}
	if testing.Short() {
		cuts = []int{7, 6 + 8*chunkWords + 1, len(full) - 1}
	}
	for _, cut := range cuts {
		data := full[:cut]
		path := filepath.Join(dir, fmt.Sprintf("cut%d.bin", cut))
		require.NoError(t, os.WriteFile(path, data, 0o644))
		for _, kind := range []string{"bytes.Reader", "os.File", "bufio.Reader", "UnmarshalBinary"} {
			var r io.Reader
			switch kind {
			case "bytes.Reader":
				r = bytes.NewReader(data)
			case "bufio.Reader":
				r = bufio.NewReader(bytes.NewReader(data))
			case "os.File":
				file, err := os.Open(path)
				require.NoError(t, err)
				defer file.Close()
				r = file
			}
			var err error
			if r == nil {
				var u bloom.Filter[int64]
				err = u.UnmarshalBinary(data)
			} else {
				var got *bloom.Filter[int64]
				got, err = bloom.ReadFrom(r, funnel.Int64)
				assert.Nil(t, got)
			}
			assert.ErrorIs(t, err, bloom.ErrCorrupt, "%s cut at %d", kind, cut)
			assert.ErrorIs(t, err, io.ErrUnexpectedEOF, "%s cut at %d", kind, cut)
			assert.ErrorContains(t, err, fmt.Sprintf("stream ends after %d of %d bytes", cut, len(full)), kind)
		}
	}
}

// lyingLen is a reader whose Len claims more bytes than it holds: ReadFrom
// may allocate what it claims, but must still report the stream cut short.
type lyingLen struct{ *bytes.Reader }

func (r lyingLen) Len() int { return 1 << 30 }

// TestHostileHeaderEachReader announces the largest filter this platform
// holds (2³¹−1 words, 16 GiB, on a 64-bit one) in a stream that holds a
// few chunks of it, through every kind of reader that cannot vouch for
// those bytes: each must fail having allocated a few times what arrived,
// not what the header announced.
func TestHostileHeaderEachReader(t *testing.T) {
	words := min(math.MaxInt32, math.MaxInt/8)
	header := binary.BigEndian.AppendUint32([]byte{1, 5}, uint32(words))
	data := append(header, make([]byte, 5*8*chunkWords+100)...)
	path := filepath.Join(t.TempDir(), "hostile.bin")
	require.NoError(t, os.WriteFile(path, data, 0o644))
	pr, pw := io.Pipe()
	go func() {
		_, _ = pw.Write(data)
		pw.Close()
	}()
	file, err := os.Open(path)
	require.NoError(t, err)
	defer file.Close()
	for _, c := range []struct {
		name string
		r    io.Reader
	}{
		{"bytes.Reader", bytes.NewReader(data)},
		{"strings.Reader", strings.NewReader(string(data))},
		{"bytes.Buffer", bytes.NewBuffer(data)},
		{"os.File", file},
		{"pipe", pr},
		{"bufio.Reader", bufio.NewReader(bytes.NewReader(data))},
		{"OneByteReader", iotest.OneByteReader(bytes.NewReader(data[:6+8*chunkWords+3]))},
	} {
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		got, err := bloom.ReadFrom(c.r, funnel.String)
		runtime.ReadMemStats(&after)
		assert.Nil(t, got, c.name)
		assert.ErrorIs(t, err, io.ErrUnexpectedEOF, c.name)
		allocated := after.TotalAlloc - before.TotalAlloc
		assert.Less(t, allocated, uint64(4*len(data)+1<<20), "%s: allocated %d bytes for a %d-byte stream", c.name, allocated, len(data))
	}

	// A reader that claims to hold the filter may have it allocated, but
	// is still caught short.
	got, err := bloom.ReadFrom(lyingLen{bytes.NewReader(data[:6+8*chunkWords+3])}, funnel.String)
	assert.Nil(t, got)
	assert.ErrorIs(t, err, io.ErrUnexpectedEOF)

	var u bloom.Filter[string]
	err = u.UnmarshalBinary(data)
	assert.ErrorContains(t, err, fmt.Sprintf("stream ends after %d of %d bytes", len(data), 6+8*int64(words)))
}

// TestReadFromFileOffset reads filters back to back from one file: the
// size ReadFrom learns from the file is what remains after the offset.
func TestReadFromFileOffset(t *testing.T) {
	a, encA := randomFilter(t, chunkWords+1, 3)
	b, encB := randomFilter(t, 3, 4)
	path := filepath.Join(t.TempDir(), "two.bin")
	require.NoError(t, os.WriteFile(path, append(encA, encB...), 0o644))
	file, err := os.Open(path)
	require.NoError(t, err)
	defer file.Close()
	gotA, err := bloom.ReadFrom(file, funnel.Int64)
	require.NoError(t, err)
	gotB, err := bloom.ReadFrom(file, funnel.Int64)
	require.NoError(t, err)
	assert.True(t, gotA.Equal(a))
	assert.True(t, gotB.Equal(b))
	_, err = bloom.ReadFrom(file, funnel.Int64)
	assert.Equal(t, io.EOF, err)
}
