package redisfilter

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/mitzbloom/mitzbloom/redisfilter/internal/wire"
)

// The errors of this package about the filter in Redis, and about the
// network and the client, wrap one of these sentinels, so that callers can
// test for them with errors.Is; the message says which key and what to do.
// Errors for bad arguments wrap [bloom.ErrInvalidArgument], for merging an
// incompatible local filter [bloom.ErrIncompatible]. The errors of Redis and
// of the network are wrapped too, so that errors.Is finds
// context.DeadlineExceeded and errors.As a redis.Error or a *net.OpError
// among them. An error that the caller's cancellation of the context
// caused wraps context.Canceled, and no sentinel of this package. Any other
// error of Redis, of a kind no sentinel stands for, is returned wrapped as
// it is.
var (
	// ErrMismatch is returned by Open, and by any call, when the filter's
	// config key holds other parameters (bit size, number of hash
	// functions, strategy, funnel name, shard size, window) than those it
	// was opened with: another process created the filter, or created it
	// again, with other ones. The message shows both, with the expected
	// insertions n and false-positive probability p that each side was
	// created for (for a filter created by a release that did not record
	// them, the range of n and p its size gives). Open the filter with its
	// parameters, or use another name.
	ErrMismatch = errors.New("redisfilter: parameters do not match")

	// ErrLost is returned when a filter that existed lost its bits: its
	// bitmap, a window generation that should exist, or its config key is
	// gone (deleted, evicted, flushed, or lost with a restart of a server
	// that does not persist its data), or the filter was created again
	// since this Filter opened it. A call that gets it answers nothing,
	// since any answer could be a false "never seen". The message says what
	// is gone and what to do: [WithRecreate] starts a lost filter again
	// empty, [WithAdopt] takes back a bitmap whose config key is gone, a
	// Filter of a re-created filter must be opened again, and a [Hybrid]'s
	// Sync rebuilds the filter from its local copy by itself.
	ErrLost = errors.New("redisfilter: filter lost")

	// ErrEvictable is returned by Open when a server's maxmemory-policy
	// may evict the filter's keys: allkeys-* for every filter, and
	// volatile-* as well for a windowed one, whose bitmaps have an expiry.
	// Set the policy to noeviction (or volatile-* for a plain filter), or
	// open with [WithEvictionAllowed], and evicted bits will be reported as
	// [ErrLost].
	ErrEvictable = errors.New("redisfilter: server may evict the filter")

	// ErrNotFilter is returned when a key of the filter holds what
	// redisfilter did not write: a value of another type, a string of the
	// wrong length, or one without the mark that redisfilter writes there
	// (see the package documentation). The message names the key, and the
	// call wrote nothing there. Delete the key or use another name.
	ErrNotFilter = wire.ErrNotFilter

	// ErrOutOfMemory wraps Redis's OOM error, returned by the calls that
	// write (Put, PutMany, Merge, and Open when it creates the filter) when
	// the server is at its maxmemory under noeviction. Reads still work.
	// Raise maxmemory or free memory.
	ErrOutOfMemory = wire.ErrOutOfMemory

	// ErrNoPermission wraps Redis's NOPERM error, returned when the ACL
	// user lacks a command or key pattern the call needs: grant what the
	// README's section on permissions lists. It also wraps a failed
	// authentication, WRONGPASS (the client's Username or Password is
	// wrong, or the user is disabled) or NOAUTH (the server wants a
	// password the client did not give).
	ErrNoPermission = wire.ErrNoPermission

	// ErrTryAgain means one thing: what the call reads was moving or
	// changing under it, each time it tried, and it gave no answer, so
	// none is wrong: retry in a moment. It is returned when:
	//   - Redis Cluster could not serve the call for now, after go-redis's
	//     ClusterClient retried it with backoff (ClusterOptions.MaxRedirects
	//     times, 3 by default) and redisfilter sent it again for about
	//     300 ms more, within the call's context: the filter's slot is
	//     being migrated (TRYAGAIN, MOVED or ASK), or the cluster is
	//     failing over (CLUSTERDOWN, MASTERDOWN, READONLY, LOADING);
	//   - an Open found other processes changing the filter (creating it,
	//     or creating it again) each time it read it;
	//   - a Hybrid's Sync, reading a shard whole, found the shard's change
	//     log started again each time it read it (Merges of many bits
	//     racing it); the next Sync reads it again.
	ErrTryAgain = wire.ErrTryAgain

	// ErrNotReplicated is returned by a write (Put, PutMany, Merge, a
	// Hybrid's Sync, Open creating the filter) of a filter opened with
	// [WithWait] when Redis's WAIT did not confirm, within the timeout,
	// that as many replicas as asked received the write, on every node
	// written: the bits are set on the master, but a failover now could
	// lose them. Writes can be repeated: retry, and if it persists, look at
	// the replicas (INFO replication).
	ErrNotReplicated = wire.ErrNotReplicated

	// ErrUnavailable is returned when the server cannot be reached (the
	// connection is refused, or its name does not resolve), drops the
	// connection during a call, or does not answer within the call's
	// deadline or the client's timeouts. It wraps the cause: the network's
	// error (errors.As finds a *net.OpError), and context.DeadlineExceeded
	// for a call that reached its deadline. A write that got it may or may
	// not have run; a read answered nothing. Retry; a Hybrid's next Sync
	// pushes again what the failed one did not.
	ErrUnavailable = wire.ErrUnavailable

	// ErrClosed is returned by calls on a client that was closed (go-redis's
	// Client.Close or ClusterClient.Close), and by those that the closing
	// cut short. Use a client that is not closed.
	ErrClosed = wire.ErrClosed
)

// A problem is what a check of a filter's keys found wrong, in Go or in a
// script. It becomes an error wrapping a sentinel in one place,
// [core.problemError], which writes every message.
type problem struct {
	kind   problemKind
	key    string
	detail string // the stored config (otherConfig), "have want" (wrongLength), Redis's message (wrongType), a count (orphanGenerations)
}

func (p problem) Error() string { return fmt.Sprintf("%s %s %s", codes[p.kind].code, p.key, p.detail) }

// A problemKind is an index into codes.
type problemKind int

const (
	none              problemKind = iota
	noConfig                      // a config key is missing
	otherConfig                   // a config key holds another config
	noBitmap                      // a plain filter's bitmap is missing
	noGeneration                  // a window generation is missing before its expiry
	wrongLength                   // a bitmap of another length
	wrongType                     // a key of another type
	foreign                       // a key holds a string that redisfilter did not write
	noShard                       // Open: a shard's bitmap and config key are both missing
	orphanBitmap                  // Open: a bitmap of the filter's length whose config key is missing
	orphanGenerations             // Open: a record of generations whose config key is missing
	otherCreation                 // Open: a shard's config is of another creation than the first shard's
)

// codes is the one table from a problem to the code that a script reports
// it by, as "MITZBLOOM_<CODE> <key> <detail>" (see lua/lib.lua), and to
// the sentinel its error wraps; the problems that only Open finds have no
// code. The scripts' codes are tested against their Lua
// (TestScriptCodes). The error replies of Redis itself are described by
// the wire ([wire.Describe]).
var codes = [...]struct {
	code     string
	sentinel error
}{
	none:              {"", nil},
	noConfig:          {"MITZBLOOM_NOCONFIG", ErrLost},
	otherConfig:       {"MITZBLOOM_CONFIG", ErrMismatch},
	noBitmap:          {"MITZBLOOM_NOBITMAP", ErrLost},
	noGeneration:      {"MITZBLOOM_NOGENERATION", ErrLost},
	wrongLength:       {"MITZBLOOM_LENGTH", ErrNotFilter},
	wrongType:         {"MITZBLOOM_WRONGTYPE", ErrNotFilter},
	foreign:           {"MITZBLOOM_FOREIGN", ErrNotFilter},
	noShard:           {"", ErrLost},
	orphanBitmap:      {"", ErrLost},
	orphanGenerations: {"", ErrLost},
	otherCreation:     {"", ErrLost},
}

// problemOf returns the problem that an error reply msg of a script
// reports, or one of kind none. An EXECABORT has the problem of the error
// it names.
func problemOf(msg string) problem {
	msg = wire.Cause(errors.New(msg)).Error()
	code, rest, _ := strings.Cut(msg, " ")
	if !strings.HasPrefix(code, "MITZBLOOM_") {
		return problem{}
	}
	for kind, c := range codes {
		if c.code != code {
			continue
		}
		// A key is "{tag}" and a suffix without spaces, and a tag holds
		// no '}': the key ends at the first space after it.
		end := strings.IndexByte(rest, '}') + 1
		end += strings.IndexByte(rest[end:]+" ", ' ')
		return problem{kind: problemKind(kind), key: rest[:end], detail: strings.TrimPrefix(rest[end:], " ")}
	}
	return problem{}
}

// explain says what p is, in words an operator reads.
func (p problem) explain() string {
	switch p.kind {
	case noConfig:
		return "config key " + p.key + " is missing"
	case noBitmap:
		return "bitmap " + p.key + " is missing (deleted, evicted, or lost in a restart without persistence)"
	case noGeneration:
		return "window generation " + p.key + " is missing before its expiry"
	case wrongLength:
		have, want, _ := strings.Cut(p.detail, " ")
		return fmt.Sprintf("%s holds %s bytes, want %s", p.key, have, want)
	case wrongType:
		return p.key + ": " + p.detail + ", which redisfilter did not write: delete it, or use another name"
	case foreign:
		return p.key + " " + p.detail + ", which redisfilter did not write: delete it, or use another name"
	case noShard:
		return "bitmap " + p.key + " and its config key are missing"
	case orphanBitmap:
		return "config key " + p.key + ":config is missing, but bitmap " + p.key + " has the length of this filter"
	case orphanGenerations:
		return "config key " + p.key + " is missing, but the record of the shard's window generations holds " + p.detail
	case otherCreation:
		return "config key " + p.key + " is of another creation of the filter than the first shard's"
	}
	return p.Error()
}

// problemError returns the error of p found by the call op.
func (c *core[T]) problemError(op string, p problem) error {
	if p.kind == otherConfig && !isConfig(p.detail) {
		p = problem{kind: foreign, key: p.key, detail: fmt.Sprintf("holds %q, not a config of redisfilter", p.detail)}
	}
	sentinel := codes[p.kind].sentinel
	detail := p.explain()
	if p.kind == otherConfig {
		if paramsOf(p.detail) == c.params {
			return fmt.Errorf("%w: %s %q: re-created since this Filter opened it (config now %q, was %q): the values put before may be gone; open it again to use it",
				ErrLost, op, c.name, p.detail, c.cfg)
		}
		detail = fmt.Sprintf("%s holds a filter created for %s (%s), and this one is for n = %d at p = %g (%s): open it with the parameters it was created with (its n and p, and the strategy, funnel, shard size and window shown), or use another name",
			p.key, sizedFor(p.detail), paramsOf(p.detail), c.expected, c.fpp, c.params)
	}
	if sentinel == ErrLost {
		detail += c.lostAdvice
	}
	return fmt.Errorf("%w: %s %q: %s", sentinel, op, c.name, detail)
}

// asProblem returns the problem err is, found in Go or by a script, if
// it is one.
func asProblem(err error) (problem, bool) {
	if err == nil {
		// Said without errors.As, whose targets (p and the reply)
		// would cost two allocations for every PutMany of 16 values or
		// more and every answer of a replica.
		return problem{}, false
	}
	var p problem
	if errors.As(err, &p) {
		return p, true
	}
	if msg, ok := wire.ReplyText(err); ok {
		p = problemOf(msg)
	}
	return p, p.kind != none
}

// isProblem reports whether err is a problem, found in Go or by a script.
func isProblem(err error) bool {
	_, ok := asProblem(err)
	return ok
}

// wrap turns an error of a call op into one of this package's, naming the
// call and the filter: a problem with its message (problemError), and
// anything else as the wire describes it.
func (c *core[T]) wrap(ctx context.Context, op string, err error) error {
	if err == nil {
		return nil
	}
	if p, ok := asProblem(err); ok {
		return c.problemError(op, p)
	}
	return c.wire.Describe(ctx, fmt.Sprintf("%s %q", op, c.name), err)
}
