// Package move moves partitions between nodes (docs/architecture.md,
// "Moves"). A partition's data lives on one node, so moving it means copying
// it: the destination (the assignment's target) runs a session (Worker) that
// catches up while produce flows, freezes the source, copies the now-fixed
// tail with the consumer frontier and fan-out cursor files, reopens the
// staged copy and verifies it recovers to the source's high watermark,
// installs it by rename, and flips ownership with a Raft compare-and-swap.
// The source's side (Source) freezes, lists and serves its files over node
// RPC; the freezes themselves (Freezes) are the broker's commit-admission
// hook, the one thing of a move the broker knows. A node sheds its copies of
// partitions it no longer owns, and of replicas it no longer is. What a move
// does to a directory (listing, staging, verify, install, remove) is package
// storage's; the planner that sets targets is the controller's (package
// cluster).
//
// Invariants: ownership changes only by the flip, and the flip happens
// only after a verified copy is installed at the destination; a failed
// flip removes that copy and the source stays authoritative; a node deletes
// its copy of a partition only when the leader confirms another node owns
// it and no move targets this node — and, for a partition whose placement
// lists replicas, that this node is not among them, with no replication
// role running for it here (a follower's log is the next leader's). A frozen partition takes no commit; a
// freeze is written down before it holds, lifts only by the session that
// set it last (with the leader confirming the source still owns the
// partition) or past its TTL with that same confirmation, and never after
// a flip. A crash anywhere leaves either the source serving (the freeze
// lifts on its TTL or a restart) or, after the flip, the destination
// serving its verified copy: duplicates at most (unacked leases and
// fan-out batches repeat), never loss.
//
// Time is the worker's Clock (clock.Real in production): freeze TTLs,
// passes every second, a failed partition's 2 s wait, renewals every third
// of the TTL, the shed sweep every 10 s and the flip's confirmation
// retries all step with a clock.Fake in tests.
package move
