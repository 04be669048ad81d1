package redisfilter

import (
	"crypto/rand"
	"encoding/binary"
	"fmt"
	"strconv"
)

// The protocol of lua/changes.lua and lua/push.lua, the scripts of a
// Hybrid's Sync, in one place: the arguments each takes, in the order of
// its ARGV, and the fields of its reply, in the order of its return
// statement (TestScriptReplies checks the count against the Lua). Go builds
// the calls and reads the replies here and nowhere else; changesPlain, the
// script's plain equivalent, reads its arguments and builds its reply here
// too.

// changesArgs are the arguments of changes.lua.
type changesArgs struct {
	cfg    string // ARGV[1]  the config the filter was opened with
	nbytes int64  // ARGV[2]  the bitmap's length in bytes
	epoch  string // ARGV[3]  the reader's epoch, "" for none
	pos    int64  // ARGV[4]  the reader's position
	most   int    // ARGV[5]  the most bytes of records to return
	check  int64  // ARGV[6]  the reader's checkpoint
	nheld  int    // ARGV[7]  how many of the log's bytes before the checkpoint to return
	ntail  int    // ARGV[8]  how many of the log's bytes before the end of the read to return
	// ARGV[9] and ARGV[10], if ranged: a range of the bitmap to return,
	// its first and last byte.
	ranged      bool
	first, last int64
}

// list returns a as the script's ARGV.
func (a changesArgs) list() []any {
	args := []any{a.cfg, a.nbytes, a.epoch, a.pos, a.most, a.check, a.nheld, a.ntail}
	if a.ranged {
		args = append(args, a.first, a.last)
	}
	return args
}

// changesArgsOf returns the arguments that list returned as args.
func changesArgsOf(args []any) changesArgs {
	a := changesArgs{
		cfg: args[0].(string), nbytes: args[1].(int64), epoch: args[2].(string), pos: args[3].(int64),
		most: args[4].(int), check: args[5].(int64), nheld: args[6].(int), ntail: args[7].(int),
	}
	if len(args) == 10 {
		a.ranged, a.first, a.last = true, args[8].(int64), args[9].(int64)
	}
	return a
}

// changesCall returns the call of changes.lua that reads at most most bytes
// of shard s's log from cur on, and the log at cur's checkpoint, and the
// bytes of ch if it is not nil.
func (c *core[T]) changesCall(s *shard, cur cursor, most int, ch *chunk) call {
	a := changesArgs{cfg: c.cfg, nbytes: s.nbytes(), epoch: cur.epoch, pos: cur.pos, most: most, check: cur.check, nheld: len(cur.tail), ntail: checkBytes}
	if ch != nil {
		a.ranged, a.first, a.last = true, ch.from, ch.to-1
	}
	return call{s, []string{s.cfgKey, s.key, s.logKey}, a.list()}
}

// A logRead is what changes.lua returns, field by field in the order of its
// reply, the range last, if asked for.
type logRead struct {
	replid  string  // the server's replication ID, "" if INFO is denied
	epoch   string  // the log's epoch
	base    int64   // the position of its first record
	end     int64   // the position of its end
	records []byte  // the records from the reader's position on; nil (false) if the log does not hold it
	held    *string // the log's bytes before the checkpoint; nil (false) if it does not hold them
	tail    string  // its bytes before the end of the read
	bitmap  string  // the range of the bitmap asked for
}

// changesFields is the number of fields of changes.lua's reply without a
// range.
const changesFields = 7

// reply returns l as changes.lua returns it, with the range if ranged.
func (l logRead) reply(ranged bool) []any {
	var records, held any
	if l.records != nil {
		records = string(l.records)
	}
	if l.held != nil {
		held = *l.held
	}
	reply := []any{l.replid, l.epoch, l.base, l.end, records, held, l.tail}
	if ranged {
		reply = append(reply, l.bitmap)
	}
	return reply
}

// parseLog returns what changes.lua returned as v.
func parseLog(v any) (logRead, error) {
	res, ok := v.([]any)
	if !ok || len(res) != changesFields && len(res) != changesFields+1 {
		return logRead{}, fmt.Errorf("changes.lua answered %v", v)
	}
	var l logRead
	l.replid, _ = res[0].(string)
	l.epoch, _ = res[1].(string)
	l.base, _ = res[2].(int64)
	l.end, _ = res[3].(int64)
	if s, ok := res[4].(string); ok {
		l.records = []byte(s)
	}
	if s, ok := res[5].(string); ok {
		l.held = &s
	}
	l.tail, _ = res[6].(string)
	if len(res) > changesFields {
		l.bitmap, _ = res[7].(string)
	}
	return l, nil
}

// view returns what l shows of the log.
func (l logRead) view() logView {
	return logView{replid: l.replid, epoch: l.epoch, end: l.end, held: l.held}
}

// pushCall returns the call of push.lua that sets the bits of records in
// shard s, for a pusher whose cursor of the shard is cur: ARGV[1] the
// config, ARGV[2] the bitmap's length, ARGV[3] the records, ARGV[4] the
// most bytes the log holds, ARGV[5] how many of the log's bytes before its
// end to return, and ARGV[6] to ARGV[8] the pusher's epoch, checkpoint,
// and how many of the log's bytes before the checkpoint to return.
func (c *core[T]) pushCall(s *shard, records []byte, cur cursor) call {
	return call{s, []string{s.cfgKey, s.key, s.logKey}, []any{c.cfg, s.nbytes(), records, c.logCap(s), checkBytes, cur.epoch, cur.check, len(cur.tail)}}
}

// A logMark is what push.lua returns, in the order of its reply: the number
// of bits it changed, which a Sync does not use, and then a place in the
// shard's change log: the server's replication ID, the log's epoch, the
// position of its end and its bytes before the end; and the log as the push
// found it before it appended, seen from the pusher's checkpoint: its bytes
// before the checkpoint (nil for false), its epoch and its end.
type logMark struct {
	replid string
	epoch  string
	pos    int64
	tail   string
	before logView
}

// pushFields is the number of fields of push.lua's reply.
const pushFields = 8

// parsePush returns what push.lua returned as v.
func parsePush(v any) (logMark, error) {
	res, ok := v.([]any)
	if !ok || len(res) != pushFields {
		return logMark{}, fmt.Errorf("push.lua answered %v", v)
	}
	var m logMark
	m.replid, _ = res[1].(string)
	m.epoch, _ = res[2].(string)
	m.pos, _ = res[3].(int64)
	m.tail, _ = res[4].(string)
	m.before.replid = m.replid
	if s, ok := res[5].(string); ok {
		m.before.held = &s
	}
	m.before.epoch, _ = res[6].(string)
	m.before.end, _ = res[7].(int64)
	return m, nil
}

// logHeader is the length of a change log's header, and logHeaderFormat
// its format, of the log's epoch and the position of its first record, as
// lua/log.lua writes it.
const (
	logHeader       = 51
	logHeaderFormat = "mitzbloom/changes %015d %016d\n"
)

// newEpoch returns the epoch of a log started again (see lua/log.lua): a
// random number of at most 15 digits, which Lua's numbers hold exactly.
func newEpoch() string {
	var b [8]byte
	_, _ = rand.Read(b[:]) // never fails
	return strconv.FormatUint(binary.LittleEndian.Uint64(b[:])%1e15, 10)
}

// logCap returns the most bytes of records that the log of shard s holds:
// what WithChangeLog sets, or a quarter of the shard's bitmap if that is
// less, so that the log never takes more of Redis's memory than the bitmap
// does. A string grown by APPEND may take up to twice its length, as Redis
// makes room for it to grow, and the allocator rounds that up by up to a
// quarter; a log cut to half its size is written anew, of its length.
func (c *core[T]) logCap(s *shard) int64 {
	return min(c.logBytes, s.nbytes()/4) &^ 7
}
