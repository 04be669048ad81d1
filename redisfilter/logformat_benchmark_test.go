package redisfilter_test

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"testing"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/require"

	"github.com/mitzbloom/mitzbloom/internal/redistest"
)

// BenchmarkChangeLogFormat compares the change log that redisfilter keeps,
// a string of 4-byte records appended to and cut to half its size when it
// outgrows its cap, with a Redis Stream that holds the same records, one
// entry per append, trimmed by XADD's MAXLEN ~ to as many records: on a
// server of its own, 16 writers append records of bits bits each, and
// then a reader reads what they appended, from where it read up to, as a
// Sync does (a script that returns the records in one string, for both).
// It reports the server's time per bit appended and per read, as INFO
// commandstats counts the scripts ("append-µs/bit", "read-µs/sync"), the
// bytes of a read's reply ("read-bytes/sync"), and what the log
// takes in memory per record it holds (MEMORY USAGE, "mem-bytes/record"),
// once it has been cut or trimmed.
//
//	go test -run '^$' -bench ChangeLogFormat -benchtime 200x -count 3 ./redisfilter/
func BenchmarkChangeLogFormat(b *testing.B) {
	rdb := newClient(redistest.New(b).Addr())
	b.Cleanup(func() { rdb.Close() })
	ctx := context.Background()
	const (
		writers  = 16
		capBytes = 1 << 20 // as WithChangeLog's default
	)
	formats := []struct {
		name           string
		append, read   *redis.Script
		appendArgs     func(records string) []any
		readArgs       func(cursor string) []any
		keys           []string
		memKeys        []string
		cursorOf       func(reply []any) string
		recordsOf      func(reply []any) string
		startingCursor string
	}{
		{
			name:   "string",
			append: redis.NewScript(stringAppend),
			read:   redis.NewScript(stringRead),
			keys:   []string{"{log}:changes", "{log}:changes-state"},
			appendArgs: func(records string) []any {
				return []any{records, capBytes}
			},
			readArgs:       func(cursor string) []any { return []any{cursor} },
			memKeys:        []string{"{log}:changes", "{log}:changes-state"},
			cursorOf:       func(r []any) string { return fmt.Sprint(r[0]) },
			recordsOf:      func(r []any) string { s, _ := r[1].(string); return s },
			startingCursor: "0",
		},
		{
			name:   "stream",
			append: redis.NewScript(streamAppend),
			read:   redis.NewScript(streamRead),
			keys:   []string{"{log}:stream"},
			appendArgs: func(records string) []any {
				return []any{records, capBytes / len(records)}
			},
			readArgs:       func(cursor string) []any { return []any{cursor} },
			memKeys:        []string{"{log}:stream"},
			cursorOf:       func(r []any) string { return fmt.Sprint(r[0]) },
			recordsOf:      func(r []any) string { s, _ := r[1].(string); return s },
			startingCursor: "0-0",
		},
	}
	for _, bits := range []int{1, 7, 256, 4096} {
		records := strings.Repeat("\x00\x01\x02\x03", bits)
		for _, format := range formats {
			b.Run(fmt.Sprintf("bits=%d/log=%s", bits, format.name), func(b *testing.B) {
				require.NoError(b, rdb.FlushAll(ctx).Err())
				require.NoError(b, format.append.Load(ctx, rdb).Err())
				require.NoError(b, format.read.Load(ctx, rdb).Err())
				require.NoError(b, rdb.ConfigResetStat(ctx).Err())
				cursor := format.startingCursor
				var readBytes float64
				var appended int
				for b.Loop() {
					pipe := rdb.Pipeline()
					for range writers {
						format.append.Run(ctx, pipe, format.keys, format.appendArgs(records)...)
					}
					_, err := pipe.Exec(ctx)
					require.NoError(b, err)
					appended += writers * bits
					res, err := format.read.RunRO(ctx, rdb, format.keys, format.readArgs(cursor)...).Slice()
					require.NoError(b, err)
					readBytes += float64(respLen(res))
					cursor = format.cursorOf(res)
					require.Len(b, format.recordsOf(res), writers*bits*4, "a read of what was appended")
				}
				appendUsec, readUsec := commandUsec(b, rdb, "evalsha"), commandUsec(b, rdb, "evalsha_ro")
				// Fill the log past its cap, for its memory once it is cut.
				for left := 2 * capBytes / len(records); left > 0; left -= 1000 {
					pipe := rdb.Pipeline()
					for range min(left, 1000) {
						format.append.Run(ctx, pipe, format.keys, format.appendArgs(records)...)
					}
					_, err := pipe.Exec(ctx)
					require.NoError(b, err)
				}
				held, err := format.read.Run(ctx, rdb, format.keys, format.readArgs(format.startingCursor)...).Slice()
				require.NoError(b, err)
				var mem int64
				for _, k := range format.memKeys {
					m, err := rdb.MemoryUsage(ctx, k).Result()
					require.NoError(b, err)
					mem += m
				}
				b.ReportMetric(appendUsec/float64(appended), "append-µs/bit")
				b.ReportMetric(readUsec/float64(b.N), "read-µs/sync")
				b.ReportMetric(readBytes/float64(b.N), "read-bytes/sync")
				b.ReportMetric(float64(mem)/float64(len(format.recordsOf(held))/4), "mem-bytes/record")
			})
		}
	}
}

// respLen returns the length of a reply as the server writes it (RESP2).
func respLen(v any) int {
	switch r := v.(type) {
	case string:
		return len(r) + 5 + len(strconv.Itoa(len(r)))
	case int64:
		return 3 + len(strconv.FormatInt(r, 10))
	case []any:
		n := 3 + len(strconv.Itoa(len(r)))
		for _, x := range r {
			n += respLen(x)
		}
		return n
	}
	return 5
}

// The two logs compared, in the scripts that append to them and read
// them: the string of lua/log.lua, with its state key, and a stream.
const (
	stringAppend = `#!lua
local log_key, state_key, records, cap = KEYS[1], KEYS[2], ARGV[1], tonumber(ARGV[2])
local state = redis.call('GET', state_key)
if not state then
  redis.call('SET', log_key, '')
  redis.call('SET', state_key, '1 0')
  state = '1 0'
end
local len = redis.call('APPEND', log_key, records)
if len > cap then
  local cut = len - math.floor(cap / 8) * 4
  local epoch, base = string.match(state, '^(%d+) (%d+)$')
  redis.call('SET', log_key, redis.call('GETRANGE', log_key, cut, -1))
  redis.call('SET', state_key, epoch .. ' ' .. (tonumber(base) + cut))
end
return 1`
	stringRead = `#!lua flags=no-writes
local log_key, state_key, pos = KEYS[1], KEYS[2], tonumber(ARGV[1])
local state = redis.call('GET', state_key) or ' 0'
local _, base = string.match(state, '^(%d*) (%d+)$')
base = tonumber(base)
local last = base + redis.call('STRLEN', log_key)
if pos < base then pos = base end
local records = ''
if last > pos then records = redis.call('GETRANGE', log_key, pos - base, last - base - 1) end
return {last, records}`
	streamAppend = `#!lua
redis.call('XADD', KEYS[1], 'MAXLEN', '~', ARGV[2], '*', 'r', ARGV[1])
return 1`
	streamRead = `#!lua flags=no-writes
local entries = redis.call('XRANGE', KEYS[1], '(' .. ARGV[1], '+')
local records, last = {}, ARGV[1]
for i, e in ipairs(entries) do
  records[i] = e[2][2]
  last = e[1]
end
return {last, table.concat(records)}`
)
