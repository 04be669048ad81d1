package bloom

import "testing"

func TestDropPaths(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"funnel.Func[string]", "funnel.Func[string]"},
		{"funnel.Func[example.com/app/visits.Visit]", "funnel.Func[visits.Visit]"},
		{"funnel.Func[*example.com/app/visits.Visit]", "funnel.Func[*visits.Visit]"},
		{"example.com/app/visits.pair[example.com/a.K,example.com/b/c.V]", "visits.pair[a.K,c.V]"},
		{"map[example.com/a.K][]example.com/b.V", "map[a.K][]b.V"},
		{"github.com/mitzbloom/mitzbloom/bloom_test.keyFunnel.func1", "bloom_test.keyFunnel.func1"},
		{"main.main.func2", "main.main.func2"},
	} {
		if got := dropPaths(c.in); got != c.want {
			t.Errorf("dropPaths(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}
