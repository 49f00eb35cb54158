package client

import (
	"context"
	"errors"
	"net/http"
)

// The states a member can be in.
const (
	MemberAlive = "alive"
	MemberDead  = "dead"
)

// Member is one node of the cluster as GET /v1/cluster/members shows it.
type Member struct {
	ID       string `json:"id"`
	RaftAddr string `json:"raft_addr"`
	RPCAddr  string `json:"rpc_addr"`
	HTTPAddr string `json:"http_addr"`
	State    string `json:"state"` // MemberAlive or MemberDead
	// Draining is true while the member is being decommissioned.
	Draining bool `json:"draining"`
	Voter    bool `json:"voter"`  // a Raft voter
	Leader   bool `json:"leader"` // the Raft leader
	// Partitions is how many partitions the member owns.
	Partitions int `json:"partitions"`
	// LastHeartbeatMs is when the member was last heard from, in Unix
	// milliseconds; 0 if never.
	LastHeartbeatMs int64 `json:"last_heartbeat_ms"`
	// DecommissionBlocked lists, on a draining member, the partitions no
	// move can take off it, so its decommission cannot complete; empty
	// when nothing blocks it.
	DecommissionBlocked []BlockedPartition `json:"decommission_blocked,omitempty"`
}

// BlockedPartition is a partition that keeps a decommission from
// completing, and why.
type BlockedPartition struct {
	Topic     string `json:"topic"`
	Partition int    `json:"partition"`
	Why       string `json:"why"`
}

// Move is one partition moving its ownership From one member To another.
type Move struct {
	Topic     string `json:"topic"`
	Partition int    `json:"partition"`
	From      string `json:"from"`
	To        string `json:"to"`
}

var errEmptyMember = errors.New("member id must not be empty")

// decommissionPath escapes id so a malformed one reaches the server as one
// segment and is refused by its validation, not by routing.
func decommissionPath(id string) string {
	return namedPath("/v1/cluster/members/", id, []string{"decommission"})
}

// Members returns every member of the cluster: GET /v1/cluster/members.
func (c *Client) Members(ctx context.Context) ([]Member, error) {
	var out struct {
		Members []Member `json:"members"`
	}
	if _, err := c.doJSON(ctx, http.MethodGet, "/v1/cluster/members", nil, nil, &out); err != nil {
		return nil, err
	}
	return out.Members, nil
}

// Moves returns the partition moves in flight: GET /v1/cluster/moves.
func (c *Client) Moves(ctx context.Context) ([]Move, error) {
	var out struct {
		Moves []Move `json:"moves"`
	}
	if _, err := c.doJSON(ctx, http.MethodGet, "/v1/cluster/moves", nil, nil, &out); err != nil {
		return nil, err
	}
	return out.Moves, nil
}

// Decommission starts draining a member: POST
// /v1/cluster/members/{id}/decommission, 200 with the member.
func (c *Client) Decommission(ctx context.Context, id string) (Member, error) {
	return c.setDecommission(ctx, http.MethodPost, id)
}

// CancelDecommission stops draining a member that is still one: DELETE
// /v1/cluster/members/{id}/decommission, 200 with the member.
func (c *Client) CancelDecommission(ctx context.Context, id string) (Member, error) {
	return c.setDecommission(ctx, http.MethodDelete, id)
}

func (c *Client) setDecommission(ctx context.Context, method, id string) (Member, error) {
	if id == "" {
		return Member{}, errEmptyMember
	}
	var m Member
	_, err := c.doJSON(ctx, method, decommissionPath(id), nil, nil, &m)
	return m, err
}
