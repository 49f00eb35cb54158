package server

import (
	"context"
	"time"

	"github.com/narad-io/narad/internal/httpapi"

	"github.com/narad-io/narad/internal/meta"
	"github.com/narad-io/narad/internal/rpc"
)

// httpCluster is httpapi.Cluster: routing a request to the leader or a
// partition's owner, and read-your-writes on this replica.
type httpCluster struct {
	self  string
	ms    *meta.Store
	peers peers
}

func (c httpCluster) Self() string   { return c.self }
func (c httpCluster) IsLeader() bool { return c.ms.IsLeader() }

func (c httpCluster) Owner(topic string, p int) string {
	o, _ := c.ms.Owner(topic, p)
	return o
}

func (c httpCluster) Forward(ctx context.Context, node string, req httpapi.ForwardRequest) (httpapi.ForwardResponse, error) {
	addr, err := c.peers.addr(node)
	if err != nil {
		return httpapi.ForwardResponse{}, err
	}
	res, err := c.peers.pool.Forward(ctx, addr, rpc.ForwardRequest(req))
	return httpapi.ForwardResponse(res), err
}

func (c httpCluster) Wait(ctx context.Context, node, topic string, wait time.Duration) (bool, error) {
	addr, err := c.peers.addr(node)
	if err != nil {
		return false, err
	}
	return c.peers.pool.Wait(ctx, addr, topic, wait)
}

func (c httpCluster) MetaVersion() uint64 { return c.ms.LatestDomainVersion() }

func (c httpCluster) WaitMetaVersion(ctx context.Context, after uint64, within time.Duration) {
	c.ms.WaitVersionWithin(ctx, after+1, within)
}

func (c httpCluster) CatchUpTopic(ctx context.Context, topic string) {
	c.ms.CatchUpUnlessKnown(ctx, topic)
}
