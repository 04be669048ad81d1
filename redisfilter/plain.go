package redisfilter

import (
	"fmt"

	"github.com/mitzbloom/mitzbloom/redisfilter/internal/wire"
)

// A user granted +@read and +@connection alone, the read-only role of
// managed services, may not run scripts, not even read-only ones: for it
// the reads of inspect.lua and read.lua are made of plain read commands,
// on one node, in one pipeline, with the config and the bitmap's length
// read before and after, as MightContain reads them (a filter's identity
// never comes back once changed, and bits are never cleared).

// inspectPlain is inspect.lua in plain commands, but for its check of the
// keys Open would write: a user that may not run scripts writes nothing. A
// window's record of generations is counted without its mark, as
// inspect.lua counts it.
func inspectPlain(cl wire.Call) wire.Plain {
	cfgKey, dataKey := cl.Keys[0], cl.Keys[1]
	cmds := [][]any{{"GET", cfgKey}, {"STRLEN", dataKey}}
	windowed := cl.Args[0] == "generations"
	if windowed {
		cmds = [][]any{{"GET", cfgKey}, {"ZCARD", dataKey}, {"ZSCORE", dataKey, gensMark}}
	}
	return wire.Plain{
		Cmds: cmds,
		Decode: func(res []any) (any, error) {
			if err, ok := res[0].(error); ok {
				return nil, problem{kind: wrongType, key: cfgKey, detail: err.Error()}
			}
			if err, ok := res[1].(error); ok {
				return nil, problem{kind: wrongType, key: dataKey, detail: err.Error()}
			}
			n, _ := res[1].(int64)
			if windowed && res[2] != nil {
				n--
			}
			return []any{res[0], n}, nil
		},
	}
}

// readPlain is read.lua in plain commands.
func readPlain(cl wire.Call) wire.Plain {
	cfgKey, key := cl.Keys[0], cl.Keys[1]
	want, nbytes, what, first, last := cl.Args[0], cl.Args[1].(int64), cl.Args[2], cl.Args[3], cl.Args[4]
	windowed := len(cl.Keys) == 3
	read := []any{"GETRANGE", key, first, last}
	if what == "count" {
		read = []any{"BITCOUNT", key, first, last}
	}
	cmds := [][]any{{"GET", cfgKey}, {"STRLEN", key}}
	if windowed {
		cmds = append(cmds, []any{"ZSCORE", cl.Keys[2], key})
	}
	cmds = append(cmds, read, []any{"GET", cfgKey}, []any{"STRLEN", key})
	return wire.Plain{
		Cmds: cmds,
		Decode: func(res []any) (any, error) {
			n := len(res)
			for i, k := range map[int]string{0: cfgKey, 1: key, n - 2: cfgKey, n - 1: key} {
				if err, ok := res[i].(error); ok {
					return nil, problem{kind: wrongType, key: k, detail: err.Error()}
				}
			}
			if err := checkConfigs(cfgKey, want, res[0], res[n-2]); err != nil {
				return nil, err
			}
			before, _ := res[1].(int64)
			after, _ := res[n-1].(int64)
			switch {
			case before == nbytes && after == nbytes && windowed && res[2] == nil:
				return nil, problem{kind: foreign, key: key, detail: fmt.Sprintf("holds a string of %d bytes that the window did not record", nbytes)}
			case before == nbytes && after == nbytes:
				return res[n-3], nil
			case before != 0 && before != nbytes || after != 0 && after != nbytes:
				return nil, problem{kind: wrongLength, key: key, detail: fmt.Sprintf("%d %d", max(before, after), nbytes)}
			case !windowed:
				return nil, problem{kind: noBitmap, key: key}
			}
			if now, _ := cl.Args[5].(int64); res[2] != nil && parseMillis(res[2]) > now {
				return nil, problem{kind: noGeneration, key: key}
			}
			if what == "count" {
				return int64(0), nil
			}
			return "", nil
		},
	}
}

// changesPlain is changes.lua in plain commands, in two round trips: the
// log's header and length first, which say where in the log the reader's
// position and checkpoint are, and then the rest, with the header read
// again before and after: a log of one header is only appended to, so that
// its bytes up to the length read first stay as they were. A user that
// may not run scripts may not run INFO either: the replication ID is ""
// (see cursor.kept).
func changesPlain(cl wire.Call) wire.Plain {
	cfgKey, key, logKey := cl.Keys[0], cl.Keys[1], cl.Keys[2]
	a := changesArgsOf(cl.Args)
	want, nbytes, epoch, pos, most, check := a.cfg, a.nbytes, a.epoch, a.pos, a.most, a.check
	nheld, ntail, ranged := int64(a.nheld), int64(a.ntail), a.ranged
	var header any // the header the first round trip read
	var logEpoch string
	var base, last, upto int64
	var covered, held, notLog bool
	readHeader := []any{"GETRANGE", logKey, 0, logHeader - 1}
	bytes := func(from, to int64) []any {
		return []any{"GETRANGE", logKey, logHeader + from - base, logHeader + to - base - 1}
	}
	return wire.Plain{
		Pre: [][]any{readHeader, {"STRLEN", logKey}},
		Build: func(pre []any) [][]any {
			header = pre[0]
			n, _ := pre[1].(int64)
			var ok bool
			if logEpoch, base, ok = parseLogHeader(header); ok {
				last = base + n - logHeader
			}
			notLog = !ok && n > 0
			covered = logEpoch == epoch && pos >= base && pos <= last
			held = logEpoch == epoch && check-nheld >= base && check <= last
			upto = last
			if covered && !ranged {
				upto = min(last, pos+int64(most))
			}
			cmds := [][]any{{"GET", cfgKey}, {"STRLEN", key}, readHeader}
			// GETRANGE of an empty range answers the last byte: these
			// are asked for only if not empty.
			if covered && upto > pos {
				cmds = append(cmds, bytes(pos, upto))
			}
			if held && nheld > 0 {
				cmds = append(cmds, bytes(check-nheld, check))
			}
			if from := max(base, upto-ntail); (!held || upto > check) && upto > from {
				cmds = append(cmds, bytes(from, upto))
			}
			// The bitmap after the log's length: it holds every bit
			// logged before that end.
			if ranged {
				cmds = append(cmds, []any{"GETRANGE", key, a.first, a.last})
			}
			return append(cmds, []any{"GET", cfgKey}, []any{"STRLEN", key}, readHeader)
		},
		Decode: func(res []any) (any, error) {
			n := len(res)
			for i, k := range map[int]string{0: cfgKey, 1: key, 2: logKey, n - 3: cfgKey, n - 2: key, n - 1: logKey} {
				if err, ok := res[i].(error); ok {
					return nil, problem{kind: wrongType, key: k, detail: err.Error()}
				}
			}
			if err := checkConfigs(cfgKey, want, res[0], res[n-3]); err != nil {
				return nil, err
			}
			for _, l := range []any{res[1], res[n-2]} {
				switch l, _ := l.(int64); {
				case l == 0:
					return nil, problem{kind: noBitmap, key: key}
				case l != nbytes:
					return nil, problem{kind: wrongLength, key: key, detail: fmt.Sprintf("%d %d", l, nbytes)}
				}
			}
			if notLog {
				return nil, problem{kind: foreign, key: logKey, detail: "does not start with the header of a change log"}
			}
			// A header read again that changed (the log trimmed or
			// started again meanwhile) leaves the bytes read of no known
			// place: no records, no checkpoint's bytes, and no tail.
			same := res[2] == header && res[n-1] == header
			next := 3
			take := func(asked bool) string {
				if !asked {
					return ""
				}
				next++
				b, _ := res[next-1].(string)
				return b
			}
			// A user that may not run scripts may not run INFO either:
			// the replication ID is "".
			l := logRead{epoch: logEpoch, base: base, end: last}
			if r := take(covered && upto > pos); covered && same {
				l.records = append(make([]byte, 0, len(r)), r...) // not nil: the log holds the position
			}
			if b := take(held && nheld > 0); held && same {
				l.held = &b
			}
			if t := take((!held || upto > check) && upto > max(base, upto-ntail)); same {
				l.tail = t
			}
			if ranged {
				l.bitmap, _ = res[n-4].(string)
			}
			return l.reply(ranged), nil
		},
	}
}

// parseLogHeader returns the epoch and the first position of a change
// log's header (see lua/log.lua), and whether it is one; "" and 0 for no
// log.
func parseLogHeader(v any) (string, int64, bool) {
	s, _ := v.(string)
	if s == "" {
		return "", 0, true
	}
	var epoch, base int64
	if len(s) != logHeader || s[logHeader-1] != '\n' {
		return "", 0, false
	}
	if _, err := fmt.Sscanf(s, logHeaderFormat, &epoch, &base); err != nil {
		return "", 0, false
	}
	return fmt.Sprintf("%015d", epoch), base, true
}
