package server

import (
	"context"

	"github.com/narad-io/narad/internal/broker"
	"github.com/narad-io/narad/internal/hosted"
	"github.com/narad-io/narad/internal/meta"
	"github.com/narad-io/narad/internal/storage"
)

// remoteCommitter is the remote side of the commit seam (route.Router's
// Remote): a commit RPC to the partition's owner, carrying this replica's
// metastore version so the owner can catch up to what the sender saw
// (broker.Broker.CommitRouted).
type remoteCommitter struct {
	ms    *meta.Store
	peers peers
}

func (c remoteCommitter) Commit(ctx context.Context, topic string, incarnation uint64, p int, recs []storage.Record) error {
	owner, _ := c.ms.Owner(topic, p)
	addr, err := c.peers.addr(owner)
	if err != nil {
		return err
	}
	return c.peers.pool.Commit(ctx, addr, topic, incarnation, p, recs, c.ms.LatestDomainVersion())
}

// moveData is the data plane as a move sees it (move.Partitions): the
// partitions hosted here, and the broker's word that no replica role runs
// for one.
type moveData struct {
	*hosted.Set
	b *broker.Broker
}

func (d moveData) WithoutReplica(topic string, p int, remove func() error) error {
	return d.b.WithoutReplica(topic, p, remove)
}
