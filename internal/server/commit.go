package server

import (
	"context"

	"github.com/narad-io/narad/internal/broker"
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

// localCommitter is the local side of the commit seam (route.Router's
// Local): the broker's commit for records from elsewhere (fan-out copies,
// reroutes; the replay gate applies) and its sourced commit for records of
// this node's ingress WAL (route.SourcedCommitter: skipped by WAL seq where
// the log holds them, lazy when the dispatcher asks).
type localCommitter struct{ b *broker.Broker }

func (c localCommitter) Commit(ctx context.Context, topic string, incarnation uint64, p int, recs []storage.Record) error {
	return c.b.CommitIncarnation(ctx, topic, incarnation, p, recs)
}

func (c localCommitter) CommitSourced(ctx context.Context, topic string, incarnation uint64, p int, recs []storage.Record, src storage.Source) (storage.Flusher, error) {
	return c.b.CommitSourced(ctx, topic, incarnation, p, recs, src)
}
