// Package bloomprom exports the statistics of mitzbloom's filters as
// Prometheus metrics, so that an operator sees a filter saturate, a Hybrid
// stop syncing or a window forget early before the false positives say so.
//
// A [Collector] is a [prometheus.Collector]: register it once with a
// registry, then register each filter with it under a name, which becomes
// the value of the filter label of its metrics:
//
//	metrics := bloomprom.NewCollector()
//	prometheus.MustRegister(metrics)
//	err := metrics.Register("clients", clients, bloomprom.WithSizing(1_000_000, 0.01))
//
// It takes a [bloom.Filter], [bloom.Rotating] or [bloom.Scalable] of any
// element type, a [redisfilter.Filter], [redisfilter.Windowed] or
// [redisfilter.Hybrid], and a [Lookups] wrapped around any of the first
// three or a Hybrid, which adds the counts of its lookups' answers. The
// README of this module lists the metrics, what each means and when to
// act; its dashboard.json is a Grafana dashboard of them and alerts.yml
// Prometheus alerting rules.
//
// A scrape reads each filter's statistics then. Those of a filter in
// memory cost a pass over its bits and allocate nothing beyond the
// metrics client_golang builds (a Scalable's Stats allocates a slice of
// its stages); they take no lock that Put or MightContain take. Those that
// need Redis are read concurrently, each within a deadline (see
// [WithTimeout]); a filter whose statistics Redis did not give in time
// reports mitzbloom_filter_up 0, and the rest of the scrape goes on.
//
// A bloom.Filter does not know the expected insertions and false-positive
// probability it was sized for (Guava's format does not record them), and
// neither do the filters of package redisfilter expose theirs: give them
// with [WithSizing] to get the metrics that compare the filter with its
// targets. A Rotating and a Scalable report their own.
package bloomprom
