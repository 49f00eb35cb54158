package broker

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/narad-io/narad/internal/testutil"
)

// After a restart nobody has consumed anything, and a topic nobody
// consumes is the one whose backlog an operator watches: every partition
// hosted here has both backlog gauges, with topic info's figures — a
// partition consumed part way before the restart (its closed log read at
// its frontier), one never consumed, and an empty one.
func TestBacklogGaugesForUntouchedPartitions(t *testing.T) {
	t0 := time.UnixMilli(1_700_000_000_000)
	var now atomic.Int64
	now.Store(t0.UnixMilli())
	n := newTestNode(t, Config{ExpirySweep: 10 * time.Millisecond,
		Now: func() time.Time { return time.UnixMilli(now.Load()) }})
	n.createTopic("idle", 3)
	for i := range 5 {
		now.Store(t0.Add(time.Duration(i) * time.Second).UnixMilli())
		if err := n.commit("idle", 0, fmt.Sprint("a", i)); err != nil {
			t.Fatal(err)
		}
	}
	now.Store(t0.Add(20 * time.Second).UnixMilli())
	if err := n.commit("idle", 1, "b0", "b1", "b2"); err != nil {
		t.Fatal(err)
	}
	msgs, err := n.consume("idle", 0, 2)
	if err != nil || len(msgs) != 2 {
		t.Fatalf("consume: %d records, %v", len(msgs), err)
	}
	for _, m := range msgs {
		if err := n.b.Ack(context.Background(), "idle", m.ReceiptHandle, Settle); err != nil {
			t.Fatal(err)
		}
	}
	n.restart(nil)
	now.Store(t0.Add(100 * time.Second).UnixMilli())

	// Record 2 of partition 0 was committed at t0+2s, partition 1's first
	// at t0+20s; partition 2 has nothing.
	want := map[string][2]float64{"0": {3, 98}, "1": {3, 80}, "2": {0, 0}}
	for p, w := range want {
		lag := `narad_consumer_lag_messages{partition="` + p + `",topic="idle"}`
		age := `narad_oldest_unconsumed_message_age_seconds{partition="` + p + `",topic="idle"}`
		testutil.WaitFor(t, "partition "+p+"'s backlog gauges", func() bool {
			return n.metric(lag) == w[0] && n.metric(age) == w[1]
		})
	}
	v, err := n.b.DescribeTopic("idle")
	if err != nil {
		t.Fatal(err)
	}
	for _, ps := range v.PartitionStats {
		p := partLabel(ps.Index)
		lag := `narad_consumer_lag_messages{partition="` + p + `",topic="idle"}`
		age := `narad_oldest_unconsumed_message_age_seconds{partition="` + p + `",topic="idle"}`
		if want := float64(*ps.HighWatermark - *ps.ConsumerFrontier); n.metric(lag) != want {
			t.Errorf("partition %s: lag gauge %v, topic info %v", p, n.metric(lag), want)
		}
		wantAge := 0.0
		if ps.OldestUnconsumedAt != nil {
			wantAge = float64(now.Load()-*ps.OldestUnconsumedAt) / 1000
		} else if *ps.HighWatermark > *ps.ConsumerFrontier {
			t.Errorf("partition %s: topic info has a backlog and no oldest unconsumed record", p)
		}
		if n.metric(age) != wantAge {
			t.Errorf("partition %s: age gauge %v, topic info %v", p, n.metric(age), wantAge)
		}
	}
}

// A partition this node does not host reports nothing: its series go
// when it stops being hosted here.
func TestBacklogGaugesOnlyForHostedPartitions(t *testing.T) {
	n := newTestNode(t, Config{ExpirySweep: 10 * time.Millisecond})
	n.createTopic("moved", 2)
	if err := n.commit("moved", 1, "x"); err != nil {
		t.Fatal(err)
	}
	lag := `narad_consumer_lag_messages{partition="1",topic="moved"}`
	testutil.WaitFor(t, "the lag gauge of a hosted partition", func() bool { return n.metric(lag) == 1 })
	as := n.ms.Assignments("moved")
	as[1].Owner = "elsewhere"
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := n.ms.SetAssignments(ctx, as); err != nil {
		t.Fatal(err)
	}
	testutil.WaitFor(t, "the series of a partition hosted elsewhere to go", func() bool { return n.metric(lag) == -1 })
	if n.metric(`narad_consumer_lag_messages{partition="0",topic="moved"}`) != 0 {
		t.Error("the partition still hosted here lost its gauge")
	}
}
