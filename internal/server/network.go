package server

import (
	"time"

	"github.com/narad-io/narad/internal/cluster"
	"github.com/narad-io/narad/internal/config"
	"github.com/narad-io/narad/internal/meta"
)

// withNetwork sets the metastore's Raft timings for cluster.network. On a
// LAN it keeps meta's own defaults (500 ms / 500 ms / 250 ms), which
// replace a dead metastore leader within about a second. On a WAN they
// are four to eight times those: with one-way delays up to 200 ms a
// round trip takes up to 400 ms, and a lost segment adds a retransmission
// timeout of 400 ms or more, doubling if lost again; the LAN's 250 ms
// lease and 500 ms heartbeat timeout then lapse on ordinary traffic and
// the leader steps down (docs/cluster.md has the measured figures).
func withNetwork(o meta.Options, network string) meta.Options {
	if network == config.NetworkWAN {
		o.HeartbeatTimeout = 2 * time.Second
		o.ElectionTimeout = 2 * time.Second
		o.LeaderLeaseTimeout = 2 * time.Second
	}
	return o
}

// wanTimings are the node lease and failover delay on a WAN. A heartbeat's
// answer takes two round trips (the node to the metastore leader, and the
// leader's quorum confirmation): up to 800 ms there, more with a
// retransmission, so the LAN's 1.5 s lease lapses on ordinary traffic.
// 5 s holds the answers of a heartbeat that met two retransmissions; the
// 2.5 s more before failover cover a metastore election, which on a WAN
// takes 2–4 s (HeartbeatTimeout and its jitter) where the LAN's margin of
// 1 s covers its 0.5–1 s.
var wanTimings = cluster.Timings{HeartbeatEvery: 500 * time.Millisecond, FenceAfter: 5 * time.Second, FailoverAfter: 7500 * time.Millisecond}

// clusterTimings are the node lease and failover timings for
// cluster.network.
func clusterTimings(network string) cluster.Timings {
	if network == config.NetworkWAN {
		return wanTimings
	}
	return cluster.LANTimings
}
