// Package bloom implements Bloom filters that are bit-for-bit and
// byte-for-byte compatible with Guava's BloomFilter.
//
// A [Filter] answers "might this value have been put?": false means certainly
// not, true means probably, with a false-positive probability chosen when the
// filter is sized. There are no false negatives.
//
// Compatibility with Guava means that a Go service and a Java service that
// describe the same values with matching funnels (see package funnel) build
// the same filter from the same puts, and can exchange it:
//
//   - New sizes a filter from the expected number of insertions and the
//     false-positive probability with Guava's formulas, computed with Java's
//     floating-point results. The number of hash functions follows current
//     Guava, k = max(1, round(-ln p / ln 2)); [WithLegacyHashCount] selects
//     Guava 31.x's k = max(1, round(m/n·ln 2)), which differs only for tiny n.
//   - Put and MightContain hash with Murmur3-128 and probe the bits of the
//     chosen strategy (package strategy) exactly as Guava does.
//   - [Filter.WriteTo] writes Guava's writeTo format, and [ReadFrom] reads
//     it; see WriteTo for the layout. [Filter.MarshalText] writes the same
//     bytes in base64, so that a filter in JSON is a string that Java
//     decodes with java.util.Base64.
//
// A Filter is safe for concurrent use by multiple goroutines: like Guava's
// LockFreeBitArray, Put and MightContain use atomic operations on 64-bit
// words and never take a lock. [Filter.PutMany] and
// [Filter.MightContainMany] do the same for a slice of values, and
// [Filter.PutSeq] and [Filter.MightContainSeq] for an iter.Seq, a batch at
// a time, faster on filters larger than the CPU caches; [Filter.Clear]
// empties a filter in place. A [Builder] fills a new filter from one
// goroutine with plain writes, faster, and then hands it over, safe for
// concurrent use.
//
// A [Rotating] is a pair of filters that remembers values for a window of
// time in constant memory, for questions such as "have I seen this address
// in the last few minutes?". A [Scalable] is a list of filters that grows
// as values come, for when the number of values is not known: its
// false-positive probability stays below the one it is made with however
// many it receives.
//
// Filters kept elsewhere, such as redisfilter's in Redis, keep a Filter in
// step with theirs through its low level: [Filter.PutHash] and
// [Filter.PutHashes] put values by their hash ([funnel.Sum128]),
// [Filter.SetBit] and [Filter.OrEncoded] set bits in Guava's encoding,
// which is also a Redis bitmap's, and [Filter.CheckCompatible] runs
// PutAll's checks on another filter's parameters.
package bloom
