package main

import (
	"encoding/hex"
	"fmt"
	"net/netip"
	"strconv"
	"strings"

	"github.com/mitzbloom/mitzbloom/funnel"
)

// A keyKind is what -funnel names: how a line of text becomes a key, and the
// funnel that feeds the key to the filter. A nil parse means that T is string
// and a line is its own key, which lets build put a batch of lines as it is.
type keyKind[T any] struct {
	name   string
	funnel funnel.Funnel[T]
	parse  func(line string) (T, error)
}

// key parses one line.
func (k keyKind[T]) key(line string) (T, error) {
	if k.parse == nil {
		return any(line).(T), nil
	}
	return k.parse(line)
}

// keyKinds are the values of -funnel, in the order of the docs. Each parse
// accepts the text of a key as the Java service's own parsing would, so that
// both sides build the same filter from the same file.
var keyKinds = []keys{
	keyKind[string]{"string", funnel.String, nil},
	keyKind[string]{"chars", funnel.UnencodedChars, nil},
	keyKind[int64]{"long", funnel.Int64, parseLong},
	keyKind[int32]{"int", funnel.Int32, parseInt},
	keyKind[[]byte]{"bytes", funnel.Bytes, hex.DecodeString},
	keyKind[netip.Addr]{"addr", funnel.Addr, netip.ParseAddr},
	keyKind[netip.AddrPort]{"addrport", funnel.AddrPort, netip.ParseAddrPort},
}

// keys hides the type parameter of a keyKind from the subcommands, which
// pick one at run time.
type keys interface {
	funnelName() string
	build(b *builder) error
	query(q *querier) (allPresent bool, err error)
}

func (k keyKind[T]) funnelName() string { return k.name }

// aKey returns the name of k with its article, as in "an addr".
func (k keyKind[T]) aKey() string {
	if strings.ContainsRune("aeiou", rune(k.name[0])) {
		return "an " + k.name
	}
	return "a " + k.name
}

func keysFor(name string) (keys, error) {
	for _, k := range keyKinds {
		if k.funnelName() == name {
			return k, nil
		}
	}
	return nil, fmt.Errorf("unknown funnel %q: want one of %s", name, funnelNames())
}

// funnelNames lists the values of -funnel.
func funnelNames() string {
	names := make([]string, len(keyKinds))
	for i, k := range keyKinds {
		names[i] = k.funnelName()
	}
	return strings.Join(names, ", ")
}

func parseLong(line string) (int64, error) {
	v, err := strconv.ParseInt(line, 10, 64)
	return v, numError(err)
}

func parseInt(line string) (int32, error) {
	v, err := strconv.ParseInt(line, 10, 32)
	return int32(v), numError(err)
}

// numError drops strconv's repetition of the input, which the line report
// already shows.
func numError(err error) error {
	if ne, ok := err.(*strconv.NumError); ok {
		return ne.Err
	}
	return err
}

// quoteLine shows a bad line in an error, shortened: a line can be
// megabytes of garbage.
func quoteLine(line string) string {
	const max = 80
	if len(line) > max {
		return strconv.Quote(line[:max]) + "..."
	}
	return strconv.Quote(line)
}
