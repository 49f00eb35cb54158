package broker

import (
	"context"
	"testing"
)

// benchConsumeAck drives the broker's consume and ack the way the HTTP
// handlers do (a consume without a partition, then an ack of every handle)
// over a real single node: lease reserve, log read, settle. Records of
// 256 bytes, as narad bench sends, are committed ahead in rounds the timer
// does not count.
func benchConsumeAck(b *testing.B, max int) {
	br := newTestBroker(b, Config{})
	createTestTopic(b, br, "bench", 3)
	ctx := testCtx(b)
	refill := func() {
		b.StopTimer()
		for p := range 3 {
			commitSized(b, br, "bench", p, 2000, 256)
		}
		b.StartTimer()
	}
	b.ReportAllocs()
	n := 0
	for b.Loop() {
		msgs, err := br.Consume(ctx, ConsumeRequest{Topic: "bench", Max: max})
		if err != nil {
			b.Fatal(err)
		}
		if len(msgs) == 0 {
			refill()
			continue
		}
		n += len(msgs)
		if max == 1 {
			if err := br.Ack(ctx, "bench", msgs[0].ReceiptHandle, Settle); err != nil {
				b.Fatal(err)
			}
			continue
		}
		if err := ackAll(ctx, br, "bench", msgs); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(n)/float64(b.N), "records/op")
}

// BenchmarkConsumeAck is one consume of one record and its ack.
func BenchmarkConsumeAck(b *testing.B) { benchConsumeAck(b, 1) }

// BenchmarkConsumeAckBatch is one consume of max=100 and one batch ack.
func BenchmarkConsumeAckBatch(b *testing.B) { benchConsumeAck(b, 100) }

// ackAll settles msgs with one batch ack, as the HTTP handler does, and
// returns the first error.
func ackAll(ctx context.Context, br *Broker, topic string, msgs []Message) error {
	handles := make([]string, len(msgs))
	for i, m := range msgs {
		handles[i] = m.ReceiptHandle
	}
	errs, err := br.AckBatch(ctx, topic, handles)
	if err != nil {
		return err
	}
	for _, e := range errs {
		if e != nil {
			return e
		}
	}
	return nil
}
