package meta

import "github.com/hashicorp/raft"

// AppendEntriesPipeline refuses pipelining, so Raft replicates to each
// follower one AppendEntries at a time (hashicorp/raft falls back to that
// on ErrPipelineReplicationNotSupported).
//
// hashicorp/raft's pipeline can stall a follower for good: when reading an
// answer fails (a read deadline during a network stall), its decoder
// stops consuming answers while the sender is blocked handing the next
// request to the pipeline's full in-flight queue, which only the
// pipeline's close, after the sender returns, would free. Heartbeats go
// on by their own path, so the follower keeps the leader and never
// receives another entry: after a 15 s cut a node's metastore replica
// stayed behind until the leader changed, and its partition copies out
// of every in-sync set (docs/cluster.md, "Slow networks").
// The metastore's writes are few and small, so one request in flight per
// follower costs it nothing that matters.
func (t *abstainTransport) AppendEntriesPipeline(raft.ServerID, raft.ServerAddress) (raft.AppendPipeline, error) {
	return nil, raft.ErrPipelineReplicationNotSupported
}
