package wire

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"
)

// The sentinels of what Redis and the network answer, which package
// redisfilter exports as its own, the same values, with their
// documentation: errors.Is finds them through either name.
var (
	ErrNotFilter     = errors.New("redisfilter: key holds no filter")
	ErrOutOfMemory   = errors.New("redisfilter: Redis is out of memory")
	ErrNoPermission  = errors.New("redisfilter: no permission")
	ErrTryAgain      = errors.New("redisfilter: try again")
	ErrNotReplicated = errors.New("redisfilter: write not confirmed by replicas")
	ErrUnavailable   = errors.New("redisfilter: server unavailable")
	ErrClosed        = errors.New("redisfilter: client is closed")
)

// abortPrefix starts the error of an EXEC that Redis refused because of an
// error in the transaction, which follows.
const abortPrefix = "EXECABORT Transaction discarded because of: "

// ScriptDenied is in the error of a script that ran a command its ACL user
// may not run, whatever the code before it (ERR in Redis 7.0).
const ScriptDenied = "can't run this command or subcommand"

// Cause returns the error reply that err, an EXEC refused (EXECABORT),
// names as its cause, or err itself.
func Cause(err error) error {
	if cause, ok := strings.CutPrefix(err.Error(), abortPrefix); ok {
		return errors.New(strings.TrimPrefix(cause, "-"))
	}
	return err
}

// Describe returns err, an error of a call that is none of the caller's
// own (a Redis error reply, or an error of the network or the client),
// wrapped in the sentinel that stands for it, if any, with what, the call
// and its filter, in the message. An error of the network at or after
// ctx's deadline, which go-redis sets on its connections when
// ContextTimeoutEnabled is set, wraps ctx's error too; a deadline that a
// client without a connection reached while it retried a dial that failed
// wraps the error of its last dial too, as the client saw it. It does no
// I/O.
func (w *Wire) Describe(ctx context.Context, what string, err error) error {
	var rerr redis.Error
	if errors.As(err, &rerr) {
		if why, sentinel := replySentinel(Cause(rerr)); sentinel != nil {
			return fmt.Errorf("%w: %s: %s%w", sentinel, what, why, err)
		}
	}
	if cerr := contextCause(ctx, err); cerr != nil {
		err = fmt.Errorf("%w: %w", cerr, err)
	}
	if derr := w.dials.lastError(); derr != nil && errors.Is(err, context.DeadlineExceeded) && !errors.Is(err, derr) && noConnection(w.rdb) {
		err = fmt.Errorf("%w; the client cannot connect: %w", err, derr)
	}
	if sentinel := networkSentinel(err); sentinel != nil {
		return fmt.Errorf("%w: %s: %w", sentinel, what, err)
	}
	return fmt.Errorf("redisfilter: %s: %w", what, err)
}

// replySentinel returns what to do about an error reply, followed by ": "
// (or ""), and its sentinel, nil for a reply no sentinel stands for, which
// an operator cannot act on.
func replySentinel(reply error) (string, error) {
	switch msg := reply.Error(); {
	case redis.IsPermissionError(reply) || strings.Contains(msg, ScriptDenied):
		return "the ACL user may not run " + deniedCommand(msg) + "; grant what the README's section Permissions lists: ", ErrNoPermission
	case AuthRefused(reply):
		return "Redis refused the client's credentials; check its Username and Password: ", ErrNoPermission
	case redis.IsOOMError(reply):
		return "", ErrOutOfMemory
	case Redirected(reply):
		return "", ErrTryAgain
	case redis.HasErrorPrefix(reply, "WRONGTYPE"):
		return "", ErrNotFilter
	}
	return "", nil
}

// ReplyText returns the text of the error reply of Redis that err is or
// wraps, if it is one.
func ReplyText(err error) (string, bool) {
	var rerr redis.Error
	if errors.As(err, &rerr) {
		return rerr.Error(), true
	}
	return "", false
}

// AuthRefused reports whether err is the server's refusal of the client's
// credentials: WRONGPASS (a wrong username or password, or a user
// disabled) or NOAUTH (no password given).
func AuthRefused(err error) bool {
	return redis.IsAuthError(err) && !strings.Contains(err.Error(), "unauthenticated")
}

// deniedCommand returns what an error of an ACL refusal, msg, says was
// refused: "the command X", or keys, or a command of a script.
func deniedCommand(msg string) string {
	if _, rest, ok := strings.Cut(msg, "permissions to run the '"); ok {
		if name, _, ok := strings.Cut(rest, "'"); ok {
			return "the command " + strings.ToUpper(name)
		}
	}
	if strings.Contains(msg, "access one of the keys") {
		return "commands on the filter's keys (grant its key pattern)"
	}
	if strings.Contains(msg, ScriptDenied) {
		return "a command that a script of redisfilter runs"
	}
	return "a command that the call needs"
}

// Redirected reports whether err is one that a cluster client handles by
// following the slot to another node, or retrying there: MOVED, ASK,
// TRYAGAIN, CLUSTERDOWN, LOADING, READONLY or MASTERDOWN.
func Redirected(err error) bool {
	_, moved := redis.IsMovedError(err)
	_, ask := redis.IsAskError(err)
	return moved || ask || redis.IsTryAgainError(err) || redis.IsClusterDownError(err) ||
		redis.IsLoadingError(err) || redis.IsReadOnlyError(err) || redis.IsMasterDownError(err)
}

// networkSentinel returns the sentinel of err, an error of the network or
// of the client: ErrClosed for a client closed, ErrUnavailable for a server
// that could not be reached, dropped the connection or did not answer in
// time; nil for the caller's cancellation, and for what is none of these.
func networkSentinel(err error) error {
	var nerr net.Error
	switch {
	case errors.Is(err, redis.ErrClosed) || errors.Is(err, net.ErrClosed):
		// go-redis's error for a client closed, and the network's for a
		// connection that its closing closed under a call.
		return ErrClosed
	case errors.Is(err, context.Canceled):
		return nil
	case errors.Is(err, context.DeadlineExceeded) || errors.As(err, &nerr) ||
		errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, redis.ErrPoolTimeout):
		// A *net.OpError, of a dial refused, a connection reset or a
		// timeout, is a net.Error; a connection the server closed ends
		// in EOF.
		return ErrUnavailable
	}
	return nil
}

// contextCause returns ctx's error if ctx is done, or if err is a timeout
// at or after ctx's deadline, and err does not already wrap it; nil
// otherwise.
func contextCause(ctx context.Context, err error) error {
	cerr := ctx.Err()
	var nerr net.Error
	if deadline, ok := ctx.Deadline(); cerr == nil && ok && errors.As(err, &nerr) && nerr.Timeout() && !time.Now().Before(deadline) {
		cerr = context.DeadlineExceeded
	}
	if cerr == nil || errors.Is(err, cerr) {
		return nil
	}
	return cerr
}
