package meta

import (
	"errors"
	"testing"

	"github.com/hashicorp/raft"
)

// The transport Raft replicates through refuses pipelines, so Raft sends
// one AppendEntries at a time (pipeline.go says why).
func TestRaftReplicatesWithoutPipelines(t *testing.T) {
	var tr raft.Transport = &abstainTransport{}
	if p, err := tr.AppendEntriesPipeline("n2", "127.0.0.1:1"); p != nil || !errors.Is(err, raft.ErrPipelineReplicationNotSupported) {
		t.Fatalf("AppendEntriesPipeline = %v, %v; want ErrPipelineReplicationNotSupported", p, err)
	}
}
