package e2e

import (
	"strings"
	"testing"
	"time"
)

// TestClusterNetworkMismatchIsLogged: one node of three runs on
// cluster.network wan, the others on lan. Whichever leads the metastore
// gets heartbeats from a node on the other value and logs it.
func TestClusterNetworkMismatchIsLogged(t *testing.T) {
	nodes := startClusterWith(t, 3, func(i int, n *node) {
		if i == 2 {
			n.env = append(n.env, "NARAD_CLUSTER_NETWORK=wan")
		}
	})
	leader := nodes[leaderIndex(t, nodes)]
	eventually(t, 10*time.Second, leader.id+" to log the mismatch", func() bool {
		return strings.Contains(leader.logs.String(), "another cluster.network")
	})
}
