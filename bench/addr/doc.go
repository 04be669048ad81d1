// Package addr measures the question a proxy asks of every connection, "is
// this the first time I see this address within the window?", on
// [netip.AddrPort] keys, answered four ways: by a [bloom.Rotating], which
// forgets after one to two windows in constant memory; by a single
// [bloom.Filter], which never forgets; by a map[netip.AddrPort]time.Time
// swept of old entries now and then; and by a [sync.Map] swept the same way.
//
// The keys are [Distinct] addresses, a pure function of their index ([Key]),
// and the stream draws them with a Zipf distribution ([ZipfKeys]), so that
// a few addresses come back all the time and most rarely, as clients and
// destinations do. Everything is deterministic: the same seed gives the same
// keys and the same stream.
//
// Time in a [Stream] is logical: each key recorded is [OpTime] after the one
// before, and the recorders learn the time every [TickEvery] keys, as a
// proxy would keep a coarse clock instead of calling time.Now per
// connection. So the benchmarks time the data structures, not the clock, and
// a window is a number of keys on every machine.
//
// The benchmarks (benchmark_test.go) run a [Recorder] of each kind on the
// stream, from one goroutine and from all Ps, and compare Rotating's Put and
// MightContain with a Filter's on the same keys. Nothing imports this
// package; its exported names document the workload.
package addr
