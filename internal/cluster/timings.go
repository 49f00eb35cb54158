package cluster

import (
	"fmt"
	"time"
)

// Timings are a node's lease and the controller's failover delay: the
// constants of node.go on a LAN, longer ones where round trips are slow
// (cluster.network, chosen in package server). Every node of a cluster
// must run the same: a controller waits its own FailoverAfter for a
// leader that fences itself after that leader's FenceAfter.
type Timings struct {
	// HeartbeatEvery, FenceAfter and FailoverAfter mean what the
	// constants of the same names mean.
	HeartbeatEvery, FenceAfter, FailoverAfter time.Duration
}

// LANTimings are the constants: a partition leader that dies is replaced
// within about 3 s.
var LANTimings = Timings{HeartbeatEvery: HeartbeatEvery, FenceAfter: FenceAfter, FailoverAfter: FailoverAfter}

// Check holds t to the rules the constants keep at compile time (and
// doc.go states): FenceAfter < FailoverAfter, so a leader cut off has
// stopped serving before another is elected in its place; and three
// heartbeats are sent within a lease, so one lost heartbeat alone never
// fences a node.
func (t Timings) Check() error {
	if t.HeartbeatEvery <= 0 || t.FenceAfter <= 0 || t.FailoverAfter <= 0 {
		return fmt.Errorf("cluster timings must be positive: %+v", t)
	}
	if t.FenceAfter >= t.FailoverAfter {
		return fmt.Errorf("cluster timings: FenceAfter %v must be below FailoverAfter %v", t.FenceAfter, t.FailoverAfter)
	}
	if 3*t.HeartbeatEvery > t.FenceAfter {
		return fmt.Errorf("cluster timings: FenceAfter %v must hold three heartbeats %v apart", t.FenceAfter, t.HeartbeatEvery)
	}
	return nil
}

// timings are n.Timings, LANTimings when unset.
func (n *Node) timings() Timings {
	if n.Timings == (Timings{}) {
		return LANTimings
	}
	return n.Timings
}
