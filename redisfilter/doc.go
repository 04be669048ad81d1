// Package redisfilter keeps Guava-compatible Bloom filters in Redis, so that a
// fleet of processes shares one filter.
//
// The Redis string of a filter is Guava's bit array: bit i of the filter, the
// bit that index i of the strategy selects, is at Redis bit offset i XOR 63.
// Redis numbers the bits of a string from the most significant bit of its
// first byte, and Guava's writeTo writes 64-bit words big-endian with bit 0
// the least significant, so flipping the low six bits of the index turns
// one numbering into the other. As a result:
//
//   - GET returns the words of Guava's writeTo stream: prefixed with its
//     6-byte header (strategy ordinal, k, word count), they are what
//     BloomFilter.readFrom and [bloom.ReadFrom] read ([Filter.Snapshot] does
//     exactly that);
//   - BITOP OR of two filters is Guava's putAll ([Filter.Merge] uses it);
//   - BITCOUNT is the number of bits set ([Filter.BitCount]), from which
//     [Filter.ExpectedFPP] and [Filter.ApproximateElementCount] are Guava's
//     statistics without moving the bits.
//
// A filter has the funnels, strategies, sizing and number of hash functions
// of [bloom.Filter]: the same values put through [Filter.Put] and
// [bloom.Filter.Put] set the same bits.
//
// The config key records the funnel by its String method, since a funnel
// cannot be stored: every process that opens a filter must use a funnel of
// the same name. The built-in funnels have names; wrap any other in
// [funnel.Named], as in funnel.Named("orders/v1", funnel.Func[Order](putOrder)),
// and give it a new name when the way it feeds values changes.
//
// # Keys
//
// A filter named name of up to 16 MiB has these keys, which share a Redis
// Cluster hash slot:
//
//	{name}                 the bit array, a string of exactly BitSize/8 bytes
//	{name}:config          its parameters and identity, as in
//	                       mitzbloom/redisfilter v1 bits=9600 k=7 strategy=MURMUR128_MITZ_64 funnel="funnel.String" id=5f0c2a9e81d4b7c3 n=1000 p=0.01
//	{name}:hold            where a Put that finds the filter changed moves the bitmap for an instant
//	{name}:changes         the change log: a header, then the offsets of the bits set lately, 4 bytes each (see [WithChangeLog])
//
// # Shards
//
// A larger filter, or one opened with [WithShardBytes], is cut into shards:
// shard s holds a contiguous range of Guava's words in a string of its own,
// beside its own config and hold keys, so that each shard checks its
// parameters within its own slot. Shard 0 is {name}, whatever the layout,
// so that {name}:config is the one place where a name's parameters are
// found: processes that open a name with any other parameters or layout
// get [ErrMismatch]. Shard s > 0 is {name#s}. The shards' tags are chosen so
// that no two shards share a slot (while there are at most 16384), and a
// cluster spreads them, their memory and their work, over its nodes: for up
// to 256 shards, shard s of n is in the s-th of n equal ranges of slots, so
// that masters serving equal ranges of slots, as redis-cli --cluster create
// and rebalance leave them, hold equal numbers of shards (±1). Without
// WithShardBytes, shards are of 16 MiB, which Redis creates in 10 to 20 ms
// each where mapping fresh memory is fast, and in up to 60 ms on VMs where
// it is slow (see the operator's guide); a filter can have up to Guava's
// 2³¹−1 words (16 GiB). The values of [Filter.Keys], concatenated, are
// Guava's words, and [Filter.Snapshot] returns the same filter as an
// unsharded one with the same puts.
//
// # Scripts and transactions
//
// A Put sets its bits with one BITFIELD per shard touched, in a MULTI/EXEC
// transaction between two small scripts: the first checks the shard's config
// and bitmap and, if the filter is not the one this process opened, moves
// the bitmap aside so that the BITFIELD fails and sets nothing; the second
// puts it back. A MightContain reads the config and the bitmap's length
// before and after its BITFIELD_RO, with plain read commands: the identity
// of a filter never comes back once it changes, and bits are never cleared,
// so if both agree the bits read are the filter's. So the bits are set and
// tested at the speed of Redis's own BITFIELD, with the checks in the same
// atomic step. A read of 16 values or more goes in two steps, as Guava's
// mightContain stops at a value's first bit not set: first the first bit of
// every value, then the other bits of the values whose first bit is set. A
// value that is not in the filter then costs the server one bit instead of
// k, about 7 times less when the filter is far from full, for a second round
// trip.
//
// [Open] creates both, the bitmap at its full size, or checks that the
// stored parameters are the ones asked for. It creates a filter of several
// shards after claiming it in {name}:config, so that an Open that finds
// shards without a config in the first tells a filter that lost its first
// shard ([ErrLost]) from one being created, which it waits for; and it
// finishes a creation that another process abandoned (it crashed, or its
// context was cancelled) once it has seen the claim unchanged for 5 s, by
// its own clock (the creation renews it before each shard), or at once if
// the creation gave it up.
// Every call checks the config
// again on the server, in the same atomic step that reads or sets the bits,
// so a filter re-created with other parameters gives an error wrapping
// [ErrMismatch], and one re-created with the same parameters (a new id) or
// whose keys are gone an error wrapping [ErrLost], never wrong answers or
// corrupted bits.
//
// Nothing that redisfilter did not write is ever changed or deleted. Each
// key carries a mark that redisfilter writes, which every script that
// writes the key checks in the same atomic step: the config key holds a
// config, which names its creation; a shard's bitmap is the one beside its
// config; the hold key holds "mitzbloom"; the change log starts with its
// header; a window's record of generations holds a member of its own, and
// its generations are the bitmaps it records. A key of the filter that
// holds anything else (another type, a string of the wrong length, or one
// without its mark) gives an error wrapping [ErrNotFilter] that names it,
// and the call writes nothing there: Open before it writes anything, and
// every later call that would write it. [Filter.Delete] deletes only the
// keys that carry their marks. A windowed filter ([OpenWindowed]) keeps
// one bitmap per generation, {name}:<generation>, beside the same config
// key, and records the generations it created in the sorted set
// {name}:generations.
//
// Names are at most 256 bytes of UTF-8 without '{', '}', '#' or control
// characters, on every kind of server alike. The scripts use Redis 7's
// shebang flags: Redis 7.0 or later is required.
//
// # Round trips and timeouts
//
// Put and MightContain cost one round trip each. PutMany and
// MightContainMany hash their values locally, group their bit offsets by
// shard, and send them in one pipeline per node (the nodes in parallel) for
// each batch of up to 16 × 4096 offsets (9362 values at k = 7): each
// BITFIELD sets or tests at most 4096 bits, so that no command holds Redis
// for more than a millisecond. So MightContainMany costs one round trip per
// node for each such batch, two from 16 values on (see above), the second
// if some value's first bit is set. A PutMany of fewer than 16 values costs
// one; from 16 values on it first reads them, on the masters, as
// MightContainMany does, and then puts only those it did not find, so that
// values already in the filter cost a read, and append nothing to the
// change log: one or two round trips more. With a ClusterClient
// created with ReadOnly, reads go to replicas, chosen as go-redis chooses
// them (RouteByLatency, RouteRandomly); a replica may lag its master, so a
// read there may miss a put acknowledged a moment before. A read that a
// replica answers without the filter's keys, or with keys of another
// creation (it restarted empty and is syncing, or a slot is moving), is
// asked again of the master, whose answer stands: only a master reports a
// loss. An empty batch sends nothing.
//
// Redis replicates asynchronously: a write acknowledged by a master that
// fails before its replicas received it is lost, and the replica promoted
// in its place answers false for its values. [WithWait] makes writes wait
// for replicas, on the connection that carried them, and report
// [ErrNotReplicated] when they are not confirmed.
//
// Every method takes a context. go-redis honours context deadlines while it
// waits for the network only when the client's Options.ContextTimeoutEnabled
// is set; without it a call to an unresponsive server waits for the client's
// ReadTimeout (3 s by default) instead. An error that the context's
// deadline caused wraps context.DeadlineExceeded.
//
// # Local copies
//
// [Filter.Snapshot] copies the filter into a local [bloom.Filter] in chunks
// of 1 MiB, and [Filter.Merge] ORs a local filter into Redis in chunks.
// [Hybrid] builds on
// both: each process puts and queries a local lock-free filter at memory
// speed, and synchronizes it with the shared one periodically.
//
// # How it is built
//
// The calls run one way, down:
//
//	Filter (filter.go), Windowed (window.go)   Hybrid (hybrid.go; its Sync: sync.go, pull.go, cursor.go)
//	        └──────────────┬────────────────────────┘
//	core: parameters, shards, batches, chunks, Open, the checks of the keys and their errors
//	        (core.go, batch.go, request.go, chunks.go, open.go, errors.go; the scripts in lua/,
//	        their protocol beside them: scripts.go, logproto.go, plain.go)
//	        │
//	internal/wire: each command and script to its node, redirections and retries, WAIT,
//	        bytes counted per call, Redis's and the network's errors
//	        │
//	go-redis
package redisfilter
