package server

import (
	"context"
	"errors"
	"sync/atomic"
	"time"

	"github.com/narad-io/narad/internal/broker"
	"github.com/narad-io/narad/internal/cluster"
	"github.com/narad-io/narad/internal/meta"
	"github.com/narad-io/narad/internal/reserve"
	"github.com/narad-io/narad/internal/wal"
)

// readiness is /readyz (docs/http-api.md): not ready, with the reason, until
// a leader is known, the replica is caught up and the startup reconcile
// is done — in a cluster also until this node is admitted and recorded,
// the leader's address is known and, if it leads a replicated partition,
// a heartbeat of it was answered — and not ready again while the ingress
// log is fenced or the data disk is full.
type readiness struct {
	ms          *meta.Store
	node        *cluster.Node // nil on a single node
	w           *wal.WAL
	disk        *reserve.Reserve
	startupDone atomic.Bool
}

func (r *readiness) check() (bool, string) {
	leader, _ := r.ms.Leader()
	clustered := r.node != nil
	switch {
	case leader == "":
		return false, "no Raft leader known"
	case !r.ms.AppliedCaughtUp():
		return false, "metastore replica not caught up"
	case !r.startupDone.Load():
		return false, "startup reconcile not done"
	case clustered && !r.ms.Admitted():
		return false, "not admitted to the cluster yet"
	case clustered && (cluster.Directory{Meta: r.ms}).LeaderRPC() == "":
		return false, "the leader's node-RPC address is not known yet"
	case clustered && !r.node.Recorded():
		return false, "this node's member record is not in the metastore yet"
	case clustered && !r.node.Answered() && r.leadsReplicated():
		// A node whose first heartbeat is not answered yet is fenced and
		// refuses every write to the replicated partitions it leads:
		// after a whole cluster restarted, each node answered 200 here
		// and then 503 to those writes for about two seconds. Only a
		// node that leads such a partition waits (a joining node leads
		// none, and its first heartbeat is answered only once the
		// leader has recorded it), and only the first answer counts: a
		// node that later loses its lease stays ready (it still routes
		// to the others, and its partitions fail over).
		return false, "it leads replicated partitions, and no heartbeat of it was answered by the metastore leader yet: until one is, it refuses their writes"
	case errors.Is(r.w.Health(), wal.ErrFenced):
		return false, "the ingress log is fenced after a disk error (produce refused; see the node's log)"
	case r.disk.Full():
		return false, "the data disk is full: produce and topic create are refused until space is freed; topic delete works"
	}
	return true, ""
}

func (r *readiness) ok() bool { ok, _ := r.check(); return ok }

// leadsReplicated reports whether this node's metastore replica names it
// the leader of a partition of a topic with more than one copy.
func (r *readiness) leadsReplicated() bool {
	for _, t := range r.ms.Topics() {
		if t.ReplicationFactor < 2 {
			continue
		}
		for _, a := range r.ms.Assignments(t.Name) {
			if a.Owner == r.node.Self.ID {
				return true
			}
		}
	}
	return false
}

// startupWait bounds the startup reconcile's wait for a leader.
const startupWait = 60 * time.Second

// reconcileAtStartup is the boot order's last step (docs/architecture.md,
// "Start and shutdown"): wait (at most startupWait) for a leader, sweep topic
// directories that belong to no topic (each deletion leader-confirmed) — on
// timeout the sweep is skipped, never rushed — then open the create gate.
func reconcileAtStartup(ctx context.Context, ms *meta.Store, b *broker.Broker, adopt bool) {
	ctx, cancel := context.WithTimeout(ctx, startupWait)
	defer cancel()
	if err := ms.WaitLeader(ctx); err == nil {
		b.ReconcileStartup(ctx, adopt)
	}
	b.OpenCreateGate()
}
