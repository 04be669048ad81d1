#!lua flags=no-writes
-- master.lua does nothing: it is sent as EVAL, which is not a read-only
-- command, before the commands of a read that send.go sends through
-- go-redis's routing. go-redis sends each command of a pipeline of
-- read-only commands to a node it picks for that command, a replica if the
-- client reads from replicas, and a pipeline with any other command to the
-- masters: so a read's checks and its bits come from the same node, or
-- from the masters, which hold each key whole even while a slot moves.
--
-- KEYS[1]  a key of the read's shard, for go-redis to route it by
return 1
