package wire

import (
	"context"
	"net"
	"runtime"
	"sync"
	"sync/atomic"
	"weak"

	"github.com/redis/go-redis/v9"
)

// A dialRecord keeps the error of the last dial of a client's connections
// that failed, until one succeeds: go-redis retries a dial that fails until
// the call's deadline, and the call then fails with
// context.DeadlineExceeded alone, which the record lets Describe explain
// with what the client saw, without dialling itself.
//
// It is a hook of the client that only looks: it calls the dial it wraps
// and returns what that returns. A Wire installs one per client, once, for
// as long as the client lives (see recordDials).
type dialRecord struct {
	last atomic.Pointer[error]
}

func (d *dialRecord) DialHook(next redis.DialHook) redis.DialHook {
	return func(ctx context.Context, network, addr string) (net.Conn, error) {
		conn, err := next(ctx, network, addr)
		if err != nil {
			d.last.Store(&err)
		} else {
			d.last.Store(nil)
		}
		return conn, err
	}
}

func (d *dialRecord) ProcessHook(next redis.ProcessHook) redis.ProcessHook { return next }

func (d *dialRecord) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return next
}

// lastError returns the error of the last dial, if it failed.
func (d *dialRecord) lastError() error {
	if d == nil {
		return nil
	}
	if err := d.last.Load(); err != nil {
		return *err
	}
	return nil
}

// dialRecords holds the record of each client, by a weak pointer to it, so
// that the Wires of many filters over one client share one hook, and a
// client that is dropped is not kept alive.
var dialRecords sync.Map

// recordDials returns the record of rdb's dials, installing it if rdb has
// none: on a Client, as a hook of its own; on a ClusterClient, as a hook of
// each node's client that it creates from then on (its hooks of its own do
// not see dials). A record of a client of another type is nil.
func recordDials(rdb redis.UniversalClient) *dialRecord {
	switch cl := rdb.(type) {
	case *redis.Client:
		return recordOnce(cl, func(d *dialRecord) { cl.AddHook(d) })
	case *redis.ClusterClient:
		return recordOnce(cl, func(d *dialRecord) {
			cl.OnNewNode(func(node *redis.Client) { node.AddHook(d) })
		})
	}
	return nil
}

// recordOnce returns the record of cl, calling install with a new one if cl
// has none.
func recordOnce[C any](cl *C, install func(*dialRecord)) *dialRecord {
	key := weak.Make(cl)
	if d, ok := dialRecords.Load(key); ok {
		return d.(*dialRecord)
	}
	d := new(dialRecord)
	if prev, loaded := dialRecords.LoadOrStore(key, d); loaded {
		return prev.(*dialRecord)
	}
	install(d)
	runtime.AddCleanup(cl, func(key weak.Pointer[C]) { dialRecords.Delete(key) }, key)
	return d
}

// noConnection reports whether rdb has no connection open, as its pools
// count them.
func noConnection(rdb redis.UniversalClient) bool {
	switch cl := rdb.(type) {
	case *redis.Client:
		return cl.PoolStats().TotalConns == 0
	case *redis.ClusterClient:
		return cl.PoolStats().TotalConns == 0
	}
	return false
}
