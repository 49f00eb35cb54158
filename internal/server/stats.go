package server

import (
	"context"

	"github.com/narad-io/narad/internal/broker"
	"github.com/narad-io/narad/internal/rpc"
	"github.com/narad-io/narad/internal/storage"
)

// remoteStats is the broker's RemoteStats: a Stats RPC to the partitions'
// owner, its answer in the broker's types.
type remoteStats struct{ peers peers }

func (s remoteStats) Stats(ctx context.Context, owner, topic string, parts []int, exact bool) ([]broker.PartitionReport, error) {
	addr, err := s.peers.addr(owner)
	if err != nil {
		return nil, err
	}
	res, err := s.peers.pool.Stats(ctx, addr, topic, parts, exact)
	if err != nil {
		return nil, err
	}
	out := make([]broker.PartitionReport, len(res))
	for i, r := range res {
		out[i] = broker.PartitionReport{Partition: r.Partition, Available: r.Available, Frontier: r.ConsumerFrontier,
			InFlight: r.InFlight, OldestUnconsumedAt: r.OldestUnconsumedAt, CommitStall: r.CommitStall,
			Stats: storage.Stats{Segments: r.Segments, OldestOffset: r.OldestOffset, HighWatermark: r.HighWatermark,
				SizeBytes: r.SizeBytes, OldestSegmentAt: r.OldestSegmentAt, Exact: r.Exact}}
		for _, cp := range r.Cursors {
			out[i].Cursors = append(out[i].Cursors, broker.CursorPosition(cp)) // same fields, as rpchandler's
		}
	}
	return out, nil
}

// statsOf is the other direction, for this node's Stats RPC: its reports
// and its fan-out cursors, in node RPC's types.
func statsOf(reps []broker.PartitionReport, cursors func(p int) []rpc.CursorPosition) []rpc.PartitionStats {
	out := make([]rpc.PartitionStats, len(reps))
	for i, r := range reps {
		out[i] = rpc.PartitionStats{Partition: r.Partition, Available: r.Available, Segments: r.Stats.Segments,
			OldestOffset: r.Stats.OldestOffset, HighWatermark: r.Stats.HighWatermark, SizeBytes: r.Stats.SizeBytes,
			OldestSegmentAt: r.Stats.OldestSegmentAt, ConsumerFrontier: r.Frontier, Exact: r.Stats.Exact,
			InFlight: r.InFlight, OldestUnconsumedAt: r.OldestUnconsumedAt, CommitStall: r.CommitStall}
		if r.Available {
			out[i].Cursors = cursors(r.Partition)
		}
	}
	return out
}
