package broker

import (
	"context"
	"sync/atomic"
	"testing"
	"time"
)

// A topic's describe shows segments ≥ 1 from its creation, as the
// reference's does (it creates the first segment with the partition):
// the empty active segment a log opens with is counted. Describing still
// opens no log, and after the first write the count is the open log's.
func TestDescribeShowsASegmentFromCreation(t *testing.T) {
	b := newTestBroker(t, Config{})
	createTestTopic(t, b, "fresh", 2)
	v, err := b.DescribeTopic("fresh")
	if err != nil {
		t.Fatal(err)
	}
	for _, ps := range v.PartitionStats {
		if ps.Segments == nil || *ps.Segments != 1 || ps.Available != nil {
			t.Fatalf("partition %d of a new topic: segments %v, available %v; want 1 and no flag", ps.Index, ps.Segments, ps.Available)
		}
		if b.parts.Peek("fresh", ps.Index) != nil {
			t.Fatalf("describing opened partition %d", ps.Index)
		}
	}
	commitSized(t, b, "fresh", 0, 1, 10)
	v, _ = b.DescribeTopic("fresh")
	if s := v.PartitionStats[0].Segments; s == nil || *s != 1 {
		t.Fatalf("after a write: segments %v, want the open log's 1", s)
	}
}

// Describe shows what a queue holds in flight (its lease table's live
// leases) and the commit time of the oldest unconsumed record, the one at
// the frontier: absent when nothing is unconsumed. The Stats RPC's
// reports (LocalReports) carry the same figures to a remote describe.
func TestDescribeShowsInFlightAndOldestUnconsumed(t *testing.T) {
	// Each commit a second later than the last, so the three records'
	// commit times tell them apart.
	var now atomic.Int64
	now.Store(time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC).UnixMilli())
	n := newTestNode(t, Config{Now: func() time.Time { return time.UnixMilli(now.Load()) }})
	n.createTopic("work", 1)
	figures := func(when string) (int, *int64) {
		t.Helper()
		v, err := n.b.DescribeTopic("work")
		if err != nil {
			t.Fatal(err)
		}
		ps := v.PartitionStats[0]
		if ps.InFlight == nil {
			t.Fatalf("%s: no in_flight", when)
		}
		r := n.b.LocalReports("work", []int{0}, false)[0]
		var at int64
		if ps.OldestUnconsumedAt != nil {
			at = *ps.OldestUnconsumedAt
		}
		if r.InFlight != *ps.InFlight || r.OldestUnconsumedAt != at {
			t.Fatalf("%s: the Stats report says %d in flight, oldest at %d; describe %d, %d", when, r.InFlight, r.OldestUnconsumedAt, *ps.InFlight, at)
		}
		return *ps.InFlight, ps.OldestUnconsumedAt
	}
	if f, at := figures("empty"); f != 0 || at != nil {
		t.Fatalf("an empty topic: %d in flight, oldest unconsumed at %v", f, at)
	}
	for _, p := range []string{"a", "b", "c"} {
		now.Add(1000)
		if err := n.commit("work", 0, p); err != nil {
			t.Fatal(err)
		}
	}
	all, err := n.replay("work", 0, 0, 3)
	if err != nil || len(all) != 3 || all[0].CommittedAt == all[1].CommittedAt {
		t.Fatalf("replay: %v, %d records", err, len(all))
	}
	if f, at := figures("three committed"); f != 0 || at == nil || *at != all[0].CommittedAt {
		t.Fatalf("three committed: %d in flight, oldest unconsumed at %v, want 0 and %d", f, at, all[0].CommittedAt)
	}
	got, err := n.consume("work", 0, 2)
	if err != nil || len(got) != 2 {
		t.Fatalf("consume: %v, %d records", err, len(got))
	}
	if f, _ := figures("two leased"); f != 2 {
		t.Fatalf("two leased: %d in flight", f)
	}
	if err := n.b.Ack(context.Background(), "work", got[0].ReceiptHandle, Settle); err != nil {
		t.Fatal(err)
	}
	if f, at := figures("the first acked"); f != 1 || at == nil || *at != all[1].CommittedAt {
		t.Fatalf("the first acked: %d in flight, oldest unconsumed at %v, want 1 and %d", f, at, all[1].CommittedAt)
	}
	for _, m := range append(got[1:], mustConsume(t, n, 1)...) {
		if err := n.b.Ack(context.Background(), "work", m.ReceiptHandle, Settle); err != nil {
			t.Fatal(err)
		}
	}
	if f, at := figures("all acked"); f != 0 || at != nil {
		t.Fatalf("all acked: %d in flight, oldest unconsumed at %v", f, at)
	}
}

func mustConsume(t *testing.T, n *testNode, max int) []Message {
	t.Helper()
	got, err := n.consume("work", 0, max)
	if err != nil || len(got) != max {
		t.Fatalf("consume: %v, %d records", err, len(got))
	}
	return got
}
