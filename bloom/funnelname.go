package bloom

import (
	"fmt"
	"path"
	"reflect"
	"runtime"
	"strings"
)

// funnelName returns what a filter's String and errors call its funnel: its
// String, which named and built-in funnels have; for a function, such as a
// funnel.Func, its type and which function it is, with the file and line
// where the function begins, so that two funnels of one type read apart;
// otherwise its type. Only String and errors call it, never Put or
// MightContain.
func funnelName(f any) string {
	if s, ok := f.(fmt.Stringer); ok {
		return s.String()
	}
	if v := reflect.ValueOf(f); v.Kind() == reflect.Func && !v.IsNil() {
		if fn := runtime.FuncForPC(v.Pointer()); fn != nil {
			file, line := fn.FileLine(fn.Entry())
			return fmt.Sprintf("%s(%s at %s:%d)", typeName(f), dropPaths(fn.Name()), path.Base(file), line)
		}
	}
	return typeName(f)
}

// typeName returns the type of v as Go code in its package would write it,
// with the package names of the type arguments too.
func typeName(v any) string { return dropPaths(fmt.Sprintf("%T", v)) }

// dropPaths drops the import paths before package names in s, a type's or
// a function's name: "funnel.Func[example.com/app/visits.Visit]" becomes
// "funnel.Func[visits.Visit]".
func dropPaths(s string) string {
	var b strings.Builder
	start := 0 // of the word s[start:i] being read, which may end in '/'
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '/':
			start = i + 1
		case '[', ']', ',', ' ', '*', '(', ')':
			b.WriteString(s[start : i+1])
			start = i + 1
		}
	}
	b.WriteString(s[start:])
	return b.String()
}

// funnelMismatch describes two funnels that are not equal, for the error of a
// PutAll, or a Merge, that cannot combine their filters.
func funnelMismatch(a, b any) string {
	na, nb := funnelName(a), funnelName(b)
	if na == nb {
		// Two closures of one function literal, say, or two values of one
		// funnel type.
		return fmt.Sprintf("%s twice, but two different funnels; funnel.Named makes funnels equal by name", na)
	}
	return na + " != " + nb
}
