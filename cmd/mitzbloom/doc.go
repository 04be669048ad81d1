// Mitzbloom builds, inspects, queries and merges Bloom filter files in the
// format of Guava's BloomFilter.writeTo, which Java's BloomFilter.readFrom
// reads, and which the Go package bloom reads and writes.
//
// Usage:
//
//	mitzbloom build -n N -p P [-funnel F] [-strategy mitz32|mitz64] [-legacy-k] [-skip-bad] [-q] [-o FILE] [INPUT...]
//	mitzbloom inspect [-json] [-p P] [-max-bytes N] FILE...
//	mitzbloom query FILE [-funnel F] [-q] [-max-bytes N] [KEY...]
//	mitzbloom merge -o OUT [-max-bytes N] A B...
//
// Build reads one key per line from the INPUT files, or standard input if
// there are none or for "-", and writes a filter sized as Guava's
// BloomFilter.create(funnel, N, P) sizes it, holding them all. Lines end with
// "\n" or "\r\n". Without -n it counts the lines of the files first. A line
// that is not a key of the funnel is reported with its file and line number
// and makes build fail, unless -skip-bad skips and counts it. One goroutine
// reads and parses the input while another puts the keys, in batches. On a
// terminal, build shows its progress on standard error (keys, keys per
// second, and how much of the input is read, when its size is known), unless
// -q is given.
//
// The funnel says how a line becomes a key, and which Guava funnel the Java
// side must read the filter with:
//
//	string    the line's UTF-8 bytes   Funnels.stringFunnel(UTF_8)
//	chars     its UTF-16 code units    Funnels.unencodedCharsFunnel()
//	long      a decimal int64          Funnels.longFunnel()
//	int       a decimal int32          Funnels.integerFunnel()
//	bytes     hexadecimal bytes        Funnels.byteArrayFunnel()
//	addr      an IP address            (a, into) -> into.putBytes(a.getAddress())
//	addrport  address:port, [v6]:port  (s, into) -> { into.putBytes(s.getAddress().getAddress());
//	                                                  into.putShort((short) s.getPort()); }
//
// For addr and addrport an IPv4-mapped IPv6 address is the IPv4 address, as
// InetAddress.getByName makes it, and a zone is dropped (see funnel.Addr).
// Strategy mitz64 (MURMUR128_MITZ_64) is what Guava's create uses;
// -legacy-k computes the number of hash functions as Guava 31.x and earlier
// do, which differs from current Guava only for a tiny N (see
// bloom.WithLegacyHashCount).
//
// Inspect prints a file's strategy, number of hash functions, bit size,
// size in bytes, bits set and fill ratio, Guava's approximateElementCount
// and expectedFpp, and the create(funnel, n, p) calls that size a filter so.
// That inverse has no single answer: for each p it tries (round values from
// 0.5 down to 1e-15, Guava's default 0.03, and those given with -p) it lists
// the range of n that give exactly this bit size and number of hash
// functions, which is about 64·ln²2/−ln p wide because bits are allocated in
// 64-bit words, and which k rule gives them. A file holding two filters of
// the same shape is taken to be the two generations of a bloom.Rotating,
// current first, as Rotating.WriteTo writes them: inspect describes each and
// their union, and query answers from either. With -json, inspect prints one
// JSON object per file, one per line.
//
// Query reads a filter with the funnel it was built with and prints, for
// each KEY, or each line of standard input if there are none, the key, a
// tab, and "maybe" or "no". -q prints nothing.
//
// Merge puts the filters B... into A, as Guava's A.putAll(B) does, and
// writes the result to OUT. Filters of different sizes, numbers of hash
// functions or strategies cannot be merged; the error says so in Guava's
// words.
//
// Every output file is written to a temporary file beside it and renamed
// over it once complete, so a command that fails leaves it as it was.
// -max-bytes N refuses, from its header alone, a filter file of more than N
// bytes; without it, a file still cannot make the command allocate much more
// than its own size. A filter is written to standard output only when that is not a
// terminal.
//
// Flags of build, inspect and merge may come before or after the files;
// those of query before FILE or right after it. After "--" every argument is
// a file, or a key.
//
// The exit status is 0 on success and 2 on any error. Query exits with 1
// when a key is certainly absent, like grep when nothing matches.
package main
