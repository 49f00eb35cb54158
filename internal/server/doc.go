// Package server wires one Narad node together and owns its lifecycle: the
// boot order of docs/architecture.md (metastore, then storage and broker with
// the create gate closed, then the node RPC listener, then the startup
// reconcile, then the gate opens and /readyz may flip) and graceful shutdown
// (drain HTTP within the grace period, hand leadership over, stop the run
// group, close logs cleanly so hwm boundaries are written, close the
// metastore).
//
// Nothing else lives here. Every rule belongs to another package; what is
// left are constructors called in order, each component given its
// dependencies when it is built (never installed later), and one small
// adapter per consumer interface a package declares over node RPC
// (peers.go and the files it serves), plus the node RPC handler, which
// only translates types and errors at that edge.
//
// Invariant: every long-lived goroutine a node starts runs in its run
// group (group.go), and the group is stopped — every goroutine returned —
// before any component it uses is closed.
package server
