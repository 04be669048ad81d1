package redisfilter_test

import (
	"context"
	"fmt"
	"log"
	"time"

	"github.com/mitzbloom/mitzbloom/funnel"
	"github.com/mitzbloom/mitzbloom/redisfilter"
	"github.com/redis/go-redis/v9"
)

// The examples need a Redis server, so they are compiled but not run; the
// tests run the same calls against a real one.

func ExampleOpen() {
	ctx := context.Background()
	rdb := redis.NewClient(&redis.Options{
		Addr:                  "localhost:6379",
		ContextTimeoutEnabled: true, // let context deadlines bound network waits
	})
	// Every replica opens the same name with the same parameters; the first
	// one creates it. In Java, GET {seen-ips} prefixed with the 6-byte
	// header reads as a BloomFilter<String> with stringFunnel(UTF_8).
	seen, err := redisfilter.Open(ctx, rdb, "seen-ips", funnel.String, 1_000_000, 0.01)
	if err != nil {
		log.Fatal(err) // errors.Is(err, redisfilter.ErrMismatch): other parameters
	}
	if err := seen.PutMany(ctx, []string{"10.0.0.1", "10.0.0.2"}); err != nil {
		log.Fatal(err)
	}
	found, err := seen.MightContainMany(ctx, nil, []string{"10.0.0.1", "10.0.0.3"})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(found) // [true false], but for a 1% chance of a false positive
}

func ExampleHybrid() {
	ctx := context.Background()
	rdb := redis.NewClient(&redis.Options{Addr: "localhost:6379", ContextTimeoutEnabled: true})
	shared, err := redisfilter.Open(ctx, rdb, "seen-ips", funnel.String, 1_000_000, 0.01)
	if err != nil {
		log.Fatal(err)
	}
	seen, err := redisfilter.NewHybrid(ctx, shared)
	if err != nil {
		log.Fatal(err)
	}
	// Sync with the fleet every 5 seconds: every replica sees every put
	// within 2 × (5 s + the time a Sync takes).
	runCtx, stop := context.WithCancel(ctx)
	go seen.Run(runCtx, 5*time.Second, func(err error) { log.Print(err) })

	seen.Put("10.0.0.1") // local: no round trip
	fmt.Println(seen.MightContain("10.0.0.1"))

	stop()
	// Push the last puts before exiting.
	if err := seen.Sync(ctx); err != nil {
		log.Print(err)
	}
}

func ExampleOpenWindowed() {
	ctx := context.Background()
	rdb := redis.NewClient(&redis.Options{Addr: "localhost:6379", ContextTimeoutEnabled: true})
	// Remember request IDs for between 2 and 3 minutes: generations of one
	// minute, 3 of them read, each sized for 100 000 IDs.
	recent, err := redisfilter.OpenWindowed(ctx, rdb, "request-ids", funnel.String, 100_000, 0.001, time.Minute, 3)
	if err != nil {
		log.Fatal(err)
	}
	dup, err := recent.MightContain(ctx, "req-42")
	if err != nil {
		log.Fatal(err)
	}
	if !dup {
		if _, err := recent.Put(ctx, "req-42"); err != nil {
			log.Fatal(err)
		}
	}
}
