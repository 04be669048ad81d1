package main

import (
	"encoding/json"
	"log/slog"
	"net/http"

	"github.com/mitzbloom/mitzbloom/bloomprom"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// newAdmin returns the handler of /stats, p's counters as JSON, and
// /metrics, the same in the Prometheus text exposition format with the Go
// runtime's and the process's metrics. It serves anyone who reaches it:
// listen on loopback, or behind access control.
func newAdmin(p *proxy) http.Handler {
	// A registry of the proxy's own, not the default one: each proxy (the
	// tests start many in one process) reports its own counters, and
	// nothing that another package registers globally shows up.
	reg := prometheus.NewRegistry()
	reg.MustRegister(
		proxyCollector{p},
		filterCollector(p.seen),
		collectors.NewGoCollector(),
		collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}),
	)
	mux := http.NewServeMux()
	mux.HandleFunc("GET /stats", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		_ = enc.Encode(p.snapshot())
	})
	mux.Handle("GET /metrics", promhttp.HandlerFor(reg, promhttp.HandlerOpts{
		// A scrape that fails gets a 500, which tells the scraper
		// nothing more: the reason goes to the proxy's log.
		ErrorLog: slog.NewLogLogger(p.cfg.Log.Handler(), slog.LevelWarn),
	}))
	return mux
}

// filterCollector returns the collector of s's filters, the destinations'
// and the clients', which bloomprom reports as every service's: their
// bits, fill, estimated values and false-positive probability against
// their sizing, and their rotations. Its dashboard and alerts apply as
// they are.
func filterCollector(s *seen) *bloomprom.Collector {
	c := bloomprom.NewCollector()
	for name, f := range map[string]any{"destinations": s.dests, "clients": s.clients} {
		if err := c.Register(name, f); err != nil {
			panic(err) // two names, two Rotating filters that know their sizing
		}
	}
	return c
}

// A proxyCollector is a prometheus.Collector of a proxy's counters. It
// reads snapshot at each scrape, as /stats does, so that the two say the
// same and the proxy keeps one set of counters.
type proxyCollector struct{ p *proxy }

func (c proxyCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, f := range metricFamilies {
		ch <- f.desc
	}
}

func (c proxyCollector) Collect(ch chan<- prometheus.Metric) {
	s := c.p.snapshot()
	for _, f := range metricFamilies {
		f.samples(&s, func(v float64, labels ...string) {
			ch <- prometheus.MustNewConstMetric(f.desc, f.typ, v, labels...)
		})
	}
}

// A metricFamily is one of the proxy's metrics, whose samples are read
// from a snapshot.
type metricFamily struct {
	desc    *prometheus.Desc
	typ     prometheus.ValueType
	samples func(s *statsJSON, add addSample)
}

// An addSample adds a sample of value v, with the values of its family's
// labels in the order the family names them.
type addSample func(v float64, labels ...string)

func newFamily(name string, typ prometheus.ValueType, help string, labels []string, samples func(*statsJSON, addSample)) metricFamily {
	return metricFamily{prometheus.NewDesc(name, help, labels, nil), typ, samples}
}

// connFamily returns a metricFamily with a sample for each listener whose
// client connections the proxy limits.
func connFamily(name string, typ prometheus.ValueType, help string, v func(connJSON) int64) metricFamily {
	return newFamily(name, typ, help, []string{"listener"}, func(s *statsJSON, add addSample) {
		for listener, c := range s.Connections {
			add(float64(v(c)), listener)
		}
	})
}

// seenFamily returns a metricFamily with a sample for the destinations and
// one for the clients.
func seenFamily(name string, typ prometheus.ValueType, help string, v func(seenJSON) float64) metricFamily {
	return newFamily(name, typ, help, []string{"kind"}, func(s *statsJSON, add addSample) {
		add(v(s.Destinations), "destination")
		add(v(s.Clients), "client")
	})
}

// metricFamilies are the proxy's metrics, each with the meaning of a field
// of /stats.
var metricFamilies = []metricFamily{
	newFamily("connectproxy_tunnels_active", prometheus.GaugeValue, "Tunnels open now.", nil,
		func(s *statsJSON, add addSample) { add(float64(s.Tunnels.Active)) }),
	newFamily("connectproxy_tunnels_total", prometheus.CounterValue, "Tunnels opened.", nil,
		func(s *statsJSON, add addSample) { add(float64(s.Tunnels.Total)) }),
	newFamily("connectproxy_tunnel_bytes_total", prometheus.CounterValue, "Bytes carried by tunnels, up from clients and down to them.", []string{"direction"},
		func(s *statsJSON, add addSample) {
			add(float64(s.Tunnels.BytesUp), "up")
			add(float64(s.Tunnels.BytesDown), "down")
		}),

	connFamily("connectproxy_connections_active", prometheus.GaugeValue, "Client connections open now, tunnels' included.",
		func(c connJSON) int64 { return c.Active }),
	connFamily("connectproxy_connections_idle", prometheus.GaugeValue, "Client connections open with no request in progress and no tunnel.",
		func(c connJSON) int64 { return c.Idle }),
	connFamily("connectproxy_connections_max", prometheus.GaugeValue, "Client connections allowed open at once (-max-conns).",
		func(c connJSON) int64 { return int64(c.Max) }),
	connFamily("connectproxy_connections_accepted_total", prometheus.CounterValue, "Client connections let in.",
		func(c connJSON) int64 { return c.Accepted }),
	connFamily("connectproxy_connections_refused_total", prometheus.CounterValue, "Client connections closed at once at the cap, when none was idle.",
		func(c connJSON) int64 { return c.Refused }),
	connFamily("connectproxy_connections_shed_total", prometheus.CounterValue, "Idle client connections closed at the cap to let a new one in.",
		func(c connJSON) int64 { return c.Shed }),

	newFamily("connectproxy_refusals_total", prometheus.CounterValue, "Requests refused, by reason.", []string{"reason"},
		func(s *statsJSON, add addSample) {
			for reason, n := range s.Rejected {
				add(float64(n), reason)
			}
		}),

	seenFamily("connectproxy_first_seen_total", prometheus.CounterValue, "Tunnels whose destination or client the filter did not remember.",
		func(k seenJSON) float64 { return float64(k.FirstSeen) }),
	seenFamily("connectproxy_repeats_total", prometheus.CounterValue, "Tunnels whose destination or client the filter remembered.",
		func(k seenJSON) float64 { return float64(k.Repeats) }),
}
