package wire

import (
	"context"
	"strconv"
	"sync/atomic"
)

// A Meter counts the bytes of the commands a call sends and the replies it
// receives, as the Redis protocol encodes them, for a Hybrid's stats.
type Meter struct {
	sent, received atomic.Int64
}

// Sent and Received return the bytes counted each way.
func (m *Meter) Sent() int64     { return m.sent.Load() }
func (m *Meter) Received() int64 { return m.received.Load() }

type meterKey struct{}

// WithMeter returns a context of ctx whose calls m counts: a meter goes
// with the call that it measures, not with the Wire, which other calls
// share.
func WithMeter(ctx context.Context, m *Meter) context.Context {
	return context.WithValue(ctx, meterKey{}, m)
}

// meterOf returns the meter of ctx, or nil.
func meterOf(ctx context.Context) *Meter {
	m, _ := ctx.Value(meterKey{}).(*Meter)
	return m
}

// send adds the command args to m.
func (m *Meter) send(args []any) {
	if m == nil {
		return
	}
	n := 3 + len(strconv.Itoa(len(args)))
	for _, a := range args {
		n += bulkLen(argLen(a))
	}
	m.sent.Add(int64(n))
}

// receive adds a reply, or an error reply err, to m.
func (m *Meter) receive(reply any, err error) {
	if m == nil {
		return
	}
	if err != nil {
		m.received.Add(int64(3 + len(err.Error())))
		return
	}
	m.received.Add(replyLen(reply))
}

// argLen returns the length of a command's argument as go-redis writes it.
func argLen(a any) int {
	switch v := a.(type) {
	case string:
		return len(v)
	case []byte:
		return len(v)
	case int:
		return len(strconv.Itoa(v))
	case int64:
		return len(strconv.FormatInt(v, 10))
	case *int64:
		return len(strconv.FormatInt(*v, 10))
	}
	return 8
}

// bulkLen returns the length of a bulk string of n bytes: $n\r\n…\r\n.
func bulkLen(n int) int { return n + 5 + len(strconv.Itoa(n)) }

// replyLen returns the length of a reply as Redis writes it.
func replyLen(v any) int64 {
	switch r := v.(type) {
	case nil:
		return 5
	case string:
		return int64(bulkLen(len(r)))
	case int64:
		return int64(3 + len(strconv.FormatInt(r, 10)))
	case []any:
		n := int64(3 + len(strconv.Itoa(len(r))))
		for _, x := range r {
			n += replyLen(x)
		}
		return n
	}
	return 8
}
