package e2e

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/narad-io/narad/client"
)

// TestScheduledRecordsSurviveSIGKILL (docs/concepts.md, "Scheduled
// delivery"): records scheduled a few seconds ahead are not offered
// before their due time, do not hold back the records behind them, and
// are all delivered once due after a SIGKILL and a restart — never
// before the time they carry.
func TestScheduledRecordsSurviveSIGKILL(t *testing.T) {
	n := startNode(t)
	ctx := ctxT(t)
	if _, err := n.c.CreateTopic(ctx, client.CreateTopicRequest{Name: "sched", Partitions: 2}); err != nil {
		t.Fatal(err)
	}
	const total = 100
	var b strings.Builder
	b.WriteString(`{"records":[`)
	for i := range total {
		if i > 0 {
			b.WriteByte(',')
		}
		if i%2 == 0 { // even: scheduled 8 s ahead
			fmt.Fprintf(&b, `{"payload":{"i":%d},"delay":"8s"}`, i)
		} else {
			fmt.Fprintf(&b, `{"payload":{"i":%d}}`, i)
		}
	}
	b.WriteString(`]}`)
	produced := time.Now()
	if code, body, _ := n.do("POST", "/v1/topics/sched/produce/batch", "application/json", []byte(b.String())); code != 202 {
		t.Fatalf("batch produce: %d %s", code, body)
	}
	index := func(m client.Message) int {
		var v struct{ I int }
		if err := json.Unmarshal(m.Payload, &v); err != nil {
			t.Fatalf("payload %s: %v", m.Payload, err)
		}
		return v.I
	}
	// The unscheduled half is delivered and acked at once.
	got := map[int]bool{}
	for len(got) < total/2 && time.Since(produced) < 6*time.Second {
		ms, err := n.c.Consume(ctx, "sched", client.ConsumeOptions{Max: 100, Wait: time.Second})
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range ms {
			if i := index(m); i%2 == 0 {
				t.Fatalf("record %d was offered %v after produce, before its 8 s delay", i, time.Since(produced))
			} else {
				got[i] = true
			}
			if err := n.c.Ack(ctx, "sched", m.ReceiptHandle); err != nil {
				t.Fatal(err)
			}
		}
	}
	if len(got) != total/2 {
		t.Fatalf("%d unscheduled records delivered, want %d: the scheduled ones held them back", len(got), total/2)
	}
	// A consume reads what the last rounds did not reach (scheduled
	// records after the last unscheduled one), filing it; then wait until
	// the schedule is durable with the frontiers that passed it (the
	// gauge is set by the same sweep), and kill.
	if ms, err := n.c.Consume(ctx, "sched", client.ConsumeOptions{Max: 100}); err != nil || len(ms) != 0 {
		t.Fatalf("a consume before the due time: %d messages, %v", len(ms), err)
	}
	eventually(t, 5*time.Second, "50 scheduled records gauged", func() bool {
		return n.metric(`narad_scheduled_messages{topic="sched"}`) == total/2
	})
	n.kill()
	n.start()
	due := map[int]bool{}
	deadline := time.Now().Add(30 * time.Second)
	for len(due) < total/2 && time.Now().Before(deadline) {
		ms, err := n.c.Consume(ctx, "sched", client.ConsumeOptions{Max: 100, Wait: time.Second})
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range ms {
			i := index(m)
			at, err := strconv.ParseInt(m.Headers["narad-deliver-at"], 10, 64)
			if err != nil {
				t.Fatalf("record %d without its due time: %v", i, m.Headers)
			}
			if now := time.Now().UnixMilli(); now < at {
				t.Fatalf("record %d offered %d ms before its due time", i, at-now)
			}
			if i%2 == 1 && got[i] {
				continue // an acked record again: at least once allows it
			}
			due[i] = true
			if err := n.c.Ack(ctx, "sched", m.ReceiptHandle); err != nil {
				t.Fatal(err)
			}
		}
	}
	for i := 0; i < total; i += 2 {
		if !due[i] {
			t.Fatalf("scheduled record %d never delivered after the SIGKILL (%d of %d were)", i, len(due), total/2)
		}
	}
}
