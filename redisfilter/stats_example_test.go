package redisfilter_test

import (
	"context"
	"errors"
	"fmt"
	"log"
	"time"

	"github.com/mitzbloom/mitzbloom/funnel"
	"github.com/mitzbloom/mitzbloom/redisfilter"
	"github.com/redis/go-redis/v9"
)

func ExampleFilter_ExpectedFPP() {
	ctx := context.Background()
	rdb := redis.NewClient(&redis.Options{Addr: "localhost:6379", ContextTimeoutEnabled: true})
	seen, err := redisfilter.Open(ctx, rdb, "seen-ips", funnel.String, 1_000_000, 0.01)
	if err != nil {
		log.Fatal(err)
	}
	// From BITCOUNT on the server: a few hundred bytes, not the filter.
	fpp, err := seen.ExpectedFPP(ctx)
	if err != nil {
		log.Fatal(err)
	}
	n, err := seen.ApproximateElementCount(ctx)
	if err != nil {
		log.Fatal(err)
	}
	if fpp > 0.01 {
		log.Printf("seen-ips holds about %d values, more than it was sized for: %.3f false positives", n, fpp)
	}
}

func ExampleHybridStats_String() {
	stats := redisfilter.HybridStats{
		Last: redisfilter.SyncStats{
			Duration: 2 * time.Millisecond, Stale: 5 * time.Second,
			Sent: 1205, Received: 96, Pushed: 3,
		},
		Syncs: 12, FullPushes: 1, Sent: 6705, Received: 712,
	}
	fmt.Println(stats)
	failed := redisfilter.SyncStats{FullPush: true, FullPushReason: redisfilter.FullPushOverflow, Err: errors.New("connection refused")}
	fmt.Println(failed)
	// Output:
	// 12 syncs, 1 full push, 0 shards pulled whole, 6705 bytes sent, 712 received; last: sync delta: 1205 bytes sent, 96 received, 3 values pushed, 0 bits pulled, 0 shards pulled whole, in 2ms, 5s stale
	// sync full (overflow): 0 bytes sent, 0 received, 0 values pushed, 0 bits pulled, 0 shards pulled whole, in 0s, 0s stale, failed: connection refused
}
