package redisfilter

// logReadBytes is the most bytes of a change log one call of changes.lua
// returns: 262,144 bits, about 1 ms of the server.
const logReadBytes = 1 << 20

// checkBytes is how many of a log's bytes a cursor keeps before its
// checkpoint: 4 records. A log that lost its end and was appended to since
// holds other records there, unless those appended after the loss repeat,
// at the same positions, the 4 last the Hybrid saw. Records are offsets of
// bits drawn by a hash among the shard's, so that a chance repeat is one
// in the shard's bits to the 4th power; records repeated because the same
// values were put again set those bits again, and the loss before them
// goes unseen only if it too was written again, at the same positions.
const checkBytes = 16

// A cursor is where a Hybrid read a shard's change log up to, and how it
// tells that the log lost nothing it saw.
type cursor struct {
	replid string // the replication ID of the server that served it
	epoch  string // the log's epoch; "" for no log read yet
	pos    int64  // -1 for none in epoch: the shard is to be read whole
	// check is the checkpoint: the latest position in epoch that the
	// Hybrid saw the log reach, by reading it or by its own push, and
	// tail the log's bytes just before it, at most checkBytes. A log of
	// the epoch that still holds tail there holds everything the Hybrid
	// read or pushed (see pull).
	check int64
	tail  string
}

// A logView is what a script found of a shard's change log, seen from a
// cursor: the server's replication ID, the log's epoch and end, and its
// bytes before the cursor's checkpoint, if it holds them there.
type logView struct {
	replid, epoch string
	end           int64
	held          *string
}

// kept reports whether the server whose log v shows kept every write to
// the shard that this Hybrid read or pushed up to its checkpoint: whether
// the log holds, before the checkpoint, the bytes that the Hybrid saw
// there. A log is only appended to within an epoch, in the same step as
// the bits, and a slot moved or a failover or restart that lost nothing
// keeps it whole, so that a Hybrid tells them from a loss whatever node
// answers. A log of the cursor's epoch that ends before the checkpoint
// lost writes. A log that no longer holds the checkpoint, trimmed past it
// or started again, tells nothing: then a server of another replication
// ID than the one that last showed the checkpoint kept (a failover, a
// restart, or a slot moved) may have lost writes. A user denied INFO has
// no replication ID to go by.
func (cur *cursor) kept(v logView) bool {
	switch {
	case v.held != nil:
		return *v.held == cur.tail
	case v.epoch == cur.epoch && cur.check > v.end:
		return false
	}
	return cur.replid == "" || v.replid == cur.replid
}
