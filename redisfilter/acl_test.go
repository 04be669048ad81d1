package redisfilter_test

import (
	"bufio"
	"context"
	"math/rand/v2"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mitzbloom/mitzbloom/bloom/bloomtest"
	"github.com/mitzbloom/mitzbloom/funnel"
	"github.com/mitzbloom/mitzbloom/redisfilter"
)

// aclLines returns the ACL SETUSER lines of the README's section
// Permissions, each a command as redis-cli splits it.
func aclLines(t *testing.T) [][]string {
	t.Helper()
	f, err := os.Open("README.md")
	require.NoError(t, err)
	defer f.Close()
	var lines [][]string
	in := false
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		switch {
		case strings.HasPrefix(line, "## "):
			in = line == "## Permissions"
		case in && strings.HasPrefix(line, "ACL SETUSER "):
			lines = append(lines, strings.Fields(line))
		case in && strings.HasPrefix(line, "    +"):
			t.Errorf("the README's ACL line is continued on another line: %q", line)
		}
	}
	require.NoError(t, sc.Err())
	require.Len(t, lines, 4, "the README's ACL lines")
	return lines
}

// TestACLLines creates the users of the README's ACL lines, exactly as
// written, on one server and on every node of the cluster, and uses each as
// its role says: the reader opens an existing filter and a window and makes
// every read, a NewHybrid and a Sync with nothing to push, and is refused a
// Put (with ErrNoPermission naming the command), a Merge and the creation
// of a filter; the writers, by command and
// by category, create filters of one shard and of several, and do
// everything.
func TestACLLines(t *testing.T) {
	lines := aclLines(t)
	eachServer(t, func(t *testing.T, admin redis.UniversalClient) {
		ctx := testContext(t)
		var user func(name string) redis.UniversalClient
		switch a := admin.(type) {
		case *redis.Client:
			user = func(name string) redis.UniversalClient {
				c := newClient(a.Options().Addr, func(o *redis.Options) { o.Username, o.Password = name, "secret" })
				t.Cleanup(func() { c.Close() })
				return c
			}
		case *redis.ClusterClient:
			user = func(name string) redis.UniversalClient {
				c := newClusterClient(a.Options().Addrs, func(o *redis.ClusterOptions) { o.Username, o.Password = name, "secret" })
				t.Cleanup(func() { c.Close() })
				return c
			}
		}
		for _, line := range lines {
			args := make([]any, len(line))
			for i, a := range line {
				args[i] = a
			}
			var err error
			if cl, ok := admin.(*redis.ClusterClient); ok {
				err = cl.ForEachShard(ctx, func(ctx context.Context, node *redis.Client) error { return node.Do(ctx, args...).Err() })
			} else {
				err = admin.Do(ctx, args...).Err()
			}
			require.NoError(t, err, strings.Join(line, " "))
		}
		name := filterName(t)
		values := randomStrings(rand.New(rand.NewPCG(81, 82)), 300)
		shared, err := redisfilter.Open(ctx, admin, name, funnel.String, 300_000, 0.01, redisfilter.WithShardBytes(shardBytes))
		require.NoError(t, err)
		t.Cleanup(func() { shared.Delete(context.Background()) })
		require.NoError(t, shared.PutMany(ctx, values))
		w, err := redisfilter.OpenWindowed(ctx, admin, name+"-window", funnel.String, 1000, 0.01, time.Hour, 2)
		require.NoError(t, err)
		t.Cleanup(func() { w.Delete(context.Background()) })
		require.NoError(t, w.PutMany(ctx, values))

		for _, line := range lines {
			who := line[2]
			t.Run(who, func(t *testing.T) {
				rdb := user(who)
				f, err := redisfilter.Open(ctx, rdb, name, funnel.String, 300_000, 0.01, redisfilter.WithShardBytes(shardBytes))
				require.NoError(t, err, "Open of an existing filter")
				found, err := f.MightContainMany(ctx, nil, values)
				require.NoError(t, err)
				assert.NotContains(t, found, false)
				ok, err := f.MightContain(ctx, values[0])
				require.NoError(t, err)
				assert.True(t, ok)
				snap, err := f.Snapshot(ctx)
				require.NoError(t, err)
				count, err := f.BitCount(ctx)
				require.NoError(t, err)
				assert.Equal(t, snap.BitCount(), count)
				rw, err := redisfilter.OpenWindowed(ctx, rdb, name+"-window", funnel.String, 1000, 0.01, time.Hour, 2)
				require.NoError(t, err)
				found, err = rw.MightContainMany(ctx, nil, values)
				require.NoError(t, err)
				assert.NotContains(t, found, false)
				gen, err := rw.Snapshot(ctx, rw.Generation(time.Now()))
				require.NoError(t, err)
				assert.True(t, gen.MightContain(values[0]))
				h, err := redisfilter.NewHybrid(ctx, f)
				require.NoError(t, err)
				for i, ok := range h.MightContainMany(nil, values) {
					require.True(t, ok, "the Hybrid lacks %q", values[i])
				}
				require.NoError(t, shared.PutMany(ctx, []string{who + "-later"}))
				require.NoError(t, h.Sync(ctx), "a Sync with nothing to push")
				assert.True(t, h.MightContain(who+"-later"), "a value put after NewHybrid, pulled")
				assert.Zero(t, h.Stats().Last.FullPulls, "a shard read whole")
				if strings.Contains(who, "readonly") {
					_, err = f.Put(ctx, "new")
					require.ErrorIs(t, err, redisfilter.ErrNoPermission)
					return
				}

				if strings.Contains(who, "reader") {
					_, err = f.Put(ctx, "new")
					require.ErrorIs(t, err, redisfilter.ErrNoPermission)
					assert.ErrorContains(t, err, "EVAL", "the error names the command refused")
					assert.ErrorContains(t, err, "Permissions", "and the README's section")
					assert.ErrorIs(t, f.Merge(ctx, mustLocal(t, 300_000, "new")), redisfilter.ErrNoPermission)
					_, err = redisfilter.Open(ctx, rdb, filterName(t)+"-missing", funnel.String, 1000, 0.01)
					assert.ErrorIs(t, err, redisfilter.ErrNoPermission, "creating a filter")
					return
				}
				_, err = f.Put(ctx, who)
				require.NoError(t, err)
				h.Put(who + "-hybrid")
				require.NoError(t, h.Sync(ctx), "a Sync that pushes")
				require.NoError(t, f.Merge(ctx, mustLocal(t, 300_000, who+"-merged")))
				_, err = rw.Put(ctx, who)
				require.NoError(t, err)
				// A window of its own: a Put that creates a generation,
				// and removes those it recorded that expired.
				clock := bloomtest.NewClock(time.Now())
				nw, err := redisfilter.OpenWindowed(ctx, rdb, filterName(t)+"-new-window", funnel.String, 1000, 0.01, time.Minute, 1, redisfilter.WithClock(clock))
				require.NoError(t, err, "OpenWindowed creating a window")
				for range 3 {
					_, err = nw.Put(ctx, who)
					require.NoError(t, err)
					clock.Advance(time.Minute)
				}
				require.NoError(t, nw.Delete(ctx))
				for _, opts := range [][]redisfilter.Option{nil, {redisfilter.WithShardBytes(shardBytes)}} {
					g, err := redisfilter.Open(ctx, rdb, filterName(t)+"-new", funnel.String, 300_000, 0.01, opts...)
					require.NoError(t, err, "Open creating a filter")
					require.NoError(t, g.PutMany(ctx, values))
					found, err := g.MightContainMany(ctx, nil, values)
					require.NoError(t, err)
					assert.NotContains(t, found, false)
					require.NoError(t, g.Delete(ctx))
				}
			})
		}
	})
}

// TestClientOnClusterNode opens a filter of one shard through a
// *redis.Client of the cluster node that serves its slot: Open reads no key
// of another slot, which the node would answer MOVED.
func TestClientOnClusterNode(t *testing.T) {
	cl := sharedCluster(t)
	ctx := testContext(t)
	name := filterName(t)
	node, err := cl.MasterForKey(ctx, "{"+name+"}")
	require.NoError(t, err)
	rdb := newClient(node.Options().Addr)
	t.Cleanup(func() { rdb.Close() })
	f, err := redisfilter.Open(ctx, rdb, name, funnel.String, 1000, 0.01)
	require.NoError(t, err)
	t.Cleanup(func() { f.Delete(context.Background()) })
	_, err = f.Put(ctx, "a")
	require.NoError(t, err)
	ok, err := f.MightContain(ctx, "a")
	require.NoError(t, err)
	assert.True(t, ok)
	again, err := redisfilter.Open(ctx, rdb, name, funnel.String, 1000, 0.01)
	require.NoError(t, err)
	_, err = redisfilter.NewHybrid(ctx, again)
	require.NoError(t, err)
}
