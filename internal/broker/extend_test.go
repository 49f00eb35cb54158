package broker

import (
	"testing"
	"time"

	"github.com/narad-io/narad/internal/clock"
	"github.com/narad-io/narad/internal/storage"
)

// An extend for a duration of its own outlives neither more nor less than
// that: a record extended for 2 s on a topic of 30 s is offered again 2 s
// later, on its second delivery — an ordinary record (the lease table) and
// a scheduled one that fell due (the due table) alike.
func TestExtendForRedeliversAfterTheDuration(t *testing.T) {
	for _, tc := range []struct {
		name string
		recs func(now time.Time) []storage.Record
	}{
		{"ordinary", func(time.Time) []storage.Record { return scheduledRecs(0) }},
		{"scheduled", func(now time.Time) []storage.Record { return scheduledRecs(now.Add(time.Second).UnixMilli()) }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			clk := clock.NewFake(time.Unix(1_700_000_000, 0))
			b := newTestBroker(t, Config{Now: clk.Now, ExpirySweep: time.Hour, FrontierPersist: time.Hour})
			createTestTopic(t, b, "ext", 1) // visibility_timeout_ms 30000
			ctx := testCtx(t)
			if err := commitLocal(b, ctx, "ext", 0, tc.recs(clk.Now())); err != nil {
				t.Fatal(err)
			}
			consume := func() []Message {
				t.Helper()
				ms, err := b.Consume(ctx, ConsumeRequest{Topic: "ext", Max: 10})
				if err != nil {
					t.Fatal(err)
				}
				return ms
			}
			if tc.name == "scheduled" {
				if got := consume(); len(got) != 0 {
					t.Fatalf("a record scheduled 1s ahead was offered at once: %+v", got)
				}
				clk.Advance(time.Second) // it falls due
			}
			first := consume()
			if len(first) != 1 || first[0].DeliveryCount != 1 {
				t.Fatalf("first consume: %+v, want one record on its first delivery", first)
			}
			if err := b.ExtendFor(ctx, "ext", first[0].ReceiptHandle, 2*time.Second); err != nil {
				t.Fatal(err)
			}
			clk.Advance(2*time.Second - time.Millisecond)
			if got := consume(); len(got) != 0 {
				t.Fatalf("offered 1ms before the 2s extend ended: %+v", got)
			}
			clk.Advance(time.Millisecond)
			again := consume()
			if len(again) != 1 || again[0].Offset != first[0].Offset || again[0].DeliveryCount != 2 {
				t.Fatalf("after the 2s extend: %+v, want offset %d on its second delivery", again, first[0].Offset)
			}
			if err := b.Ack(ctx, "ext", first[0].ReceiptHandle, Settle); err == nil {
				t.Fatal("the first lease's handle still acks after its extend ran out")
			}
			// Longer than the topic's timeout: still leased after 30 s.
			if err := b.ExtendFor(ctx, "ext", again[0].ReceiptHandle, time.Minute); err != nil {
				t.Fatal(err)
			}
			clk.Advance(59 * time.Second)
			if got := consume(); len(got) != 0 {
				t.Fatalf("offered before the 1m extend ended: %+v", got)
			}
			if err := b.Ack(ctx, "ext", again[0].ReceiptHandle, Settle); err != nil {
				t.Fatalf("ack within the 1m extend: %v", err)
			}
		})
	}
}

// ExtendFor refuses a duration outside 1ms..12h, and the lease is left as
// it was.
func TestExtendForRefusesOutOfRange(t *testing.T) {
	clk := clock.NewFake(time.Unix(1_700_000_000, 0))
	b := newTestBroker(t, Config{Now: clk.Now, ExpirySweep: time.Hour, FrontierPersist: time.Hour})
	createTestTopic(t, b, "ext", 1)
	ctx := testCtx(t)
	if err := commitLocal(b, ctx, "ext", 0, scheduledRecs(0)); err != nil {
		t.Fatal(err)
	}
	ms, err := b.Consume(ctx, ConsumeRequest{Topic: "ext", Max: 1})
	if err != nil || len(ms) != 1 {
		t.Fatalf("consume: %+v, %v", ms, err)
	}
	h := ms[0].ReceiptHandle
	for _, d := range []time.Duration{0, -time.Millisecond, time.Millisecond - 1, MaxVisibility + time.Millisecond} {
		refused(t, d.String(), b.ExtendFor(ctx, "ext", h, d), 400, "", "extend must be a duration of 1ms..12h (43200000 ms), got ")
	}
	if err := b.ExtendFor(ctx, "ext", h, MaxVisibility); err != nil {
		t.Fatalf("extend for 12h: %v", err)
	}
	clk.Advance(30 * time.Second) // the topic's timeout: the 12h lease holds
	if err := b.Ack(ctx, "ext", h, Settle); err != nil {
		t.Fatalf("ack after the refusals: %v", err)
	}
}

// A consume's own visibility: the leases it grants live that long, on an
// ordinary topic, a scheduled record that fell due, and a topic with
// message groups alike; the next consume without one gets the topic's
// timeout again.
func TestConsumeVisibility(t *testing.T) {
	for _, tc := range []struct {
		name   string
		create CreateTopicRequest
		due    bool
	}{
		{"ordinary", CreateTopicRequest{Name: "vis", Partitions: 1}, false},
		{"scheduled", CreateTopicRequest{Name: "vis", Partitions: 1}, true},
		{"groups", CreateTopicRequest{Name: "vis", Partitions: 1, Ordering: ptr("group")}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			clk := clock.NewFake(time.Unix(1_700_000_000, 0))
			b := newTestBroker(t, Config{Now: clk.Now, ExpirySweep: time.Hour, FrontierPersist: time.Hour})
			ctx := testCtx(t)
			if _, err := b.CreateTopic(ctx, tc.create, ""); err != nil {
				t.Fatal(err)
			}
			recs := scheduledRecs(0, 0)
			if tc.due {
				at := clk.Now().Add(time.Second).UnixMilli()
				recs = scheduledRecs(at, at)
			}
			for i := range recs {
				recs[i].Key = []byte{byte('a' + i)} // two groups, on a grouped topic
			}
			if err := commitLocal(b, ctx, "vis", 0, recs); err != nil {
				t.Fatal(err)
			}
			consume := func(vis time.Duration) []Message {
				t.Helper()
				ms, err := b.Consume(ctx, ConsumeRequest{Topic: "vis", Max: 10, Visibility: vis})
				if err != nil {
					t.Fatal(err)
				}
				return ms
			}
			if tc.due {
				if got := consume(0); len(got) != 0 {
					t.Fatalf("offered before due: %+v", got)
				}
				clk.Advance(time.Second)
			}
			first := consume(2 * time.Second)
			if len(first) != 2 || first[0].DeliveryCount != 1 {
				t.Fatalf("first consume: %+v, want both records on their first delivery", first)
			}
			clk.Advance(2*time.Second - time.Millisecond)
			if got := consume(0); len(got) != 0 {
				t.Fatalf("offered 1ms before the consume's 2s visibility ended: %+v", got)
			}
			clk.Advance(time.Millisecond)
			again := consume(0) // the topic's 30 s from here
			if len(again) != 2 || again[0].DeliveryCount != 2 || again[1].DeliveryCount != 2 {
				t.Fatalf("after 2s: %+v, want both on their second delivery", again)
			}
			clk.Advance(29 * time.Second)
			if got := consume(0); len(got) != 0 {
				t.Fatalf("a consume without visibility leased for less than the topic's 30s: %+v", got)
			}
			for _, m := range again {
				if err := b.Ack(ctx, "vis", m.ReceiptHandle, Settle); err != nil {
					t.Fatal(err)
				}
			}
		})
	}
}

func TestConsumeVisibilityRefusals(t *testing.T) {
	b := newTestBroker(t, Config{})
	createTestTopic(t, b, "vis", 1)
	ctx := testCtx(t)
	for _, d := range []time.Duration{-time.Millisecond, time.Microsecond, MaxVisibility + 1} {
		_, err := b.Consume(ctx, ConsumeRequest{Topic: "vis", Visibility: d})
		refused(t, d.String(), err, 400, "", "visibility must be a duration of 1ms..12h")
	}
	p, from := 0, uint64(0)
	_, err := b.Consume(ctx, ConsumeRequest{Topic: "vis", Partition: &p, Offset: &from, Visibility: time.Second})
	refused(t, "replay", err, 400, "", "a replay (offset) leases nothing")
}
