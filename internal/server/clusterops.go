package server

import (
	"context"
	"errors"
	"sort"
	"time"

	"github.com/narad-io/narad/internal/apierr"
	"github.com/narad-io/narad/internal/cluster"
	"github.com/narad-io/narad/internal/httpapi"
	"github.com/narad-io/narad/internal/meta"
	"github.com/narad-io/narad/internal/move"
)

// clusterOps answers the /v1/cluster routes from the local replica; on a
// single node (no member records) it shows this node alone.
type clusterOps struct {
	self string
	ms   *meta.Store
	mapE func(error) error
}

func (c *clusterOps) Members() []httpapi.MemberView {
	voters := map[string]bool{}
	if servers, err := c.ms.Servers(); err == nil {
		for _, s := range servers {
			voters[s.ID] = true
		}
	}
	leader, _ := c.ms.Leader()
	owned := map[string]int{}
	for _, t := range c.ms.Topics() {
		for _, a := range c.ms.Assignments(t.Name) {
			owned[a.Owner]++
		}
	}
	members := c.ms.Members()
	if len(members) == 0 {
		members = []meta.Member{{ID: c.self, State: meta.MemberAlive}}
	}
	blocked := cluster.DecommissionBlocked(c.ms)
	out := make([]httpapi.MemberView, 0, len(members))
	for _, m := range members {
		v := httpapi.MemberView{ID: m.ID, RaftAddr: m.RaftAddr, RPCAddr: m.RPCAddr, HTTPAddr: m.HTTPAddr,
			State: cluster.ShownState(m, c.self, time.Now()), Draining: m.Draining, Voter: voters[m.ID], Leader: leader == m.ID,
			Partitions: owned[m.ID], LastHeartbeatMs: m.LastHeartbeatMs}
		for _, b := range blocked[m.ID] {
			v.DecommissionBlocked = append(v.DecommissionBlocked, httpapi.BlockedView{Topic: b.Topic, Partition: b.Partition, Why: b.Why})
		}
		out = append(out, v)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ID < out[j].ID })
	return out
}

func (c *clusterOps) Moves() []httpapi.MoveView {
	out := []httpapi.MoveView{}
	for _, a := range move.InFlight(c.ms) {
		out = append(out, httpapi.MoveView{Topic: a.Topic, Partition: a.Partition, From: a.Owner, To: a.Target})
	}
	return out
}

func (c *clusterOps) SetDraining(ctx context.Context, id string, draining bool) (httpapi.MemberView, error) {
	if _, ok := c.ms.Member(id); !ok {
		if id == c.self && len(c.ms.Members()) == 0 {
			// Members shows a single node as the one member; saying here
			// that it does not exist would contradict it.
			return httpapi.MemberView{}, apierr.Conflict("member %q is the only node: decommissioning moves a node's partitions to the others, "+
				"and a single node has none to move them to (stop it instead, or add nodes first)", id)
		}
		return httpapi.MemberView{}, apierr.NotFound("member %q does not exist", id)
	}
	if err := c.ms.SetDraining(ctx, id, draining); err != nil {
		if errors.Is(err, meta.ErrNotFound) {
			return httpapi.MemberView{}, apierr.NotFound("member %q does not exist", id)
		}
		return httpapi.MemberView{}, c.mapE(err)
	}
	for _, m := range c.Members() {
		if m.ID == id {
			return m, nil
		}
	}
	return httpapi.MemberView{}, apierr.NotFound("member %q does not exist", id)
}
