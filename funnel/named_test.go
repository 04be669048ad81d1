package funnel_test

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/mitzbloom/mitzbloom/funnel"
)

// prefixed is a funnel factory of the kind whose funnels used to compare
// equal or not depending on whether the compiler inlined it: every funnel it
// makes shares one code pointer when it is not inlined, and each call site
// gets code of its own when it is. prefixedNoInline is the same factory,
// never inlined.
func prefixed(prefix string) funnel.Funnel[string] {
	return funnel.Func[string](func(v string, into funnel.Sink) {
		into.PutString(prefix)
		into.PutString(v)
	})
}

//go:noinline
func prefixedNoInline(prefix string) funnel.Funnel[string] {
	return funnel.Func[string](func(v string, into funnel.Sink) {
		into.PutString(prefix)
		into.PutString(v)
	})
}

// TestEqualFactory requires funnels made by separate calls of one factory to
// be unequal, inlined or not, however alike their captured variables, and a
// funnel value to equal itself.
func TestEqualFactory(t *testing.T) {
	for name, make := range map[string]func(string) funnel.Funnel[string]{
		"inlinable": prefixed,
		"noinline":  prefixedNoInline,
	} {
		users, orders := make("users:"), make("orders:")
		assert.False(t, funnel.Equal(users, orders), "%s: different prefixes", name)
		assert.False(t, funnel.Equal(users, make("users:")), "%s: two closures with one prefix", name)
		assert.True(t, funnel.Equal(users, users), "%s: a closure and itself", name)
		var again funnel.Funnel[string] = users
		assert.True(t, funnel.Equal(again, users), "%s: the same closure value, copied", name)

		// Named gives them the identity a process can rebuild.
		assert.True(t, funnel.Equal(funnel.Named("users/v1", make("users:")), funnel.Named("users/v1", make("users:"))), name)
		assert.False(t, funnel.Equal(funnel.Named("users/v1", users), funnel.Named("orders/v1", orders)), name)
	}
	// The same factory, inlined here and not: still two closures.
	assert.False(t, funnel.Equal(prefixed("users:"), prefixedNoInline("users:")))
}

func TestNamed(t *testing.T) {
	n := funnel.Named("utf8", funnel.String)
	assert.Equal(t, "utf8", fmt.Sprint(n))
	assert.True(t, funnel.Equal(n, funnel.Named("utf8", funnel.String)))
	// By name only: what it wraps is the name's business.
	assert.True(t, funnel.Equal(n, funnel.Named("utf8", funnel.UnencodedChars)))
	assert.False(t, funnel.Equal(n, funnel.Named("UTF8", funnel.String)))
	// Named and unnamed funnels never equal one another.
	assert.False(t, funnel.Equal(n, funnel.String))
	assert.False(t, funnel.Equal(funnel.String, n))
	// It feeds what it wraps.
	assert.Equal(t, funnel.Append(nil, funnel.String, "héllo"), funnel.Append(nil, n, "héllo"))
	seq := funnel.Sequential(n)
	assert.True(t, funnel.Equal(seq, funnel.Sequential(funnel.Named("utf8", funnel.String))))
	assert.False(t, funnel.Equal(seq, funnel.Sequential(funnel.String)))
}
