package bloomprom_test

import (
	"context"
	"fmt"
	"log"
	"net/http"
	"os"
	"strconv"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"github.com/prometheus/common/expfmt"
	"github.com/redis/go-redis/v9"

	"github.com/mitzbloom/mitzbloom/bloom"
	"github.com/mitzbloom/mitzbloom/bloomprom"
	"github.com/mitzbloom/mitzbloom/funnel"
	"github.com/mitzbloom/mitzbloom/redisfilter"
)

// A service registers the Collector with its registry, and each filter
// with the Collector. A bloom.Filter does not know what it was sized for:
// WithSizing tells it, for the metrics that compare the filter with its
// target.
func Example() {
	seen, err := bloom.New(funnel.String, 1000, 0.01)
	if err != nil {
		log.Fatal(err)
	}
	metrics := bloomprom.NewCollector()
	reg := prometheus.NewRegistry()
	reg.MustRegister(metrics)
	if err := metrics.Register("seen", seen, bloomprom.WithSizing(1000, 0.01)); err != nil {
		log.Fatal(err)
	}
	// A server would serve them: http.Handle("/metrics", promhttp.HandlerFor(reg, promhttp.HandlerOpts{})).

	for i := range 1500 {
		seen.Put(strconv.Itoa(i))
	}
	printFamilies(reg, "mitzbloom_filter_load_ratio", "mitzbloom_filter_target_fpp")
	// Output:
	// # HELP mitzbloom_filter_load_ratio Approximate elements divided by expected insertions: above 1 the filter holds more than it was sized for.
	// # TYPE mitzbloom_filter_load_ratio gauge
	// mitzbloom_filter_load_ratio{filter="seen"} 1.518
	// # HELP mitzbloom_filter_target_fpp The expected false-positive probability the filter reaches when it holds its expected insertions.
	// # TYPE mitzbloom_filter_target_fpp gauge
	// mitzbloom_filter_target_fpp{filter="seen"} 0.01
}

// printFamilies writes the metric families named in the text format, as
// a scrape of reg would get them.
func printFamilies(reg prometheus.Gatherer, names ...string) {
	mfs, err := reg.Gather()
	if err != nil {
		log.Fatal(err)
	}
	for _, mf := range mfs {
		for _, name := range names {
			if mf.GetName() == name {
				expfmt.MetricFamilyToText(os.Stdout, mf)
			}
		}
	}
}

// A Rotating reports its own sizing and window, and its rotations.
func ExampleCollector_Register_rotating() {
	window, err := bloom.NewRotating(funnel.String, 10_000, 0.005, time.Minute)
	if err != nil {
		log.Fatal(err)
	}
	metrics := bloomprom.NewCollector()
	reg := prometheus.NewRegistry()
	reg.MustRegister(metrics)
	if err := metrics.Register("clients", window); err != nil {
		log.Fatal(err)
	}
	printFamilies(reg, "mitzbloom_filter_expected_insertions", "mitzbloom_filter_generation_period_seconds", "mitzbloom_filter_rotations_total")
	// Output:
	// # HELP mitzbloom_filter_expected_insertions Distinct values the filter holds at its target false-positive probability: n for a filter sized for n, 2n for a Rotating, n times the generations for a Windowed, the sum of the stages' for a Scalable.
	// # TYPE mitzbloom_filter_expected_insertions gauge
	// mitzbloom_filter_expected_insertions{filter="clients"} 20000
	// # HELP mitzbloom_filter_generation_period_seconds Time a generation of a Rotating or Windowed stays current, as configured: the Rotating's window, the Windowed's period.
	// # TYPE mitzbloom_filter_generation_period_seconds gauge
	// mitzbloom_filter_generation_period_seconds{filter="clients"} 60
	// # HELP mitzbloom_filter_rotations_total Generations a Rotating started, on time or because the current one was full.
	// # TYPE mitzbloom_filter_rotations_total counter
	// mitzbloom_filter_rotations_total{filter="clients"} 0
}

// A Hybrid's metrics are those of its local filter, read from memory, and
// the counts of its Syncs; those of a Filter in Redis are counted there at
// each scrape, within WithTimeout. The client sets ContextTimeoutEnabled,
// so that the timeout bounds a server that does not answer.
func ExampleCollector_Register_redis() {
	ctx := context.Background()
	rdb := redis.NewClient(&redis.Options{Addr: "localhost:6379", ContextTimeoutEnabled: true})
	shared, err := redisfilter.Open(ctx, rdb, "seen", funnel.String, 1_000_000, 0.01)
	if err != nil {
		log.Fatal(err)
	}
	local, err := redisfilter.NewHybrid(ctx, shared)
	if err != nil {
		log.Fatal(err)
	}
	metrics := bloomprom.NewCollector()
	prometheus.MustRegister(metrics)
	// The sizing is Open's; a Hybrid's Syncs count from here on.
	if err := metrics.Register("seen", local, bloomprom.WithSizing(1_000_000, 0.01)); err != nil {
		log.Fatal(err)
	}
	if err := metrics.Register("seen-redis", shared, bloomprom.WithSizing(1_000_000, 0.01), bloomprom.WithTimeout(time.Second)); err != nil {
		log.Fatal(err)
	}
	go local.Run(ctx, 5*time.Second, func(err error) { log.Print(err) })
	http.Handle("/metrics", promhttp.Handler())
}

// A Lookups counts the answers of the filter it wraps; registered, its
// counts are reported with the filter's statistics.
func ExampleCountLookups() {
	seen, err := bloom.New(funnel.String, 1000, 0.01)
	if err != nil {
		log.Fatal(err)
	}
	seen.Put("a")
	lookups := bloomprom.CountLookups(seen)
	for _, v := range []string{"a", "a", "b"} {
		lookups.MightContain(v)
	}
	maybe, no := lookups.Counts()
	fmt.Println(maybe, "maybe,", no, "no")

	metrics := bloomprom.NewCollector()
	reg := prometheus.NewRegistry()
	reg.MustRegister(metrics)
	if err := metrics.Register("seen", lookups, bloomprom.WithSizing(1000, 0.01)); err != nil {
		log.Fatal(err)
	}
	printFamilies(reg, "mitzbloom_filter_lookups_total")
	// Output:
	// 2 maybe, 1 no
	// # HELP mitzbloom_filter_lookups_total Answers of MightContain through a Lookups wrapper, by result: maybe or no.
	// # TYPE mitzbloom_filter_lookups_total counter
	// mitzbloom_filter_lookups_total{filter="seen",result="maybe"} 2
	// mitzbloom_filter_lookups_total{filter="seen",result="no"} 1
}

// Unregister stops reporting a filter, and counting a Hybrid's Syncs.
func ExampleCollector_Unregister() {
	seen, err := bloom.New(funnel.String, 1000, 0.01)
	if err != nil {
		log.Fatal(err)
	}
	metrics := bloomprom.NewCollector()
	fmt.Println(metrics.Register("seen", seen))
	fmt.Println(metrics.Register("seen", seen) != nil)
	fmt.Println(metrics.Unregister("seen"), metrics.Unregister("seen"))
	// Output:
	// <nil>
	// true
	// true false
}
