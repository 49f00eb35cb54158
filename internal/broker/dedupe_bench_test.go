package broker

import (
	"fmt"
	"testing"
)

// BenchmarkCommitDedupe is the owner's commit of one-record batches, each
// with a new msg_id, with the topic's dedupe window off and on: the cost
// the window adds to the commit path (the fsync dominates both).
func BenchmarkCommitDedupe(b *testing.B) {
	for _, window := range []int64{0, 60_000} {
		b.Run(fmt.Sprintf("window=%d", window), func(b *testing.B) {
			br := newTestBroker(b, Config{})
			w := window
			if _, err := br.CreateTopic(testCtx(b), CreateTopicRequest{Name: "t", Partitions: 1, DedupeWindowMs: &w}, ""); err != nil {
				b.Fatal(err)
			}
			ctx := testCtx(b)
			b.ReportAllocs()
			b.ResetTimer()
			for i := range b.N {
				recs := idRecs(fmt.Sprintf("id-%d", i))
				if err := commitLocal(br, ctx, "t", 0, recs); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
