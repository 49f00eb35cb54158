package broker

import (
	"context"
	"time"

	"github.com/narad-io/narad/internal/meta"
	"github.com/narad-io/narad/internal/refusal"
	"github.com/narad-io/narad/internal/replica"
)

// The replicated partitions' roles are package hosted's (hosted.Roles);
// these are the broker's entry points to them that other packages call.

// Fetch serves a follower's fetch of a partition this node leads (node
// RPC). Refusals are typed: not the leader here, not ready, stale epoch
// (the engine's).
func (b *Broker) Fetch(ctx context.Context, req replica.FetchRequest) (replica.FetchResponse, error) {
	return b.roles.Fetch(ctx, req)
}

// WithoutReplica runs remove while no replication role for topic/p runs
// here and none can start (hosted.Roles.WithoutReplica).
func (b *Broker) WithoutReplica(topic string, p int, remove func() error) error {
	return b.roles.WithoutReplica(topic, p, remove)
}

// servedHere is the serving check of consume, ack and purge: this node
// owns the partition and, when it is replicated, may serve it now.
func (b *Broker) servedHere(t meta.Topic, p int) error {
	if !b.owned(t.Name, p) {
		return refusal.New(refusal.ErrNotOwner, time.Second, "partition %d of %q is not served by this node", p, t.Name)
	}
	return b.roles.Gate(t, p)
}
