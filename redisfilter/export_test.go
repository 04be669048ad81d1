package redisfilter

import "context"

// ScriptText returns lua/name.lua as the package sends it, for the tests
// that run the scripts directly.
func ScriptText(name string) string { return allScripts[name].text }

// WrapScriptError returns the error that a call of a filter returns for
// err, an error reply of a script, so that tests see what it wraps.
func WrapScriptError(err error) error { return testCore().wrap(context.Background(), "test", err) }

// RecordedSlots returns testdata/keyslots.txt, for the test that checks it
// against a server.
var RecordedSlots = recordedSlots

// ForgetHistory makes h take the server of shard s for one of another
// replication history at its next Sync, as after a failover.
func ForgetHistory[T any](h *Hybrid[T], s int) { h.cursors[s].replid = "another" }
