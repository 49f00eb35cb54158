package broker

import (
	"bytes"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/narad-io/narad/internal/storage"
)

// benchGroups is consume (max=10) and batch ack of b.N records by 16
// concurrent consumers, over 3 partitions of records with 10,000 keys
// (round robin, each key in one partition), on a topic of the given
// ordering. The records are committed before the timer starts. One op is
// one record consumed and acked.
func benchGroups(b *testing.B, ordering string) {
	const keys, consumers, partitions = 10_000, 16, 3
	br := newTestBroker(b, Config{})
	req := CreateTopicRequest{Name: "bench", Partitions: partitions, Ordering: &ordering}
	if _, err := br.CreateTopic(testCtx(b), req, ""); err != nil {
		b.Fatal(err)
	}
	ctx := testCtx(b)
	payload := bytes.Repeat([]byte{'x'}, 256)
	var batch [partitions][]storage.Record
	flush := func(p int) {
		if err := commitLocal(br, ctx, "bench", p, batch[p]); err != nil {
			b.Fatal(err)
		}
		batch[p] = batch[p][:0]
	}
	for i := range b.N {
		k := i % keys
		p := k % partitions
		batch[p] = append(batch[p], storage.Record{Key: fmt.Appendf(nil, "k%d", k), Payload: payload})
		if len(batch[p]) == 1000 {
			flush(p)
		}
	}
	for p := range partitions {
		if len(batch[p]) > 0 {
			flush(p)
		}
	}
	b.ReportAllocs()
	b.ResetTimer()
	var acked atomic.Int64
	var wg sync.WaitGroup
	for range consumers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for acked.Load() < int64(b.N) {
				msgs, err := br.Consume(ctx, ConsumeRequest{Topic: "bench", Max: 10})
				if err != nil {
					b.Error(err)
					return
				}
				if len(msgs) == 0 {
					continue
				}
				if err := ackAll(ctx, br, "bench", msgs); err != nil {
					b.Error(err)
					return
				}
				acked.Add(int64(len(msgs)))
			}
		}()
	}
	wg.Wait()
}

// BenchmarkConsumeAckGroups: ordering "group" (docs/concepts.md, "Message
// groups"); compare with BenchmarkConsumeAckNoGroups.
func BenchmarkConsumeAckGroups(b *testing.B) { benchGroups(b, "group") }

// BenchmarkConsumeAckNoGroups: the same keyed records, ordering "none".
func BenchmarkConsumeAckNoGroups(b *testing.B) { benchGroups(b, "none") }
