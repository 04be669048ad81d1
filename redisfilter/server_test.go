package redisfilter_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/mitzbloom/mitzbloom/internal/redistest"
)

// The tests run against a real redis-server and a real Redis Cluster.
// MITZBLOOM_REDIS_ADDR names the server (host:port, or the path of a unix
// socket) and MITZBLOOM_REDIS_CLUSTER_ADDRS the cluster's nodes
// (comma-separated host:port); without them, the first test that needs a
// server or the cluster starts its own with redistest, on a unix socket and
// on loopback ports 17200-17999, if redis-server is on the PATH, and
// TestMain stops it when the tests end. Tests that stop and restart servers
// start their own with redistest. The tests of pure logic need neither.
// redistest.ServerEnv and redistest.CLIEnv name other servers to run, such
// as Valkey.
const (
	addrEnv    = "MITZBLOOM_REDIS_ADDR"
	clusterEnv = "MITZBLOOM_REDIS_CLUSTER_ADDRS"
)

var shared struct {
	prefix string // of every key the tests make, so they can be removed

	serverOnce sync.Once
	addr       string
	err        error             // why there is no server
	server     *redistest.Server // started by the tests, or nil

	clusterOnce sync.Once
	cluster     []string
	clusterErr  error              // why there is no cluster
	ownCluster  *redistest.Cluster // started by the tests, or nil
}

func TestMain(m *testing.M) {
	os.Exit(runTests(m))
}

func runTests(m *testing.M) int {
	shared.prefix = fmt.Sprintf("mitzbloom-test:%d:%d:", os.Getpid(), time.Now().UnixNano())
	code := m.Run()
	// Once.Do here makes the starts that never happened never happen.
	shared.serverOnce.Do(func() { shared.err = errors.New("the tests are over") })
	shared.clusterOnce.Do(func() { shared.clusterErr = errors.New("the tests are over") })
	if shared.server != nil {
		shared.server.Stop()
	} else if shared.err == nil {
		c := newClient(shared.addr)
		removeTestKeys(c)
		c.Close()
	}
	if shared.ownCluster != nil {
		shared.ownCluster.Stop()
	} else if shared.clusterErr == nil {
		c := newClusterClient(shared.cluster)
		c.ForEachMaster(context.Background(), func(_ context.Context, node *redis.Client) error {
			removeTestKeys(node)
			return nil
		})
		c.Close()
	}
	return code
}

// sharedServer returns the address of the server the tests share, starting
// it if the environment names none, or why there is none.
func sharedServer() (string, error) {
	shared.serverOnce.Do(func() {
		if shared.addr = os.Getenv(addrEnv); shared.addr != "" {
			return
		}
		if err := redistest.Look(); err != nil {
			shared.err = fmt.Errorf("%s is not set and %w", addrEnv, err)
			return
		}
		shared.server, shared.err = redistest.Start(true)
		if shared.err == nil {
			shared.addr = shared.server.Addr()
		}
	})
	return shared.addr, shared.err
}

// sharedClusterAddrs returns the nodes of the cluster the tests share,
// starting one of 3 masters with a replica each if the environment names
// none, or why there is none.
func sharedClusterAddrs() ([]string, error) {
	shared.clusterOnce.Do(func() {
		if addrs := os.Getenv(clusterEnv); addrs != "" {
			shared.cluster = strings.Split(addrs, ",")
			return
		}
		if err := redistest.Look(); err != nil {
			shared.clusterErr = fmt.Errorf("%s is not set and %w", clusterEnv, err)
			return
		}
		shared.ownCluster, shared.clusterErr = redistest.StartCluster(3, 1)
		if shared.clusterErr == nil {
			shared.cluster = shared.ownCluster.Addrs()
		}
	})
	return shared.cluster, shared.clusterErr
}

// removeTestKeys deletes what the tests left behind, which matters only
// when the server is not a throwaway one.
func removeTestKeys(c *redis.Client) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	iter := c.Scan(ctx, 0, "{"+shared.prefix+"*", 1000).Iterator()
	for iter.Next(ctx) {
		c.Del(ctx, iter.Val())
	}
}

// newClusterClient returns a client of the cluster of addrs that honours
// context deadlines.
func newClusterClient(addrs []string, opts ...func(*redis.ClusterOptions)) *redis.ClusterClient {
	o := &redis.ClusterOptions{Addrs: addrs, ContextTimeoutEnabled: true}
	for _, opt := range opts {
		opt(o)
	}
	return redis.NewClusterClient(o)
}

// sharedCluster returns a client of the shared cluster, closed when t ends,
// skipping or failing t as sharedClient does when there is none.
func sharedCluster(t testing.TB, opts ...func(*redis.ClusterOptions)) *redis.ClusterClient {
	t.Helper()
	addrs, err := sharedClusterAddrs()
	var c *redis.ClusterClient
	if err == nil {
		c = newClusterClient(addrs, opts...)
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		if perr := c.ForEachShard(ctx, func(ctx context.Context, node *redis.Client) error { return node.Ping(ctx).Err() }); perr != nil {
			c.Close()
			err = fmt.Errorf("cannot reach the Redis Cluster at %v: %w", addrs, perr)
		}
	}
	if err != nil {
		if redistest.IsCI() {
			t.Fatalf("Redis Cluster tests cannot run in CI: %v; .ci/run installs the redis-server package", err)
		}
		t.Skipf("skipping a Redis Cluster test: %v; install the Debian package redis-server, or set %s", err, clusterEnv)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// eachServer runs test as two subtests, "single" on the shared server and
// "cluster" on the shared cluster, each with a client of its own.
func eachServer(t *testing.T, test func(t *testing.T, rdb redis.UniversalClient)) {
	t.Run("single", func(t *testing.T) { test(t, sharedClient(t)) })
	t.Run("cluster", func(t *testing.T) { test(t, sharedCluster(t)) })
}

// keysMatching returns the keys that match pattern on every master of rdb.
func keysMatching(t testing.TB, rdb redis.UniversalClient, pattern string) []string {
	t.Helper()
	ctx := context.Background()
	var (
		mu  sync.Mutex
		all []string
	)
	collect := func(ctx context.Context, c redis.Cmdable) error {
		keys, err := c.Keys(ctx, pattern).Result()
		mu.Lock()
		all = append(all, keys...)
		mu.Unlock()
		return err
	}
	var err error
	if cl, ok := rdb.(*redis.ClusterClient); ok {
		err = cl.ForEachMaster(ctx, func(ctx context.Context, node *redis.Client) error { return collect(ctx, node) })
	} else {
		err = collect(ctx, rdb)
	}
	if err != nil {
		t.Fatalf("KEYS %s: %v", pattern, err)
	}
	return all
}

// newClient returns a client for addr that honours context deadlines, as
// the package documentation recommends.
func newClient(addr string, opts ...func(*redis.Options)) *redis.Client {
	o := &redis.Options{Addr: addr, ContextTimeoutEnabled: true}
	if strings.HasPrefix(addr, "/") {
		o.Network = "unix"
	}
	for _, opt := range opts {
		opt(o)
	}
	return redis.NewClient(o)
}

// sharedClient returns a client of the shared server, closed when t ends. It
// skips t if there is no server, unless CI is set: there a missing Redis is
// a broken setup.
func sharedClient(t testing.TB, opts ...func(*redis.Options)) *redis.Client {
	t.Helper()
	addr, err := sharedServer()
	var c *redis.Client
	if err == nil {
		c = newClient(addr, opts...)
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		if perr := c.Ping(ctx).Err(); perr != nil {
			c.Close()
			err = fmt.Errorf("cannot reach Redis at %s: %w", addr, perr)
		}
	}
	if err != nil {
		if redistest.IsCI() {
			t.Fatalf("Redis tests cannot run in CI: %v; .ci/run installs the redis-server package", err)
		}
		t.Skipf("skipping a Redis test: %v; install the Debian package redis-server, or set %s", err, addrEnv)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

var (
	names   sync.Map // testing.TB → its filter name
	nameSeq atomic.Int64
)

// filterName returns a name no other test, run or -count repetition uses,
// the same one for every call of the same test.
func filterName(t testing.TB) string {
	if name, ok := names.Load(t); ok {
		return name.(string)
	}
	name := fmt.Sprintf("%s%s.%d", shared.prefix, t.Name(), nameSeq.Add(1))
	names.Store(t, name)
	return name
}

func withPoolSize(n int) func(*redis.Options) {
	return func(o *redis.Options) { o.PoolSize = n }
}

// TestServerVersion logs the server that the tests run on, and the
// cluster's, as INFO server names them (Valkey names itself too).
func TestServerVersion(t *testing.T) {
	eachServer(t, func(t *testing.T, rdb redis.UniversalClient) {
		info, err := rdb.Info(testContext(t), "server").Result()
		if err != nil {
			t.Fatal(err)
		}
		for line := range strings.Lines(info) {
			if k, v, ok := strings.Cut(strings.TrimSpace(line), ":"); ok && (k == "redis_version" || k == "server_name" || k == "valkey_version") {
				t.Logf("%s %s", k, v)
			}
		}
	})
}

// replication returns the value of field in the INFO replication of c's
// server.
func replication(ctx context.Context, c *redis.Client, field string) (string, error) {
	info, err := c.Info(ctx, "replication").Result()
	if err != nil {
		return "", err
	}
	for line := range strings.Lines(info) {
		if k, v, ok := strings.Cut(strings.TrimSpace(line), ":"); ok && k == field {
			return v, nil
		}
	}
	return "", fmt.Errorf("INFO replication has no %s", field)
}

// waitReplication waits, for up to a minute, until field of the INFO
// replication of c's server is want: a replica of a given master
// (master_port) and in sync with it (master_link_status up), a master
// without replicas (connected_slaves 0).
func waitReplication(ctx context.Context, t testing.TB, c *redis.Client, field, want string) {
	t.Helper()
	redistest.WaitFor(t, fmt.Sprintf("%s:%s on %s", field, want, c.Options().Addr), time.Minute, replicationIs(ctx, c, field, want))
}

// replicationIs returns the condition, for redistest.Poll, that field of
// the INFO replication of c's server is want.
func replicationIs(ctx context.Context, c *redis.Client, field, want string) func() (bool, error) {
	return func() (bool, error) {
		v, err := replication(ctx, c, field)
		if err != nil {
			return false, err
		}
		return v == want, fmt.Errorf("%s:%s", field, v)
	}
}

// waitPromoted waits, for up to a minute, until srv, a replica whose
// master failed, is a master. Should it not be, the failure shows the end of
// srv's log, where Redis says why it does not take over (its data too old,
// votes it lacks, an election that expired).
func waitPromoted(ctx context.Context, t testing.TB, srv *redistest.Server) {
	t.Helper()
	c := newClient(srv.Socket())
	defer c.Close()
	if err := redistest.Poll(time.Minute, replicationIs(ctx, c, "role", "master")); err != nil {
		// Without its attempts to reach the failed master, once a second.
		var lines []string
		for l := range strings.Lines(srv.Log()) {
			if !strings.Contains(l, "MASTER") && !strings.Contains(l, "on socket for SYNC") {
				lines = append(lines, l)
			}
		}
		t.Fatalf("waited for %s to be promoted: %v; the end of its log:\n%s", srv.Addr(), err, strings.Join(lines[max(len(lines)-30, 0):], ""))
	}
}

// waitRoutedTo waits, for up to a minute, until rdb, its slot map reloaded,
// sends key to the master at addr: after a failover, the client's view is
// what the calls that follow need, not every node's, which waitSlotOwner
// waits for.
func waitRoutedTo(ctx context.Context, t testing.TB, rdb *redis.ClusterClient, key, addr string) {
	t.Helper()
	redistest.WaitFor(t, fmt.Sprintf("the client to send %s to %s", key, addr), time.Minute, func() (bool, error) {
		rdb.ReloadState(ctx)
		m, err := rdb.MasterForKey(ctx, key)
		if err != nil {
			return false, err
		}
		got := m.Options().Addr
		return got == addr, fmt.Errorf("sends it to %s", got)
	})
}

// waitSlotOwner waits, for up to a minute, until every running node of cl
// names the node at addr as the master of the slot of key in CLUSTER
// SHARDS: the cluster agrees who serves it, after a failover or a reshard.
func waitSlotOwner(ctx context.Context, t testing.TB, cl *redistest.Cluster, key, addr string) {
	t.Helper()
	var clients []*redis.Client
	for _, n := range cl.Nodes {
		if n.Running() {
			c := newClient(n.Socket())
			defer c.Close()
			clients = append(clients, c)
		}
	}
	if len(clients) == 0 {
		t.Fatal("no node of the cluster runs")
	}
	slot, err := clients[0].ClusterKeySlot(ctx, key).Result()
	if err != nil {
		t.Fatalf("CLUSTER KEYSLOT %s: %v", key, err)
	}
	redistest.WaitFor(t, fmt.Sprintf("every node to name %s the master of slot %d", addr, slot), time.Minute, func() (bool, error) {
		for _, c := range clients {
			shards, err := c.ClusterShards(ctx).Result()
			if err != nil {
				return false, fmt.Errorf("%s: %w", c.Options().Addr, err)
			}
			owner := ""
			for _, sh := range shards {
				for _, r := range sh.Slots {
					if r.Start > slot || slot > r.End {
						continue
					}
					for _, n := range sh.Nodes {
						if n.Role == "master" {
							owner = n.IP + ":" + strconv.FormatInt(n.Port, 10)
						}
					}
				}
			}
			if owner != addr {
				nodes, _ := c.ClusterNodes(ctx).Result()
				return false, fmt.Errorf("%s names %q; its CLUSTER NODES:\n%s", c.Options().Addr, owner, nodes)
			}
		}
		return true, nil
	})
}

// nodeAddr returns the address of the node of cl whose ID is id.
func nodeAddr(ctx context.Context, t testing.TB, cl *redistest.Cluster, id string) string {
	t.Helper()
	for _, n := range cl.Nodes {
		if !n.Running() {
			continue
		}
		c := newClient(n.Socket())
		nid, err := c.ClusterMyID(ctx).Result()
		c.Close()
		if err != nil {
			t.Fatalf("CLUSTER MYID of %s: %v", n.Addr(), err)
		}
		if nid == id {
			return n.Addr()
		}
	}
	t.Fatalf("no node of the cluster is %s", id)
	return ""
}
