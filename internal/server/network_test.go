package server

import (
	"testing"

	"github.com/narad-io/narad/internal/cluster"
	"github.com/narad-io/narad/internal/config"
	"github.com/narad-io/narad/internal/meta"
)

// lan keeps today's timings exactly; wan's pass the cluster's checks and
// hashicorp/raft's (a lease no longer than the heartbeat timeout).
func TestNetworkTimings(t *testing.T) {
	if o := withNetwork(meta.Options{}, config.NetworkLAN); o.HeartbeatTimeout != 0 || o.ElectionTimeout != 0 || o.LeaderLeaseTimeout != 0 {
		t.Errorf("lan sets Raft timings %+v; want meta's defaults (zero)", o)
	}
	if got := clusterTimings(config.NetworkLAN); got != cluster.LANTimings {
		t.Errorf("lan cluster timings %+v; want %+v", got, cluster.LANTimings)
	}
	o := withNetwork(meta.Options{}, config.NetworkWAN)
	if o.HeartbeatTimeout == 0 || o.LeaderLeaseTimeout > o.HeartbeatTimeout || o.ElectionTimeout < o.HeartbeatTimeout {
		t.Errorf("wan Raft timings %v/%v/%v: want a lease within the heartbeat timeout, an election timeout no shorter",
			o.HeartbeatTimeout, o.ElectionTimeout, o.LeaderLeaseTimeout)
	}
	wan := clusterTimings(config.NetworkWAN)
	if err := wan.Check(); err != nil {
		t.Error(err)
	}
	if wan.FenceAfter <= cluster.FenceAfter {
		t.Errorf("wan lease %v is no longer than lan's %v", wan.FenceAfter, cluster.FenceAfter)
	}
}
