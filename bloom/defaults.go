package bloom

import (
	"fmt"
	"net"
	"net/netip"
	"reflect"

	"github.com/mitzbloom/mitzbloom/funnel"
)

// defaultFunnel returns the funnel that decoding into a zero Filter,
// Rotating or Scalable of T uses, which the package documentation lists
// ("Decoding without a funnel"), and whether T has one. Each element type
// that has a built-in funnel has one, and only one: a string decodes with
// funnel.String, never funnel.UnencodedChars, as a Java string with
// Funnels.stringFunnel(UTF_8), the common case.
func defaultFunnel[T any]() (funnel.Funnel[T], bool) {
	var f any
	switch any((*T)(nil)).(type) {
	case *string:
		f = funnel.String
	case *[]byte:
		f = funnel.Bytes
	case *int:
		f = funnel.Int
	case *int32:
		f = funnel.Int32
	case *int64:
		f = funnel.Int64
	case *uint:
		f = funnel.Uint
	case *uint32:
		f = funnel.Uint32
	case *uint64:
		f = funnel.Uint64
	case *float32:
		f = funnel.Float32
	case *float64:
		f = funnel.Float64
	case *bool:
		f = funnel.Bool
	case *netip.Addr:
		f = funnel.Addr
	case *netip.AddrPort:
		f = funnel.AddrPort
	case *net.IP:
		f = funnel.IP
	default:
		return nil, false
	}
	return f.(funnel.Funnel[T]), true
}

// funnelOrDefault returns fn, the funnel of a filter of type typ (such as
// "Filter") that is being decoded into, or if it is nil, because the filter
// is the zero value, the default funnel of T. For a T without one it
// returns an error that says to make the filter with makers first.
func funnelOrDefault[T any](fn funnel.Funnel[T], typ, makers string) (funnel.Funnel[T], error) {
	if fn != nil {
		return fn, nil
	}
	if d, ok := defaultFunnel[T](); ok {
		return d, nil
	}
	elem := dropPaths(reflect.TypeFor[T]().String())
	return nil, fmt.Errorf("%w: decoding into a zero %s[%s], such as the one encoding/json makes for a nil *%s or a map value: "+
		"%s has no built-in funnel to decode with; make the %s with its funnel (%s) before decoding into it, "+
		"and decode into a pointer to it rather than a map value", ErrInvalidArgument, typ, elem, typ, elem, typ, makers)
}
