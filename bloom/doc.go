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
// many it receives. Both write Guava's format, a filter after another, and
// [ReadRotating] and [ReadScalable] read them back with the funnel alone.
//
// # Decoding without a funnel
//
// Guava's format does not record the funnel, so a filter is decoded with
// the funnel of the one it is decoded into: one made with [New], say, and
// then passed to json.Unmarshal. A zero filter, such as encoding/json makes
// for a nil *Filter field or for a map value, has no funnel: it takes the
// default funnel of its element type, the one built-in funnel for that
// type, or, with the Java funnel that matches it:
//
//	string          funnel.String     Funnels.stringFunnel(UTF_8)
//	[]byte          funnel.Bytes      Funnels.byteArrayFunnel()
//	int             funnel.Int        Funnels.longFunnel()
//	int32           funnel.Int32      Funnels.integerFunnel()
//	int64           funnel.Int64      Funnels.longFunnel()
//	uint            funnel.Uint       Funnels.longFunnel(), the long of the same bits
//	uint32          funnel.Uint32     Funnels.integerFunnel(), the int of the same bits
//	uint64          funnel.Uint64     Funnels.longFunnel(), the long of the same bits
//	float32         funnel.Float32    (f, into) -> into.putFloat(f)
//	float64         funnel.Float64    (d, into) -> into.putDouble(d)
//	bool            funnel.Bool       (b, into) -> into.putBoolean(b)
//	netip.Addr      funnel.Addr       (addr, into) -> into.putBytes(addr.getAddress())
//	netip.AddrPort  funnel.AddrPort   the address as above, then into.putShort((short) port)
//	net.IP          funnel.IP         (addr, into) -> into.putBytes(addr.getAddress())
//
// A filter whose values another funnel fed, such as funnel.UnencodedChars
// or one of a type without a built-in funnel, must be made with its funnel
// before it is decoded into, or it would be asked about other bytes than
// were put; for a type without a default funnel, decoding into a zero
// filter returns an error that says so. A zero Rotating or Scalable decodes
// as ReadRotating and ReadScalable read without options: it answers lookups
// but takes no Puts.
//
// The low level, for tools and for keeping a Guava filter elsewhere (by
// hash, bit by bit, or in Guava's bytes), is in package
// [github.com/mitzbloom/mitzbloom/bloom/raw].
package bloom
