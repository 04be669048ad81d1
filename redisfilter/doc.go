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
//   - BITCOUNT is the number of bits set ([Filter.BitCount]).
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
// A filter named name has two keys that share a Redis Cluster hash slot:
//
//	{name}          the bit array, a string of exactly BitSize/8 bytes
//	{name}:config   its parameters and identity, as in
//	                mitzbloom/redisfilter v1 bits=9600 k=7 strategy=MURMUR128_MITZ_64 funnel="funnel.String" id=5f0c2a9e81d4b7c3
//
// [Open] creates both, the bitmap at its full size, or checks that the
// stored parameters are the ones asked for. Every call checks the config
// again on the server, in the same Lua script that reads or sets the bits,
// so a filter re-created with other parameters gives an error wrapping
// [ErrMismatch], and one re-created with the same parameters (a new id) or
// whose keys are gone an error wrapping [ErrLost], never wrong answers or
// corrupted bits. A key of the wrong type or length gives [ErrNotFilter]. A
// windowed filter ([OpenWindowed]) keeps one bitmap per generation,
// {name}:<generation>, beside the same config key, and records the
// generations it created in the sorted set {name}:generations.
//
// Names are at most 256 bytes of UTF-8 without '{', '}', '#' or control
// characters, on every kind of server alike. Redis strings hold at most
// 512 MiB, so a filter has at most 2³² bits. The scripts use Redis 7's
// shebang flags: Redis 7.0 or later is required.
//
// # Round trips and timeouts
//
// Put and MightContain cost one round trip each. PutMany and
// MightContainMany hash their values locally and send their bit offsets in
// one round trip per batch of up to 16 × 4096 offsets (16 × 585 values at
// k = 7): each Lua script sets or tests at most 4096 bits, so that no call
// holds Redis, which runs one script at a time, for more than a millisecond
// or two, and the scripts of a batch are pipelined. An empty batch sends
// nothing.
//
// Every method takes a context. go-redis honours context deadlines while it
// waits for the network only when the client's Options.ContextTimeoutEnabled
// is set; without it a call to an unresponsive server waits for the client's
// ReadTimeout (3 s by default) instead.
//
// # Local copies
//
// [Filter.Snapshot] copies the filter into a local [bloom.Filter] in chunks
// of 1 MiB, and [Filter.Merge] ORs a local filter into Redis in chunks. [Hybrid] builds on
// both: each process puts and queries a local lock-free filter at memory
// speed, and synchronizes it with the shared one periodically.
package redisfilter
