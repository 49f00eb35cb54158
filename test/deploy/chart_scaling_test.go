package deploy

import (
	"fmt"
	"strings"
	"testing"
)

// TestChartInitialMembersAcrossScaling: scaling up keeps the install-time
// nodes as the only initial members (the new ones join); scaling down
// below them (after `narad cluster decommission`) renders, with every
// initial member a current peer (a node refuses any other) and the pin
// lowered with the replicas, so that a later scale-up makes the new nodes
// join rather than bootstrap on their own.
func TestChartInitialMembersAcrossScaling(t *testing.T) {
	for _, tc := range []struct {
		replicas, boot, wantInitial int
	}{
		{5, 3, 3}, // scaled up: 3 initial members, 5 peers
		{3, 5, 3}, // scaled down from 5
		{3, 3, 3},
	} {
		args := []string{"--set", fmt.Sprintf("replicas=%d", tc.replicas), "--set", fmt.Sprintf("cluster.bootstrapReplicas=%d", tc.boot)}
		objs := render(t, args...)
		env := envOf(narad(t, objs))
		peers := map[string]bool{}
		for _, p := range strings.Split(env["NARAD_CLUSTER_PEERS"], ",") {
			id, _, _ := strings.Cut(p, "@")
			peers[id] = true
		}
		if len(peers) != tc.replicas {
			t.Errorf("%v: %d peers, want %d", args, len(peers), tc.replicas)
		}
		initial := strings.Split(env["NARAD_CLUSTER_INITIAL_MEMBERS"], ",")
		if len(initial) != tc.wantInitial {
			t.Errorf("%v: initial members %v, want %d", args, initial, tc.wantInitial)
		}
		for _, id := range initial {
			if !peers[id] {
				t.Errorf("%v: initial member %q is not a current peer (%s)", args, id, env["NARAD_CLUSTER_PEERS"])
			}
		}
		pin := at(only(t, objs, "StatefulSet"), "metadata", "annotations", "narad.io/bootstrap-replicas")
		if pin != fmt.Sprint(tc.wantInitial) {
			t.Errorf("%v: pinned bootstrap-replicas = %v, want %d", args, pin, tc.wantInitial)
		}
	}
}
