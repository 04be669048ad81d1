package redisfilter_test

import (
	"context"
	"strconv"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mitzbloom/mitzbloom/funnel"
	"github.com/mitzbloom/mitzbloom/internal/redistest"
	"github.com/mitzbloom/mitzbloom/redisfilter"
)

// TestWrongPassword opens a filter with a wrong password and with none: the
// error wraps ErrNoPermission and says that the credentials were refused,
// where go-redis's pipeline left every command without an error and Open
// reported "inspect.lua answered <nil>".
func TestWrongPassword(t *testing.T) {
	srv := redistest.New(t)
	ctx := testContext(t)
	admin := newClient(srv.Addr())
	t.Cleanup(func() { admin.Close() })
	require.NoError(t, admin.ConfigSet(ctx, "requirepass", "secret").Err())
	for _, password := range []string{"wrong", ""} {
		rdb := newClient(srv.Addr(), func(o *redis.Options) { o.Password = password })
		t.Cleanup(func() { rdb.Close() })
		_, err := redisfilter.Open(ctx, rdb, "fleet", funnel.String, 1000, 0.01)
		require.ErrorIs(t, err, redisfilter.ErrNoPermission, "password %q", password)
		assert.ErrorContains(t, err, "credentials")
		t.Log(err)
	}
}

// TestCannotConnect opens a filter on a port where nothing listens, with a
// deadline shorter than go-redis's retries of the dial, which ended in
// "context deadline exceeded" alone: the error says why the client could
// not connect.
func TestCannotConnect(t *testing.T) {
	port, err := redistest.FreePort()
	require.NoError(t, err)
	for _, client := range []redis.UniversalClient{
		newClient("127.0.0.1:" + strconv.Itoa(port)),
		newClusterClient([]string{"127.0.0.1:" + strconv.Itoa(port)}),
	} {
		t.Cleanup(func() { client.Close() })
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		_, err := redisfilter.Open(ctx, client, "fleet", funnel.String, 1000, 0.01)
		cancel()
		require.Error(t, err)
		assert.ErrorContains(t, err, "connection refused", "%T: the error says why it could not connect", client)
		assert.ErrorIs(t, err, redisfilter.ErrUnavailable, "%T", client)
		t.Log(err)
	}
}
