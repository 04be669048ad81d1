// Package bench measures mitzbloom against other ways of answering "have I
// seen this key?": bits-and-blooms/bloom, greatroar/blobloom, an exact Go map,
// and Guava itself on the JVM (java/GuavaBench.java). Every contender gets
// the same keys, the same filter sizes and the same requested
// false-positive probability, [P].
//
// A workload is a key type with the contenders that take it (a [Suite]):
// int64 keys ([Int64Key]) and host:port strings ([HostPortKey]). Each runs
// four operations ([Op]): Put into an empty filter up to its expected
// insertions, MightContain on a full filter with half of the keys present,
// and both again from all Ps at once. Besides time, [Suite.Measure] reports
// the false-positive rate measured on held-out keys and the memory each
// contender holds per key.
//
// The go test benchmarks of this module (bench_test.go) and the compare
// command (cmd/compare), which runs everything and writes the report under
// results/, share this code. The module is separate from the library's, so
// that the contenders never enter mitzbloom's go.mod; nothing imports it.
//
// The limits report (cmd/limits, whose code is its own) sets mitzbloom
// beside the machine itself: over memory made as a filter's is, it times a
// chain of dependent random loads and a stream of independent ones, and
// divides mitzbloom's time per key on filters far larger than the caches by
// them. It takes its keys from this package ([Int64Key], [HostPortKey]).
//
// To add a contender, write an adapter that implements [Set] (one peer_*.go
// file) and list it in the suites it takes in suites.go. To add a key type,
// write its key function and a [Suite] for it.
package bench
