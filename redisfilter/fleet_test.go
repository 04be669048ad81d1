package redisfilter_test

import (
	"bytes"
	"context"
	"fmt"
	"math/rand/v2"
	"sync"
	"testing"

	"github.com/mitzbloom/mitzbloom/bloom"
	"github.com/mitzbloom/mitzbloom/funnel"
	"github.com/mitzbloom/mitzbloom/redisfilter"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestFleet simulates a fleet: replicas, each a goroutine with its own
// client and its own Filter, put disjoint key sets at once, in batches and
// one by one, and check their own keys as they go. The shared filter must
// then equal, bit for bit, a local filter built from all the keys, and every
// replica must find every key.
func TestFleet(t *testing.T) {
	const replicas = 8
	perReplica := 3000
	if testing.Short() {
		perReplica = 500
	}
	ctx := testContext(t)
	name := filterName(t)
	admin := sharedClient(t)
	r := rand.New(rand.NewPCG(11, 12))
	all := randomStrings(r, replicas*perReplica)
	local, err := bloom.New(funnel.String, int64(len(all)), 0.01)
	require.NoError(t, err)
	for _, v := range all {
		local.Put(v)
	}

	filters := make([]*redisfilter.Filter[string], replicas)
	for i := range filters {
		// Every replica opens the filter itself, as separate processes would.
		filters[i], err = redisfilter.Open(ctx, sharedClient(t), name, funnel.String, int64(len(all)), 0.01)
		require.NoError(t, err)
	}
	t.Cleanup(func() { filters[0].Delete(context.Background()) })

	var wg sync.WaitGroup
	errs := make(chan error, replicas)
	for i, f := range filters {
		keys := all[i*perReplica : (i+1)*perReplica]
		wg.Go(func() {
			errs <- replica(ctx, f, keys)
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		assert.NoError(t, err)
	}

	got, err := admin.Get(ctx, filters[0].Keys()[0]).Bytes()
	require.NoError(t, err)
	if !bytes.Equal(wordsOf(t, local), got) {
		t.Fatal("the shared filter differs from a local filter of all the keys")
	}
	snap, err := filters[0].Snapshot(ctx)
	require.NoError(t, err)
	assert.True(t, snap.Equal(local))
	for i, f := range filters {
		found, err := f.MightContainMany(ctx, nil, all)
		require.NoError(t, err)
		missing := 0
		for _, ok := range found {
			if !ok {
				missing++
			}
		}
		assert.Zero(t, missing, "replica %d: false negatives", i)
	}
}

// replica puts keys, alternating batches of up to 256 with single Puts, and
// after each step checks that what it put is found.
func replica(ctx context.Context, f *redisfilter.Filter[string], keys []string) error {
	var found []bool
	for i := 0; i < len(keys); {
		n := min(len(keys)-i, 1+i%256)
		batch := keys[i : i+n]
		if n%5 == 0 {
			for _, k := range batch {
				if _, err := f.Put(ctx, k); err != nil {
					return err
				}
			}
		} else if err := f.PutMany(ctx, batch); err != nil {
			return err
		}
		var err error
		found, err = f.MightContainMany(ctx, found[:0], batch)
		if err != nil {
			return err
		}
		for j, ok := range found {
			if !ok {
				return fmt.Errorf("false negative for %q right after putting it", batch[j])
			}
		}
		i += n
	}
	return nil
}

// TestSharedClient runs 8 goroutines on one client, whose pool has fewer
// connections than goroutines, so calls wait for connections.
func TestSharedClient(t *testing.T) {
	const goroutines = 8
	ctx := testContext(t)
	rdb := sharedClient(t, withPoolSize(3))
	f, err := redisfilter.Open(ctx, rdb, filterName(t), funnel.Int64, 10000, 0.01)
	require.NoError(t, err)
	t.Cleanup(func() { f.Delete(context.Background()) })
	local, err := bloom.New(funnel.Int64, 10000, 0.01)
	require.NoError(t, err)

	var wg sync.WaitGroup
	errs := make(chan error, goroutines)
	for g := range goroutines {
		wg.Go(func() {
			errs <- func() error {
				batch := make([]int64, 0, 50)
				for i := range int64(500) {
					v := i*goroutines + int64(g)
					if i%2 == 0 {
						if _, err := f.Put(ctx, v); err != nil {
							return err
						}
					} else {
						batch = append(batch, v)
					}
					if len(batch) == cap(batch) {
						if err := f.PutMany(ctx, batch); err != nil {
							return err
						}
						batch = batch[:0]
					}
					if ok, err := f.MightContain(ctx, i*goroutines+int64(g)); err != nil {
						return err
					} else if !ok && i%2 == 0 {
						return fmt.Errorf("false negative for %d", v)
					}
				}
				return f.PutMany(ctx, batch)
			}()
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		require.NoError(t, err)
	}
	for i := range int64(500 * goroutines) {
		local.Put(i)
	}
	snap, err := f.Snapshot(ctx)
	require.NoError(t, err)
	assert.True(t, snap.Equal(local), "8 goroutines on one pool lost or added bits")
}
