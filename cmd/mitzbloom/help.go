package main

import "strings"

// The help that -h prints is the one text of the command's documentation:
// doc.go is generated from it, and TestDocsUpToDate fails until it is. The
// texts are doc comment text, which reads as plain text on a terminal:
// paragraphs, and tab-indented blocks.

//go:generate go test -run ^TestDocsUpToDate$ -fixdocs

// mainIntro opens the help of mitzbloom and its package documentation.
const mainIntro = `
Mitzbloom builds, inspects, queries and merges Bloom filter files in the
format of Guava's BloomFilter.writeTo, which Java's BloomFilter.readFrom
reads, and which the Go package bloom reads and writes.
`

// mainDoc is what the help of mitzbloom says after the commands' synopses.
const mainDoc = `
Flags may come before, between and after the other arguments; after "--"
every argument is a file, or a key. A file named "-" is standard input: the
keys of build, or a filter of inspect, query or merge; "-o -" is standard
output.

Every output file is written to a temporary file beside it and renamed over
it once complete, so a command that fails leaves it as it was. A filter is
written to standard output only when that is not a terminal. -max-bytes N
refuses, from its header alone, a filter file of more than N bytes; without
it, a file still cannot make a command allocate much more than its own
size. A filter on standard input is read into memory before it is decoded.

The exit status is 0 on success and 2 on any error, which a line on
standard error describes, naming the file concerned. Query exits with 1
when a key is certainly absent, like grep when nothing matches.
`

// moreHelp ends the help of mitzbloom, and its usage errors.
const moreHelp = "Run 'mitzbloom COMMAND -h' for a command's help and flags.\n"

// mainHelp returns what "mitzbloom -h" prints.
func mainHelp() string {
	return strings.TrimPrefix(mainIntro, "\n") + "\n" + synopses() + mainDoc + "\n" + moreHelp
}

// synopses lists the usage of every command.
func synopses() string {
	var b strings.Builder
	b.WriteString("Usage:\n\n")
	for _, c := range commands {
		b.WriteString("\t" + c.usage() + "\n")
	}
	b.WriteString("\tmitzbloom help [COMMAND]\n")
	return b.String()
}

const buildSynopsis = "[-n N] -p P [-funnel F] [-strategy mitz64|mitz32] [-legacy-k] [-scalable] [-skip-bad] [-force] [-q] [-o FILE] [INPUT...]"

const buildDoc = `
Build reads one key per line from the INPUT files, or standard input if
there are none or for "-", and writes a filter sized as Guava's
BloomFilter.create(funnel, N, P) sizes it, holding them all. Lines end with
"\n" or "\r\n". Without -n, N is the number of lines of the INPUT files,
which build counts first; keys from standard input need -n. A line that is
not a key of the funnel is reported with its file and line number and makes
build fail, unless -skip-bad skips and counts it.

A filter that holds many more keys than N answers "maybe" to almost any
key. When the finished filter's expected false-positive probability is more
than twice P, build writes nothing and fails, saying how many keys it read
and the -n that fits them; -force writes the filter all the same, with the
same warning on standard error.

With -scalable, build writes a bloom.Scalable instead: stages of Guava
filters, oldest first, the first sized for N keys (1000 without -n, and
keys from standard input need none), each further one for twice the keys
of the one before at a lower rate, added as the keys come, so that the
false-positive probability stays below P however many keys there are. Java
reads the stages with BloomFilter.readFrom until the file ends, and a key
may be present when any stage says so; bloom.ReadScalable reads them with
the funnel alone, and with bloom.WithSizing(N, P) into a Scalable that goes
on growing.

Filters merge only when they have the same size, number of hash functions
and strategy, and hold keys of one funnel, which a file does not record:
build the filters to be merged with the same -funnel, -n, -p, -strategy and
-legacy-k.

The funnel says how a line becomes a key, and which Guava funnel the Java
side must read the filter with:

	string    the line's UTF-8 bytes   Funnels.stringFunnel(UTF_8)
	chars     its UTF-16 code units    Funnels.unencodedCharsFunnel()
	long      a decimal int64          Funnels.longFunnel()
	int       a decimal int32          Funnels.integerFunnel()
	bytes     hexadecimal bytes        Funnels.byteArrayFunnel()
	addr      an IP address            (a, into) -> into.putBytes(a.getAddress())
	addrport  address:port, [v6]:port  (s, into) -> { into.putBytes(s.getAddress().getAddress());
	                                                  into.putShort((short) s.getPort()); }

For addr and addrport an IPv4-mapped IPv6 address is the IPv4 address, as
InetAddress.getByName makes it, and a zone is dropped (see funnel.Addr).
Strategy mitz64 (MURMUR128_MITZ_64) is what Guava's create uses; -legacy-k
computes the number of hash functions as Guava 31.x and earlier do, which
differs from current Guava only for a tiny N (see
bloom.WithLegacyHashCount).

One goroutine reads and parses the input while another puts the keys, in
batches. On a terminal, build shows its progress on standard error (keys,
keys per second, and how much of the input is read, when its size is
known), unless -q is given.
`

const inspectSynopsis = "[-json] [-p P] [-max-bytes N] FILE..."

const inspectDoc = `
Inspect prints a file's strategy, number of hash functions, bit size, size
in bytes, bits set and fill ratio, Guava's approximateElementCount and
expectedFpp, and the create(funnel, n, p) calls that size a filter so. That
inverse has no single answer: for each p it tries (round values from 0.5
down to 1e-15, Guava's default 0.03, and those given with -p) it lists the
range of n that give exactly this bit size and number of hash functions,
which is about 64·ln²2/−ln p wide because bits are allocated in 64-bit
words, and which k rule gives them. With -json, inspect prints one JSON
object per file, one per line.

A file holding two filters of the same shape is taken to be the two
generations of a bloom.Rotating, current first, as Rotating.WriteTo writes
them: inspect describes each and their union, and query answers from
either. A file holding filters of one strategy, each larger than the one
before, is taken to be the stages of a bloom.Scalable, oldest first, as
Scalable.WriteTo writes them: inspect describes each stage, with its size,
fill ratio and rate, and their total, whose false-positive probability is
that of any stage answering "maybe", with the n and p of the
bloom.NewScalable of the default growth and tightening that makes such
stages (build -scalable's -n and -p, and what bloom.WithSizing takes to
read them back); query answers from any stage.

A file of one filter is opened in place (package bloom/mapped): inspect
reads its bits once, as fast as the file's pages can be read, and query
reads only the pages its keys need, so that a filter of gigabytes answers
at once. The files of a Rotating or a Scalable are read with the bloom
package's ReadRotating and ReadScalable.
`

const querySynopsis = "[-funnel F] [-q] [-max-bytes N] FILE [KEY...]"

const queryDoc = `
Query reads the filter FILE, or standard input for "-", with the funnel it
was built with, and prints, for each KEY, or each line of standard input if
there are none, the key, a tab, and "maybe" or "no". The keys of a filter
read from standard input are the arguments. Keys that begin with "-" go
after "--". -q prints nothing.

Query exits with 0 when every key may be in the filter, 1 when one
certainly is not, and 2 on an error, such as a key the funnel cannot
parse.

A FILE of one filter is opened in place: query reads only the pages of it
that its keys need, and takes about as long for a filter of gigabytes as
for a small one. It looks keys up a batch of lines at a time.
`

const mergeSynopsis = "-o OUT [-max-bytes N] [-force] A B..."

const mergeDoc = `
Merge puts the filters B... into A, as Guava's A.putAll(B) does, and
writes the result to OUT. Filters of different sizes, numbers of hash
functions or strategies cannot be merged: the error says so in Guava's
words, and which flags of build make them alike. A file does not record
the funnel its keys were put with, so merge cannot check that the filters
share one.

Like build, merge writes nothing and fails when the merged filter's
expected false-positive probability is more than twice P, the one its
filters were built with, saying about how many keys it holds (Guava's
approximateElementCount) and the -n to build the filters with instead;
-force writes it all the same, with the same warning. A file does not
record N and P either: merge works them out from the filters' size and
number of hash functions k, as inspect does, for the P inspect tries, and
for another P takes the largest that gives k, 2^(1/2-k).
`
