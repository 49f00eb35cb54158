package httpapi

import (
	"context"
	"net/http"

	"github.com/narad-io/narad/internal/apierr"
	"github.com/narad-io/narad/internal/auth"
)

// ClusterAdmin is the cluster-operations side of the API (docs/http-api.md,
// "Cluster"): members, moves in flight, decommission.
type ClusterAdmin interface {
	Members() []MemberView
	Moves() []MoveView
	// SetDraining runs on the leader; ErrNotFound-style errors are apierr.
	SetDraining(ctx context.Context, id string, draining bool) (MemberView, error)
}

// MemberView is one member as GET /v1/cluster/members shows it.
type MemberView struct {
	ID              string `json:"id"`
	RaftAddr        string `json:"raft_addr"`
	RPCAddr         string `json:"rpc_addr,omitempty"`
	HTTPAddr        string `json:"http_addr,omitempty"`
	State           string `json:"state"`
	Draining        bool   `json:"draining"`
	Voter           bool   `json:"voter"`
	Leader          bool   `json:"leader"`
	Partitions      int    `json:"partitions"`
	LastHeartbeatMs int64  `json:"last_heartbeat_ms"`
	// DecommissionBlocked: on a draining member, the partitions no move
	// can take off it, so its decommission cannot complete (absent: none).
	DecommissionBlocked []BlockedView `json:"decommission_blocked,omitempty"`
}

// BlockedView is a partition that keeps a decommission from completing.
type BlockedView struct {
	Topic     string `json:"topic"`
	Partition int    `json:"partition"`
	Why       string `json:"why"`
}

// MoveView is one move in flight.
type MoveView struct {
	Topic     string `json:"topic"`
	Partition int    `json:"partition"`
	From      string `json:"from"`
	To        string `json:"to"`
}

// clusterRoutes turns on the /v1/cluster routes (Options.ClusterAdmin).
func (s *Server) clusterRoutes(c ClusterAdmin) {
	s.clusterAdmin = c
	s.handle("GET /v1/cluster/members", s.listMembers)
	s.handle("GET /v1/cluster/moves", s.listMoves)
	s.handle("POST /v1/cluster/members/{id}/decommission", s.decommission)
	s.handle("DELETE /v1/cluster/members/{id}/decommission", s.decommission)
}

// allowRoot checks for cluster operations: admin on every topic.
func allowRoot(r *http.Request) error {
	if p, ok := principalOf(r); ok && !auth.IsRoot(p.Grants) {
		return apierr.Forbidden("cluster operations need admin on every topic (admin:*); user %q does not hold it", p.Name)
	}
	return nil
}

func (s *Server) listMembers(w http.ResponseWriter, r *http.Request, _ string) error {
	if err := onlyParams(r.URL.Query()); err != nil {
		return err
	}
	if err := allowRoot(r); err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, map[string]any{"members": s.clusterAdmin.Members()})
	return nil
}

func (s *Server) listMoves(w http.ResponseWriter, r *http.Request, _ string) error {
	if err := onlyParams(r.URL.Query()); err != nil {
		return err
	}
	if err := allowRoot(r); err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, map[string]any{"moves": s.clusterAdmin.Moves()})
	return nil
}

// decommission marks a member draining (POST) or cancels it (DELETE): the
// member then receives nothing, sheds its partitions through moves, and
// leaves the Raft voters once empty (never below 3).
func (s *Server) decommission(w http.ResponseWriter, r *http.Request, user string) error {
	if err := onlyParams(r.URL.Query()); err != nil {
		return err
	}
	if err := allowRoot(r); err != nil {
		return err
	}
	if done, err := s.toLeader(w, r, user, nil); done {
		return err
	}
	v, err := s.clusterAdmin.SetDraining(r.Context(), r.PathValue("id"), r.Method == http.MethodPost)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, v)
	return nil
}
