package broker

import (
	"context"
	"testing"

	"github.com/narad-io/narad/internal/storage"
	"github.com/narad-io/narad/internal/wal"
)

// BenchmarkCommitReplicated is the producing node's share of a
// single-record produce to a replicated topic whose leader is elsewhere:
// the records' buckets, the forward (coalesced per partition,
// forward_batch.go) and the answer, with a leader that accepts at once.
func BenchmarkCommitReplicated(b *testing.B) {
	remote := committerFunc(func(ctx context.Context, topic string, inc uint64, p int, recs []storage.Record) error {
		for i := range recs {
			recs[i].Offset = uint64(i)
		}
		return nil
	})
	br, top := remoteLed(b, remote)
	payload := make([]byte, 256)
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			wrecs := []wal.Record{{Topic: "r", Partition: 1, Payload: payload}}
			if _, err := br.commitReplicated(context.Background(), top, wrecs, []bool{true}); err != nil {
				b.Error(err)
				return
			}
		}
	})
}
