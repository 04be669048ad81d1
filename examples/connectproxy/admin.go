package main

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"sort"
	"strconv"
)

// admin returns the handler of /stats, the counters as JSON, and /metrics,
// the same in the Prometheus text exposition format. It serves anyone who
// reaches it: listen on loopback, or behind access control.
func (p *proxy) admin() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /stats", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		_ = enc.Encode(p.snapshot())
	})
	mux.HandleFunc("GET /metrics", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain; version=0.0.4; charset=utf-8")
		_ = p.writeMetrics(w)
	})
	return mux
}

// metricsWriter writes families of samples in the text exposition format,
// keeping the first error.
type metricsWriter struct {
	w   io.Writer
	err error
}

func (m *metricsWriter) printf(format string, args ...any) {
	if m.err == nil {
		_, m.err = fmt.Fprintf(m.w, format, args...)
	}
}

// family writes the HELP and TYPE lines of name.
func (m *metricsWriter) family(name, typ, help string) {
	m.printf("# HELP %s %s\n# TYPE %s %s\n", name, help, name, typ)
}

// sample writes one sample; labels are pairs of name and value.
func (m *metricsWriter) sample(name string, v float64, labels ...string) {
	m.printf("%s", name)
	for i := 0; i+1 < len(labels); i += 2 {
		sep := ","
		if i == 0 {
			sep = "{"
		}
		m.printf("%s%s=%s", sep, labels[i], strconv.Quote(labels[i+1]))
	}
	if len(labels) > 0 {
		m.printf("}")
	}
	m.printf(" %s\n", strconv.FormatFloat(v, 'g', -1, 64))
}

func (p *proxy) writeMetrics(w io.Writer) error {
	s := p.snapshot()
	m := &metricsWriter{w: w}
	m.family("connectproxy_tunnels_active", "gauge", "Tunnels open now.")
	m.sample("connectproxy_tunnels_active", float64(s.Tunnels.Active))
	m.family("connectproxy_tunnels_total", "counter", "Tunnels opened.")
	m.sample("connectproxy_tunnels_total", float64(s.Tunnels.Total))
	m.family("connectproxy_tunnel_bytes_total", "counter", "Bytes carried by tunnels, up from clients and down to them.")
	m.sample("connectproxy_tunnel_bytes_total", float64(s.Tunnels.BytesUp), "direction", "up")
	m.sample("connectproxy_tunnel_bytes_total", float64(s.Tunnels.BytesDown), "direction", "down")

	listeners := make([]string, 0, len(s.Connections))
	for name := range s.Connections {
		listeners = append(listeners, name)
	}
	sort.Strings(listeners)
	for _, f := range []struct {
		name, typ, help string
		v               func(connJSON) float64
	}{
		{"connectproxy_connections_active", "gauge", "Client connections open now, tunnels' included.", func(c connJSON) float64 { return float64(c.Active) }},
		{"connectproxy_connections_idle", "gauge", "Client connections open with no request in progress and no tunnel.", func(c connJSON) float64 { return float64(c.Idle) }},
		{"connectproxy_connections_max", "gauge", "Client connections allowed open at once (-max-conns).", func(c connJSON) float64 { return float64(c.Max) }},
		{"connectproxy_connections_accepted_total", "counter", "Client connections let in.", func(c connJSON) float64 { return float64(c.Accepted) }},
		{"connectproxy_connections_refused_total", "counter", "Client connections closed at once at the cap, when none was idle.", func(c connJSON) float64 { return float64(c.Refused) }},
		{"connectproxy_connections_shed_total", "counter", "Idle client connections closed at the cap to let a new one in.", func(c connJSON) float64 { return float64(c.Shed) }},
	} {
		m.family(f.name, f.typ, f.help)
		for _, name := range listeners {
			m.sample(f.name, f.v(s.Connections[name]), "listener", name)
		}
	}

	m.family("connectproxy_refusals_total", "counter", "Requests refused, by reason.")
	reasons := make([]string, 0, len(s.Rejected))
	for r := range s.Rejected {
		reasons = append(reasons, r)
	}
	sort.Strings(reasons)
	for _, r := range reasons {
		m.sample("connectproxy_refusals_total", float64(s.Rejected[r]), "reason", r)
	}

	seen := []struct {
		kind string
		s    seenJSON
	}{{"destination", s.Destinations}, {"client", s.Clients}}
	m.family("connectproxy_first_seen_total", "counter", "Tunnels whose destination or client the filter did not remember.")
	for _, k := range seen {
		m.sample("connectproxy_first_seen_total", float64(k.s.FirstSeen), "kind", k.kind)
	}
	m.family("connectproxy_repeats_total", "counter", "Tunnels whose destination or client the filter remembered.")
	for _, k := range seen {
		m.sample("connectproxy_repeats_total", float64(k.s.Repeats), "kind", k.kind)
	}
	m.family("connectproxy_filter_fill_ratio", "gauge", "Fraction of the bits set in a filter generation.")
	for _, k := range seen {
		m.sample("connectproxy_filter_fill_ratio", k.s.Filter.Current.FillRatio, "kind", k.kind, "generation", "current")
		if prev := k.s.Filter.Previous; prev != nil {
			m.sample("connectproxy_filter_fill_ratio", prev.FillRatio, "kind", k.kind, "generation", "previous")
		}
	}
	m.family("connectproxy_filter_expected_fpp", "gauge", "Expected false-positive probability of a filter, both generations together.")
	for _, k := range seen {
		m.sample("connectproxy_filter_expected_fpp", k.s.Filter.ExpectedFPP, "kind", k.kind)
	}
	m.family("connectproxy_filter_rotations_total", "counter", "Filter generations started.")
	for _, k := range seen {
		m.sample("connectproxy_filter_rotations_total", float64(k.s.Filter.Rotations), "kind", k.kind)
	}
	m.family("connectproxy_filter_early_rotations_total", "counter", "Filter generations started because the current one was full.")
	for _, k := range seen {
		m.sample("connectproxy_filter_early_rotations_total", float64(k.s.Filter.EarlyRotations), "kind", k.kind)
	}
	return m.err
}
