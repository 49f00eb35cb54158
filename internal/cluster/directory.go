package cluster

import "github.com/narad-io/narad/internal/meta"

// Directory says where members are and whether they live, from this
// replica's member records: the leader writes them (heartbeats, dead
// marking), every node reads them. A node with no record yet has no
// known address.
type Directory struct{ Meta *meta.Store }

// LeaderRPC is the leader's node-RPC address from its member record; ""
// when no leader is known or it has no record yet.
func (d Directory) LeaderRPC() string {
	id, _ := d.Meta.Leader()
	if id == "" {
		return ""
	}
	if m, ok := d.Meta.Member(id); ok {
		return m.RPCAddr
	}
	return ""
}

// RPCAddrOf is a member's node-RPC address.
func (d Directory) RPCAddrOf(id string) (string, bool) {
	m, ok := d.Meta.Member(id)
	if !ok || m.RPCAddr == "" {
		return "", false
	}
	return m.RPCAddr, true
}

// Alive reports whether a member is alive in this replica's view: it has
// a record, and the controller has not marked it dead.
func (d Directory) Alive(id string) bool {
	m, ok := d.Meta.Member(id)
	return ok && m.State != meta.MemberDead
}
