package broker

import (
	"math/rand/v2"
	"runtime"
	"testing"
	"time"

	"github.com/narad-io/narad/internal/header"
	"github.com/narad-io/narad/internal/storage"
)

// BenchmarkScheduleFiling measures what scheduled records cost a queue:
// 100,000 records of 256 bytes, each due at a random time in the next
// hour, are committed ahead (untimed), then consumes file them all in
// the schedule (nothing is due, so nothing is delivered). It reports the
// records filed per second and the heap they left behind: the schedule
// keeps only the next minute's entries in memory. Compare the rate with
// BenchmarkConsumeAckBatch, which reads, delivers and acks records of
// the same size.
func BenchmarkScheduleFiling(b *testing.B) {
	const n = 100_000
	for b.Loop() {
		b.StopTimer()
		br := newTestBroker(b, Config{FrontierPersist: time.Hour})
		createTestTopic(b, br, "later", 1)
		now := time.Now()
		rng := rand.New(rand.NewPCG(1, 2))
		payload := make([]byte, 256)
		for done := 0; done < n; done += 1000 {
			recs := make([]storage.Record, 1000)
			for i := range recs {
				due := now.Add(time.Minute + time.Duration(rng.Int64N(int64(time.Hour)))).UnixMilli()
				recs[i] = storage.Record{Payload: payload, Headers: header.WithDeliverAt(nil, due)}
			}
			if err := commitLocal(br, testCtx(b), "later", 0, recs); err != nil {
				b.Fatal(err)
			}
		}
		runtime.GC()
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		b.StartTimer()
		start := time.Now()
		for {
			msgs, err := br.Consume(testCtx(b), ConsumeRequest{Topic: "later", Max: 1000})
			if err != nil {
				b.Fatal(err)
			}
			if len(msgs) > 0 {
				b.Fatalf("%d records delivered an hour early", len(msgs))
			}
			if br.parts.PeekQueue("later", 0).Table.Frontier() >= n {
				break
			}
		}
		br.upkeep.persistFrontiers() // the schedule's sync belongs to the cost
		elapsed := time.Since(start)
		b.StopTimer()
		runtime.GC()
		runtime.ReadMemStats(&after)
		b.ReportMetric(float64(n)/elapsed.Seconds(), "filed/s")
		b.ReportMetric(float64(int64(after.HeapInuse)-int64(before.HeapInuse))/(1<<20), "heap-MiB")
		if s := br.parts.PeekQueue("later", 0).Scheduled(); s != n {
			b.Fatalf("%d scheduled, want %d", s, n)
		}
		b.StartTimer()
	}
}
