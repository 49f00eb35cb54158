// Package cluster is membership and the controller: joining (a node not
// among the initial members walks its peers every 2 s until the leader
// admits it), heartbeats (every 5 s, to the leader), dead marking by the
// controller (no heartbeat for 30 s, counted from the later of the last
// heartbeat and this leader's first tick), and partition assignment — one
// function, Assign, decides placement for every path (Placement is the
// broker's): round robin over live members, anti-affinity for a child
// created with its parent, and deferral (never a guess) while the parent
// partition is unplaced. Directory reads where members are and whether
// they live; Rerouter is produce dispatch's reroute policy over it.
//
// Every rule of time reads the Node's clock.Clock, so tests step a fake
// one. Node RPC is reached only through the package's own Transport.
//
// Invariant: assignments are sticky. A dead node's partitions are never
// reassigned here (its disk holds the only copy); they wait for it.
package cluster
