// Package raw is the low level of package bloom, for tools and for programs
// that keep a Guava filter elsewhere (in a shared store, say) and a
// [bloom.Filter] in step with it. Programs that put values in filters and
// look them up need only package bloom.
//
// Everything here is in Guava's terms, so that a filter kept elsewhere
// stays bit for bit the one Guava and package bloom build:
//
//   - [Sum128] and [HasherFor] compute Guava's Murmur3-128 hash of a value,
//     the bytes a funnel feeds for it hashed as
//     Hashing.murmur3_128().hashObject(v, funnel) hashes them, and
//     [AppendIndexes] the bit indexes that a strategy derives from the hash.
//   - [PutHash] and [PutHashes] put values in a [bloom.Filter] by their hash,
//     for a caller that needs the hash of the values that changed it;
//     [SetBit] and [OrEncoded] set its bits one at a time or from Guava's
//     encoding of them; [CheckCompatible] is the check of Filter.PutAll for
//     a filter known by its parameters.
//   - [ParseHeader] reads the header of Guava's writeTo format, which tells
//     a filter's size before its bits are read.
//   - [Funnel], [Strategy] and [Configure] tell the parameters of a filter
//     and of a list of bloom.Options.
//
// Bits are numbered as in Guava: bit i is bit i%64, from the least
// significant, of word i/64, and Guava's writeTo format writes each word as
// 8 bytes big-endian after a 6-byte header. A store that keeps those bytes
// as they are, such as a Redis string, thus holds bit i at bit offset i^63
// when it counts bits from the most significant of each byte, as Redis's
// SETBIT and GETBIT do.
package raw
