package replica

import (
	"context"
	"testing"
)

// BenchmarkHandleFetch is the leader's cost per replicated record: two
// followers each fetch every record (an acknowledgement, a committed-point
// computation and a release per fetch), one record per commit.
func BenchmarkHandleFetch(b *testing.B) {
	r := newLeaderRig(b, 0)
	v := r.md.view()
	reqs := []FetchRequest{
		{Topic: v.Topic, Incarnation: v.Incarnation, Epoch: v.Epoch, Follower: "b"},
		{Topic: v.Topic, Incarnation: v.Incarnation, Epoch: v.Epoch, Follower: "c"},
	}
	payload := make([]byte, 100)
	ctx := context.Background()
	b.ReportAllocs()
	b.ResetTimer()
	for i := range b.N {
		off, _ := r.log.commit(payload)
		for j := range reqs {
			reqs[j].Offset = off
			if _, err := r.l.HandleFetch(ctx, reqs[j]); err != nil {
				b.Fatal(err)
			}
		}
		if r.l.Committed() != uint64(i) {
			b.Fatalf("committed %d at record %d", r.l.Committed(), i)
		}
	}
}
