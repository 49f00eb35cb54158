// Package move moves partitions between nodes (06-cluster.md, Moves). A
// partition's data lives on one node, so moving it means copying it: the
// destination (the assignment's target) runs a session that catches up
// while produce flows, freezes the source, copies the now-fixed tail with
// the consumer frontier and fan-out cursor files, reopens the staged copy
// and verifies it recovers to the source's high watermark, installs it by
// rename, and flips ownership with a Raft compare-and-swap. The planner
// decides the targets; a node sheds its copies of partitions it no longer
// owns.
//
// Invariants: ownership changes only by the flip, and the flip happens
// only after a verified copy is installed at the destination; a failed
// flip removes that copy and the source stays authoritative; a node deletes
// its copy of a partition only when the leader confirms another node owns
// it and no move targets this node. A crash anywhere leaves either the
// source serving (the freeze lifts on its TTL or a restart) or, after the
// flip, the destination serving its verified copy: duplicates at most
// (unacked leases and fan-out batches repeat), never loss.
package move
