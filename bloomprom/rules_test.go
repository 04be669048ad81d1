package bloomprom_test

import (
	"encoding/json"
	"os"
	"os/exec"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/prometheus/promql/parser"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.yaml.in/yaml/v3"

	"github.com/mitzbloom/mitzbloom/bloomprom"
)

// exported returns the names of the metrics a Collector describes.
func exported(t *testing.T) []string {
	t.Helper()
	ch := make(chan *prometheus.Desc, 100)
	bloomprom.NewCollector().Describe(ch)
	close(ch)
	fqName := regexp.MustCompile(`fqName: "([a-z_]+)"`)
	var names []string
	for d := range ch {
		m := fqName.FindStringSubmatch(d.String())
		require.NotNil(t, m, d.String())
		names = append(names, m[1])
	}
	slices.Sort(names)
	return names
}

// An expression is a PromQL expression of the rules or the dashboard, and
// where it is.
type expression struct{ where, expr string }

// alertExpressions returns the expressions of alerts.yml.
func alertExpressions(t *testing.T) []expression {
	t.Helper()
	data, err := os.ReadFile("alerts.yml")
	require.NoError(t, err)
	var file struct {
		Groups []struct {
			Name  string
			Rules []struct {
				Alert, Record, Expr string
			}
		}
	}
	require.NoError(t, yaml.Unmarshal(data, &file))
	var out []expression
	for _, g := range file.Groups {
		for _, r := range g.Rules {
			out = append(out, expression{"alerts.yml: " + r.Alert + r.Record, r.Expr})
		}
	}
	require.NotEmpty(t, out)
	return out
}

// grafanaMacros are the variables of Grafana that a dashboard's expressions
// use where PromQL wants a duration, with a value for the parser.
var grafanaMacros = strings.NewReplacer("$__rate_interval", "5m", "$__interval", "1m", "$__range", "1h")

// labelValues matches a query of a dashboard variable,
// label_values(selector, label).
var labelValues = regexp.MustCompile(`^label_values\((.+), *([a-z_]+)\)$`)

// dashboardExpressions returns the expressions of dashboard.json's panels
// and the selectors of its variables' queries, and checks what every
// panel needs to show in Grafana.
func dashboardExpressions(t *testing.T) []expression {
	t.Helper()
	data, err := os.ReadFile("dashboard.json")
	require.NoError(t, err)
	var dash struct {
		UID        string
		Templating struct {
			List []struct {
				Name, Type string
				Query      any
			}
		}
		Panels []struct {
			ID         int
			Type       string
			Title      string
			Datasource struct{ UID string }
			Targets    []struct {
				RefID string `json:"refId"`
				Expr  string
			}
		}
	}
	require.NoError(t, json.Unmarshal(data, &dash))
	require.NotEmpty(t, dash.UID)
	var out []expression
	for _, v := range dash.Templating.List {
		if v.Type != "query" {
			continue
		}
		q, _ := v.Query.(map[string]any)["query"].(string)
		m := labelValues.FindStringSubmatch(q)
		require.NotNil(t, m, "variable %s: query %q is not label_values(selector, label)", v.Name, q)
		out = append(out, expression{"dashboard.json: variable " + v.Name, m[1]})
	}
	ids := map[int]bool{}
	for _, p := range dash.Panels {
		assert.False(t, ids[p.ID], "panel id %d twice", p.ID)
		ids[p.ID] = true
		if p.Type == "row" {
			continue
		}
		assert.Equal(t, "${datasource}", p.Datasource.UID, "panel %q: the data source variable", p.Title)
		assert.NotEmpty(t, p.Targets, "panel %q has no query", p.Title)
		for _, tg := range p.Targets {
			out = append(out, expression{"dashboard.json: " + p.Title + " " + tg.RefID, grafanaMacros.Replace(tg.Expr)})
		}
	}
	return out
}

// reporter is what checkExpression reports to: a *testing.T, or a
// recorder in the test of the check itself.
type reporter interface {
	Errorf(format string, args ...any)
	Helper()
}

// recorder is a reporter that records whether anything failed.
type recorder struct{ failed bool }

func (r *recorder) Errorf(string, ...any) { r.failed = true }
func (r *recorder) Helper()               {}

// rangeFunctions are the functions of a counter's increase.
var rangeFunctions = []string{"rate", "irate", "increase"}

// checkExpression parses e with Prometheus's own parser and returns the
// metrics it names, having checked that counters are read through
// rangeFunctions and gauges are not.
func checkExpression(t reporter, p parser.Parser, e expression) []string {
	t.Helper()
	ast, err := p.ParseExpr(e.expr)
	if !assert.NoError(t, err, "%s: %s", e.where, e.expr) {
		return nil
	}
	var names []string
	parser.Inspect(ast, func(n parser.Node, path []parser.Node) error {
		vs, ok := n.(*parser.VectorSelector)
		if !ok {
			return nil
		}
		assert.NotEmpty(t, vs.Name, "%s: a selector without a metric name: %s", e.where, e.expr)
		names = append(names, vs.Name)
		// A counter's selector is a matrix that a rate function reads.
		viaRate := len(path) >= 2
		if viaRate {
			_, isMatrix := path[len(path)-1].(*parser.MatrixSelector)
			call, isCall := path[len(path)-2].(*parser.Call)
			viaRate = isMatrix && isCall && slices.Contains(rangeFunctions, call.Func.Name)
		}
		if strings.HasSuffix(vs.Name, "_total") {
			// A counter may also select the filters that have it, as an
			// operand of "and", "or" or "unless".
			if bin, ok := path[len(path)-1].(*parser.BinaryExpr); !ok || !bin.Op.IsSetOperator() {
				assert.True(t, viaRate, "%s: counter %s read without %v: %s", e.where, vs.Name, rangeFunctions, e.expr)
			}
		} else {
			assert.False(t, viaRate, "%s: gauge %s read through a counter's function: %s", e.where, vs.Name, e.expr)
		}
		return nil
	})
	return names
}

// TestRulesAndDashboard parses every expression of alerts.yml and
// dashboard.json with Prometheus's PromQL parser: each must name only
// metrics the Collector exports, read counters with rate or increase, and
// between them they must use every metric it exports.
func TestRulesAndDashboard(t *testing.T) {
	names := exported(t)
	t.Logf("%d metrics: %v", len(names), names)
	p := parser.NewParser(parser.Options{})
	used := map[string]bool{}
	for _, e := range append(alertExpressions(t), dashboardExpressions(t)...) {
		for _, name := range checkExpression(t, p, e) {
			assert.Contains(t, names, name, "%s names a metric the Collector does not export: %s", e.where, e.expr)
			used[name] = true
		}
	}
	for _, name := range names {
		assert.True(t, used[name], "no alert or panel shows %s", name)
	}
}

// TestCheckExpression requires the check to catch what it is for: a
// metric misspelt, a counter read as a gauge, a gauge rated.
func TestCheckExpression(t *testing.T) {
	p := parser.NewParser(parser.Options{})
	for _, bad := range []string{
		"mitzbloom_filter_up{",
		"mitzbloom_hybrid_syncs_total > 0",
		"rate(mitzbloom_filter_up[5m])",
	} {
		var r recorder
		checkExpression(&r, p, expression{"bad", bad})
		assert.True(t, r.failed, "%q passes the check", bad)
	}
	assert.Equal(t, []string{"mitzbloom_filter_stages"}, checkExpression(t, p, expression{"good", "mitzbloom_filter_stages > 3"}))
}

// TestAlertRules runs promtool, Prometheus's own checker, on alerts.yml:
// check rules validates the file, and test rules runs alerts_test.yml,
// which feeds each alert the series that must fire it and those that must
// not. Without promtool on the PATH it skips, or fails in CI, where .ci/run
// installs Debian's prometheus package for it.
func TestAlertRules(t *testing.T) {
	promtool, err := exec.LookPath("promtool")
	if err != nil {
		if os.Getenv("CI") != "" {
			t.Fatal("promtool is not on the PATH; .ci/run installs the prometheus package, which has it")
		}
		t.Skip("promtool is not on the PATH, so alerts.yml is checked by TestRulesAndDashboard alone; install the Debian package prometheus for promtool")
	}
	for _, args := range [][]string{{"check", "rules", "alerts.yml"}, {"test", "rules", "alerts_test.yml"}} {
		out, err := exec.Command(promtool, args...).CombinedOutput()
		assert.NoError(t, err, "promtool %s:\n%s", strings.Join(args, " "), out)
		t.Logf("promtool %s:\n%s", strings.Join(args, " "), out)
	}
}

// TestREADME requires the README to document every metric the Collector
// exports, every value of the label error, and every alert of alerts.yml.
func TestREADME(t *testing.T) {
	data, err := os.ReadFile("README.md")
	require.NoError(t, err)
	readme := string(data)
	for _, name := range exported(t) {
		assert.Contains(t, readme, "| `"+name+"` |", "README.md's table of metrics lacks %s", name)
	}
	for _, cause := range bloomprom.Causes() {
		assert.Contains(t, readme, "| `"+cause+"` |", "README.md's table of errors lacks %s", cause)
	}
	for _, e := range alertExpressions(t) {
		alert := strings.TrimPrefix(e.where, "alerts.yml: ")
		assert.Contains(t, readme, "| `"+alert+"` |", "README.md's table of alerts lacks %s", alert)
	}
}
