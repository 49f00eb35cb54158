package broker

import (
	"context"
	"testing"
)

// inFlight counts the leases out on every loaded queue of topic.
func inFlight(b *Broker, topic string) int {
	n := 0
	for _, q := range b.parts.Queues() {
		if q.Key.Topic == topic {
			n += q.Table.Stats().InFlight
		}
	}
	return n
}

func payloadBytes(msgs []Message) int {
	n := 0
	for _, m := range msgs {
		n += len(m.Key) + len(m.Payload)
	}
	return n
}

// TestConsumeAnswerIsCappedInBytes: max=1000 over records that together
// pass the answer cap gets at least one record and at most the cap's
// bytes; no record is left leased without being delivered (every lease out
// is one the answers handed over), so consumes back to back, with no wait
// and no ack, deliver every record at once — none waits out a visibility
// timeout. The cap holds across partitions too.
func TestConsumeAnswerIsCappedInBytes(t *testing.T) {
	const capBytes = 64 << 10
	b := newTestBroker(t, Config{MaxConsumeBytes: capBytes})
	createTestTopic(t, b, "big", 3)
	const perPart, size = 40, 10 << 10 // 1.2 MB in all, 6 records per answer
	for p := 0; p < 3; p++ {
		commitSized(t, b, "big", p, perPart, size)
	}
	answers := drainCapped(t, b, "big", 3*perPart, capBytes)
	if min := 3 * perPart * size / capBytes; answers < min {
		t.Fatalf("%d answers for %d bytes under a %d-byte cap; want at least %d", answers, 3*perPart*size, capBytes, min)
	}
}

// TestConsumeCapWithMixedSizes: small records teach a round to reserve
// many, then large ones cut it: the leases the budget cannot hold go back
// at once.
func TestConsumeCapWithMixedSizes(t *testing.T) {
	const capBytes = 64 << 10
	b := newTestBroker(t, Config{MaxConsumeBytes: capBytes})
	createTestTopic(t, b, "mixed", 2)
	for p := 0; p < 2; p++ {
		commitSized(t, b, "mixed", p, 20, 1<<10)
		commitSized(t, b, "mixed", p, 5, 30<<10)
		commitSized(t, b, "mixed", p, 20, 2<<10)
	}
	drainCapped(t, b, "mixed", 2*45, capBytes)
}

// drainCapped consumes topic (max=1000, no wait, no ack) until total
// distinct records were delivered, checking every answer against the cap
// and that every lease out was handed over; it returns how many answers
// it took.
func drainCapped(t *testing.T, b *Broker, topic string, total, capBytes int) int {
	t.Helper()
	seen := map[[2]uint64]bool{}
	answers := 0
	for len(seen) < total {
		msgs, err := b.Consume(testCtx(t), ConsumeRequest{Topic: topic, Max: MaxConsumeBatch})
		if err != nil {
			t.Fatal(err)
		}
		if len(msgs) == 0 {
			t.Fatalf("after %d answers (%d of %d records delivered, %d leases out) a consume found nothing: records are stuck",
				answers, len(seen), total, inFlight(b, topic))
		}
		answers++
		if got := payloadBytes(msgs); got > capBytes && len(msgs) > 1 {
			t.Fatalf("answer %d holds %d records, %d bytes: over the %d-byte cap", answers, len(msgs), got, capBytes)
		}
		for _, m := range msgs {
			k := [2]uint64{uint64(m.Partition), m.Offset}
			if seen[k] {
				t.Fatalf("partition %d offset %d delivered twice while its lease was live", m.Partition, m.Offset)
			}
			seen[k] = true
		}
		if out := inFlight(b, topic); out != len(seen) {
			t.Fatalf("after answer %d: %d leases out, %d records delivered: %d leased but not delivered",
				answers, out, len(seen), out-len(seen))
		}
	}
	return answers
}

// TestConsumeOversizedRecordStillDelivered: a record larger than the whole
// cap is delivered alone (an answer always holds one record), and the one
// after it comes with the next consume, not after a visibility timeout.
func TestConsumeOversizedRecordStillDelivered(t *testing.T) {
	const capBytes = 16 << 10
	b := newTestBroker(t, Config{MaxConsumeBytes: capBytes})
	createTestTopic(t, b, "huge", 1)
	commitSized(t, b, "huge", 0, 3, 40<<10)
	for i := 0; i < 3; i++ {
		msgs, err := b.Consume(testCtx(t), ConsumeRequest{Topic: "huge", Max: 10})
		if err != nil {
			t.Fatal(err)
		}
		if len(msgs) != 1 || msgs[0].Offset != uint64(i) {
			t.Fatalf("consume %d: got %d records (first %v); want exactly offset %d", i, len(msgs), offsets(msgs), i)
		}
		if out := inFlight(b, "huge"); out != i+1 {
			t.Fatalf("consume %d: %d leases out, want %d", i, out, i+1)
		}
	}
}

// TestReplayAnswerIsCappedInBytes: a replay of max=1000 returns the records
// from its offset on, at least one, at most the cap's bytes.
func TestReplayAnswerIsCappedInBytes(t *testing.T) {
	const capBytes = 64 << 10
	b := newTestBroker(t, Config{MaxConsumeBytes: capBytes})
	createTestTopic(t, b, "rp", 1)
	commitSized(t, b, "rp", 0, 30, 10<<10)
	commitSized(t, b, "rp", 0, 1, 100<<10) // offset 30: over the cap alone
	p := 0
	for _, from := range []uint64{0, 7, 30} {
		off := from
		msgs, err := b.Consume(testCtx(t), ConsumeRequest{Topic: "rp", Partition: &p, Offset: &off, Max: MaxConsumeBatch})
		if err != nil {
			t.Fatal(err)
		}
		if len(msgs) == 0 || payloadBytes(msgs) > capBytes && len(msgs) > 1 {
			t.Fatalf("replay from %d: %d records, %d bytes; want 1.. records within %d bytes (or one oversized)", from, len(msgs), payloadBytes(msgs), capBytes)
		}
		for i, m := range msgs {
			if m.Offset != from+uint64(i) {
				t.Fatalf("replay from %d: record %d has offset %d", from, i, m.Offset)
			}
		}
		if from < 30 && len(msgs) != capBytes/(10<<10) {
			t.Fatalf("replay from %d: %d records of 10 KiB under a 64 KiB cap; want %d", from, len(msgs), capBytes/(10<<10))
		}
	}
	if out := inFlight(b, "rp"); out != 0 {
		t.Fatalf("replay leased %d records", out)
	}
}

func offsets(msgs []Message) []uint64 {
	out := make([]uint64, len(msgs))
	for i, m := range msgs {
		out[i] = m.Offset
	}
	return out
}

// TestConsumeForAGoneCallerLeasesNothing: a consume whose caller has
// already gone — a forwarded one that a frozen owner serves only after
// the forwarding node gave up — leases nothing, so the records are there
// for the next consume instead of waiting out a visibility timeout.
func TestConsumeForAGoneCallerLeasesNothing(t *testing.T) {
	b := newTestBroker(t, Config{})
	createTestTopic(t, b, "gone", 1)
	commitSized(t, b, "gone", 0, 3, 10)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	msgs, err := b.Consume(ctx, ConsumeRequest{Topic: "gone", Max: 10})
	if err != nil || len(msgs) != 0 {
		t.Fatalf("consume for a cancelled caller: %d records, %v; want none", len(msgs), err)
	}
	if out := inFlight(b, "gone"); out != 0 {
		t.Fatalf("consume for a cancelled caller left %d leases out", out)
	}
	if msgs, err := b.Consume(testCtx(t), ConsumeRequest{Topic: "gone", Max: 10}); err != nil || len(msgs) != 3 {
		t.Fatalf("next consume: %d records, %v; want all 3", len(msgs), err)
	}
}
