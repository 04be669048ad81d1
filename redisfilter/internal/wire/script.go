package wire

import (
	"context"
	"crypto/sha1"
	"encoding/hex"
	"errors"
	"slices"
	"strings"

	"github.com/redis/go-redis/v9"
)

// A Script is a Lua script as it is sent to Redis.
type Script struct {
	text     string
	sha      string // its SHA-1, in hex, for EVALSHA
	readOnly bool   // flags=no-writes: sent with EVALSHA_RO and EVAL_RO
	// plain, if not nil, does what the script does with plain read
	// commands, for a user that may not run scripts.
	plain func(Call) Plain
}

// NewScript returns the script of text, which starts with its shebang:
// "#!lua flags=no-writes" makes it read-only, sent with the _RO commands,
// so that a read-only ACL user, a replica and a server out of memory run
// it. plain, if not nil, does what it does with plain read commands, for a
// user that may not run scripts at all.
func NewScript(text string, plain func(Call) Plain) Script {
	shebang, _, _ := strings.Cut(text, "\n")
	sha := sha1.Sum([]byte(text))
	return Script{text: text, sha: hex.EncodeToString(sha[:]), readOnly: strings.Contains(shebang, "flags=no-writes"), plain: plain}
}

// Text returns the script as it is sent.
func (s Script) Text() string { return s.text }

// ReadOnly reports whether s only reads.
func (s Script) ReadOnly() bool { return s.readOnly }

// Plain returns what s does for c in plain commands, if it has a plain
// equivalent.
func (s Script) Plain(c Call) (Plain, bool) {
	if s.plain == nil {
		return Plain{}, false
	}
	return s.plain(c), true
}

// A Call is one run of a script on one slot: its keys, all in that slot,
// and its arguments.
type Call struct {
	Keys []string
	Args []any
}

// A Reply is what a call of a script returned.
type Reply struct {
	Val     any // nil for Lua's false
	Err     error
	Replica bool // a replica may have answered
}

// A Plain is what a script does in plain commands: the commands, and how
// their replies make the script's reply, or its error. If Pre is set, its
// commands are sent first, to the master, and Build makes the commands of
// their replies.
type Plain struct {
	Pre    [][]any
	Build  func(pre []any) [][]any
	Cmds   [][]any
	Decode func(res []any) (any, error)
}

// command returns the command that runs s for c: by its SHA-1, or by its
// text if text is set, with the _RO commands if s only reads.
func (s Script) command(text bool, c Call) []any {
	name, body := "EVALSHA", s.sha
	if text {
		name, body = "EVAL", s.text
	}
	if s.readOnly {
		name += "_RO"
	}
	args := make([]any, 0, 3+len(c.Keys)+len(c.Args))
	args = append(args, name, body, len(c.Keys))
	for _, k := range c.Keys {
		args = append(args, k)
	}
	return append(args, c.Args...)
}

// Command returns the EVAL that runs s for c, by its text, for a caller
// that sends it within a transaction of its own.
func (s Script) Command(c Call) []any { return s.command(true, c) }

// Run runs s once per call, each on the node of its keys' slot as rt says
// (see Send), and returns each call's reply; a replica's error reply that
// w doubts is asked again of the master. Scripts are run by their SHA-1; a
// server that does not know it (after a restart, or SCRIPT FLUSH) gets the
// calls that failed sent again with the script's text, which is safe
// because none of them ran. The calls of a script with a plain equivalent
// that the ACL refused are sent again as plain commands.
func (w *Wire) Run(ctx context.Context, s Script, rt Route, calls []Call) []Reply {
	reqs := make([]*Request, len(calls))
	for i, c := range calls {
		reqs[i] = &Request{Key: c.Keys[0], Cmds: [][]any{s.command(false, c)}}
	}
	check := func(i int) error { return failed(reqs[i]) }
	w.Send(ctx, reqs, rt, check)
	var again []*Request
	for i, r := range reqs {
		if noScript(failed(r)) {
			r.Res, r.Err, r.Cmds = nil, nil, [][]any{s.command(true, calls[i])}
			again = append(again, r)
		}
	}
	if len(again) > 0 {
		w.Send(ctx, again, rt, func(i int) error { return failed(again[i]) })
	}
	if s.plain != nil {
		w.sendPlain(ctx, s, rt, calls, reqs)
	}
	replies := make([]Reply, len(reqs))
	for i, r := range reqs {
		if err := failed(r); err != nil {
			replies[i].Err = err
			continue
		}
		replies[i] = Reply{Val: r.Res[0], Err: r.Unconfirmed, Replica: r.Replica}
	}
	return replies
}

// failed returns the error of a request of one command: its own, or its
// command's error reply.
func failed(r *Request) error {
	if r.Err != nil {
		return r.Err
	}
	if err, ok := r.Res[0].(error); ok {
		return err
	}
	return nil
}

// noScript reports whether err says that the server does not know a
// script's SHA-1.
func noScript(err error) bool {
	return err != nil && (errors.Is(err, redis.ErrNoScript) || redis.HasErrorPrefix(err, "NOSCRIPT"))
}

// scriptRefused reports whether err is an ACL's refusal of the commands
// that run read-only scripts.
func scriptRefused(err error) bool {
	if err == nil {
		return false
	}
	msg := err.Error()
	return strings.HasPrefix(msg, "NOPERM") && (strings.Contains(msg, "'evalsha_ro'") || strings.Contains(msg, "'eval_ro'"))
}

// sendPlain sends again, as plain commands, the calls of s that the ACL
// refused, and puts the reply each makes, or its error, in its request.
func (w *Wire) sendPlain(ctx context.Context, s Script, rt Route, calls []Call, reqs []*Request) {
	var refused, pre []*Request
	var plains []Plain
	for i, r := range reqs {
		if scriptRefused(failed(r)) {
			p := s.plain(calls[i])
			r.Res, r.Err, r.Cmds = nil, nil, p.Cmds
			if p.Pre != nil {
				r.Cmds = p.Pre
				pre = append(pre, r)
			}
			refused, plains = append(refused, r), append(plains, p)
		}
	}
	if len(refused) == 0 {
		return
	}
	if len(pre) > 0 {
		w.send(ctx, pre, Master)
		for i, r := range refused {
			if p := plains[i]; p.Pre != nil && r.Err == nil {
				r.Cmds, r.Res = p.Build(r.Res), nil
			}
		}
		// A request whose first round trip failed keeps its error.
		for i := len(refused) - 1; i >= 0; i-- {
			if refused[i].Err != nil {
				refused = slices.Delete(refused, i, i+1)
				plains = slices.Delete(plains, i, i+1)
			}
		}
	}
	check := func(i int) error {
		if r := refused[i]; r.Err != nil {
			return r.Err
		}
		_, err := plains[i].Decode(refused[i].Res)
		return err
	}
	w.Send(ctx, refused, rt, check)
	for i, r := range refused {
		if r.Err != nil {
			continue
		}
		v, err := plains[i].Decode(r.Res)
		if err != nil {
			v = err
		}
		r.Res = []any{v}
	}
}
