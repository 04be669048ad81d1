// Package golden loads the vectors that real Guava 31.1 computed, described
// in VECTORS.md, for the tests of the other packages. Nothing in it is
// computed by this module.
package golden

import (
	_ "embed"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"math"
	"sync"

	"github.com/mitzbloom/mitzbloom/funnel"
)

//go:embed vectors.json
var vectorsJSON []byte

// Vectors is the content of vectors.json.
type Vectors struct {
	GuavaVersion string
	Sizing       []Sizing
	Hashes       []Hash
	Filters      []Filter
	Ruled        []Ruled
	Unions       []Union
}

// Sizing is one call of BloomFilter.create's sizing.
type Sizing struct {
	ExpectedInsertions int64
	FppBits            uint64
	OptimalNumOfBits   int64
	NumHashFunctions   int // Guava 31.1's rule
	BitSize            int64
	Error              string // "", "zero", "tooLarge" or "tooManyHashFunctions"
}

// Fpp returns the exact false-positive probability of s.
func (s Sizing) Fpp() float64 { return math.Float64frombits(s.FppBits) }

// Hash is Guava's murmur3_128 hash of one value.
type Hash struct {
	Funnel     string
	Value      json.RawMessage
	Murmur3128 string `json:"murmur3_128"`
}

// Filter is a filter built from listed values.
type Filter struct {
	Funnel                  string
	Strategy                string
	StrategyOrdinal         int
	ExpectedInsertions      int64
	Fpp                     float64
	BitSize                 int64
	NumHashFunctions        int
	Inserts                 []json.RawMessage
	PutResults              []bool
	Probes                  []json.RawMessage
	ProbeResults            []bool
	ApproximateElementCount int64
	ExpectedFppBits         uint64
	SerializedLength        int
	SerializedSha256        string
	SerializedHex           string
}

// Ruled is a large filter whose values follow a rule.
type Ruled struct {
	Rule                    string // "int64" or "string"
	Strategy                string
	ExpectedInsertions      int64
	Fpp                     float64
	Inserts, Probes         int
	PutsThatChanged         int
	FalsePositives          int
	ProbeResults            []bool
	BitSize                 int64
	NumHashFunctions        int
	ApproximateElementCount int64
	ExpectedFppBits         uint64
	SerializedLength        int
	SerializedSha256        string
}

// Int64Rule is the value of index i under the "int64" rule.
func Int64Rule(i int) int64 { return int64(uint64(i) * 0x9E3779B97F4A7C15) }

// StringRule is the value of index i under the "string" rule.
func StringRule(i int) string { return fmt.Sprintf("host-%d.example:%d", i, i%65536) }

// Union is two filters combined with putAll.
type Union struct {
	Funnel                  string
	Strategy                string
	ExpectedInsertions      int64
	Fpp                     float64
	InsertsA, InsertsB      []json.RawMessage
	ApproximateElementCount int64
	SerializedSha256        string
}

// Record is a value of the custom "record" funnel, RecordFunnel.
type Record struct {
	Byte       int8
	Bool       bool
	Short      int16
	Char       uint16
	Int        int32
	Long       int64
	FloatBits  int32
	DoubleBits int64
	String     string
	Chars      string
	Bytes      string // hex
}

// RecordFunnel feeds a Record as the Java program that wrote the vectors
// did: one field of every primitive kind, in order.
var RecordFunnel = funnel.Func[Record](func(r Record, into funnel.Sink) {
	into.PutByte(byte(r.Byte))
	into.PutBool(r.Bool)
	into.PutInt16(r.Short)
	into.PutChar(r.Char)
	into.PutInt32(r.Int)
	into.PutInt64(r.Long)
	into.PutFloat32(math.Float32frombits(uint32(r.FloatBits)))
	into.PutFloat64(math.Float64frombits(uint64(r.DoubleBits)))
	into.PutString(r.String)
	into.PutUnencodedChars(r.Chars)
	into.PutBytes(MustHex(r.Bytes))
})

// Decode decodes a JSON value of the given type, failing loudly on vectors
// that do not parse.
func Decode[T any](raw json.RawMessage) T {
	var v T
	if err := json.Unmarshal(raw, &v); err != nil {
		panic(fmt.Sprintf("golden: decoding %s: %v", raw, err))
	}
	return v
}

// DecodeAll decodes every value of raws.
func DecodeAll[T any](raws []json.RawMessage, decode func(json.RawMessage) T) []T {
	out := make([]T, len(raws))
	for i, r := range raws {
		out[i] = decode(r)
	}
	return out
}

// DecodeBytes decodes a "bytes" value, written as hex.
func DecodeBytes(raw json.RawMessage) []byte { return MustHex(Decode[string](raw)) }

// MustHex decodes hex, panicking on malformed vectors.
func MustHex(s string) []byte {
	b, err := hex.DecodeString(s)
	if err != nil {
		panic(fmt.Sprintf("golden: bad hex %q: %v", s, err))
	}
	return b
}

var (
	once    sync.Once
	vectors Vectors
	loadErr error
)

// Load returns the vectors, parsed once.
func Load() (*Vectors, error) {
	once.Do(func() { loadErr = json.Unmarshal(vectorsJSON, &vectors) })
	return &vectors, loadErr
}
