package bloomprom

import "github.com/prometheus/client_golang/prometheus"

// The metrics' descriptions: one per family, with the filter's name as
// the label filter. The README of this module says what each means and
// when to act on it; TestMetricsDocumented keeps the two in step.
var (
	upDesc = newDesc("mitzbloom_filter_up",
		"Whether the filter's statistics were read at this scrape (1) or not (0): Redis did not answer within the deadline, or answered with an error.")
	readFailuresDesc = prometheus.NewDesc("mitzbloom_filter_read_failures_total",
		"Scrapes at which the filter's statistics could not be read from Redis, by the cause the error wraps.", []string{"filter", "error"}, nil)
	readDurationDesc = newDesc("mitzbloom_filter_read_duration_seconds",
		"Time the scrape took to read the filter's statistics, from memory or from Redis.")
	bitSizeDesc = newDesc("mitzbloom_filter_bitsize",
		"Bits in the filter (BitSize), in every generation or stage it has: it takes bitsize/8 bytes.")
	bitCountDesc = newDesc("mitzbloom_filter_bitcount",
		"Bits set in the filter (BitCount), in every generation or stage it has.")
	fillRatioDesc = newDesc("mitzbloom_filter_fill_ratio",
		"Fraction of the filter's bits that are set, bitcount/bitsize.")
	elementsDesc = newDesc("mitzbloom_filter_approximate_elements",
		"Distinct values the filter holds, as ApproximateElementCount estimates them; +Inf when every bit of a generation or stage is set.")
	expectedInsertionsDesc = newDesc("mitzbloom_filter_expected_insertions",
		"Distinct values the filter holds at its target false-positive probability: n for a filter sized for n, 2n for a Rotating, n times the generations for a Windowed, the sum of the stages' for a Scalable.")
	loadRatioDesc = newDesc("mitzbloom_filter_load_ratio",
		"Approximate elements divided by expected insertions: above 1 the filter holds more than it was sized for.")
	expectedFPPDesc = newDesc("mitzbloom_filter_expected_fpp",
		"Probability that a lookup of a value never put answers maybe, estimated from the bits set (ExpectedFPP).")
	targetFPPDesc = newDesc("mitzbloom_filter_target_fpp",
		"The expected false-positive probability the filter reaches when it holds its expected insertions.")
	generationAgeDesc = newDesc("mitzbloom_filter_generation_age_seconds",
		"Time since the current generation of a Rotating or Windowed began.")
	generationPeriodDesc = newDesc("mitzbloom_filter_generation_period_seconds",
		"Time a generation of a Rotating or Windowed stays current, as configured: the Rotating's window, the Windowed's period.")
	rotationsDesc = newDesc("mitzbloom_filter_rotations_total",
		"Generations a Rotating started, on time or because the current one was full.")
	earlyRotationsDesc = newDesc("mitzbloom_filter_early_rotations_total",
		"Generations a Rotating started before the window ended, because the current one had received its expected insertions: the window remembers less than configured.")
	stagesDesc = newDesc("mitzbloom_filter_stages",
		"Stages of a Scalable: it adds one each time the newest fills.")
	lookupsDesc = prometheus.NewDesc("mitzbloom_filter_lookups_total",
		"Answers of MightContain through a Lookups wrapper, by result: maybe or no.", []string{"filter", "result"}, nil)

	syncsDesc = newDesc("mitzbloom_hybrid_syncs_total",
		"Syncs of a Hybrid that ended, failed or not, since it was registered.")
	syncFailuresDesc = prometheus.NewDesc("mitzbloom_hybrid_sync_failures_total",
		"Syncs of a Hybrid that failed, by the cause their error wraps.", []string{"filter", "error"}, nil)
	sentBytesDesc = newDesc("mitzbloom_hybrid_sent_bytes_total",
		"Bytes a Hybrid's Syncs sent to Redis.")
	receivedBytesDesc = newDesc("mitzbloom_hybrid_received_bytes_total",
		"Bytes a Hybrid's Syncs received from Redis.")
	fullPushesDesc = newDesc("mitzbloom_hybrid_full_pushes_total",
		"Syncs of a Hybrid that pushed the whole local filter rather than its changes.")
	shardPullsDesc = newDesc("mitzbloom_hybrid_whole_shard_pulls_total",
		"Shards a Hybrid's Syncs read whole, because their change log no longer held what the Hybrid had not read.")
	lastSyncAgeDesc = newDesc("mitzbloom_hybrid_last_sync_age_seconds",
		"Time since the last successful Sync of a Hybrid started to read Redis: how stale its local filter may be.")
)

// newDesc returns the description of a metric of each filter, a gauge or
// a counter: the type is the sample's.
func newDesc(name, help string) *prometheus.Desc {
	return prometheus.NewDesc(name, help, []string{"filter"}, nil)
}

// descs are every description above, for Describe.
var descs = []*prometheus.Desc{
	upDesc, readFailuresDesc, readDurationDesc, bitSizeDesc, bitCountDesc, fillRatioDesc, elementsDesc,
	expectedInsertionsDesc, loadRatioDesc, expectedFPPDesc, targetFPPDesc,
	generationAgeDesc, generationPeriodDesc, rotationsDesc, earlyRotationsDesc, stagesDesc, lookupsDesc,
	syncsDesc, syncFailuresDesc, sentBytesDesc, receivedBytesDesc, fullPushesDesc, shardPullsDesc, lastSyncAgeDesc,
}
