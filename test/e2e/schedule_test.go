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
	t.Parallel()
	n := startNode(t)
	ctx := ctxT(t)
	if _, err := n.c.CreateTopic(ctx, client.CreateTopicRequest{Name: "sched", Partitions: 2}); err != nil {
		t.Fatal(err)
	}
	// A fan-out child gets its copies at once, with the same due times.
	if _, err := n.c.CreateTopic(ctx, client.CreateTopicRequest{Name: "sched-copy", Parent: "sched"}); err != nil {
		t.Fatal(err)
	}
	const total = 100
	produced := time.Now()
	produceHalfScheduled(t, n, "sched", 2, total, "8s")
	// The unscheduled half is delivered and acked at once, here and in
	// the child, and no scheduled record before its time.
	if got := drainScheduled(t, n, "sched", total, 6*time.Second-time.Since(produced), false); len(got) != total/2 {
		t.Fatalf("%d unscheduled records delivered, want %d: the scheduled ones held them back", len(got), total/2)
	}
	if got := drainScheduled(t, n, "sched-copy", total, 6*time.Second-time.Since(produced), false); len(got) != total/2 {
		t.Fatalf("the child delivered %d records before the due time, want the %d unscheduled ones", len(got), total/2)
	}
	// A consume reads what the last rounds did not reach (scheduled
	// records after the last unscheduled one), filing it; then wait until
	// the schedule is durable with the frontiers that passed it (the
	// gauge is set by the same sweep), and kill.
	if ms, err := n.c.Consume(ctx, "sched", client.ConsumeOptions{Max: 100}); err != nil || len(ms) != 0 {
		t.Fatalf("a consume before the due time: %d messages, %v", len(ms), err)
	}
	eventually(t, 20*time.Second, "50 scheduled records gauged", func() bool {
		return n.metric(`narad_scheduled_messages{topic="sched"}`) == total/2
	})
	n.kill()
	n.start()
	if due := drainScheduled(t, n, "sched", total, 30*time.Second, true); len(due) != total/2 {
		t.Fatalf("%d of %d scheduled records delivered after the SIGKILL", len(due), total/2)
	}
	if due := drainScheduled(t, n, "sched-copy", total, 30*time.Second, true); len(due) != total/2 {
		t.Fatalf("the child delivered %d scheduled copies after their due time, want %d", len(due), total/2)
	}
}

// produceHalfScheduled produces total records {"i": i} to topic in one
// batch, the even ones scheduled delay ahead, record i pinned to
// partition i mod partitions: a batch's keyless records would all go to
// one partition, and the tests need them on every one.
func produceHalfScheduled(t *testing.T, n *node, topic string, partitions, total int, delay string) {
	t.Helper()
	var b strings.Builder
	b.WriteString(`{"records":[`)
	for i := range total {
		if i > 0 {
			b.WriteByte(',')
		}
		if i%2 == 0 {
			fmt.Fprintf(&b, `{"payload":{"i":%d},"partition":%d,"delay":%q}`, i, i%partitions, delay)
		} else {
			fmt.Fprintf(&b, `{"payload":{"i":%d},"partition":%d}`, i, i%partitions)
		}
	}
	b.WriteString(`]}`)
	if code, body, _ := n.do("POST", "/v1/topics/"+topic+"/produce/batch", "application/json", []byte(b.String())); code != 202 {
		t.Fatalf("batch produce: %d %s", code, body)
	}
}

// recordIndex is the i of a {"i": i} payload.
func recordIndex(t *testing.T, m client.Message) int {
	t.Helper()
	var v struct{ I int }
	if err := json.Unmarshal(m.Payload, &v); err != nil {
		t.Fatalf("payload %s: %v", m.Payload, err)
	}
	return v.I
}

// TestScheduledRecordsMoveWithTheirPartition: the schedule lies in the
// partition's directory, so a move carries it. A node holding scheduled
// records the frontier passed is decommissioned; once due, every one of
// them is delivered by the partitions' new owners.
func TestScheduledRecordsMoveWithTheirPartition(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("starts and moves a cluster")
	}
	nodes := startCluster(t, 3)
	ctx := ctxT(t)
	if _, err := nodes[0].c.CreateTopic(ctx, client.CreateTopicRequest{Name: "later", Partitions: 3}); err != nil {
		t.Fatal(err)
	}
	const total = 60
	produced := time.Now()
	produceHalfScheduled(t, nodes[0], "later", 3, total, "25s")
	if got := drainScheduled(t, nodes[1], "later", total, 15*time.Second-time.Since(produced), false); len(got) != total/2 {
		t.Fatalf("%d unscheduled records delivered, want %d", len(got), total/2)
	}
	// File the rest, and wait until every node made its schedule durable.
	if _, err := nodes[1].c.Consume(ctx, "later", client.ConsumeOptions{Max: 100}); err != nil {
		t.Fatal(err)
	}
	eventually(t, 10*time.Second, "every scheduled record filed and gauged", func() bool {
		sum := 0.0
		for _, n := range nodes {
			sum += max(n.metric(`narad_scheduled_messages{topic="later"}`), 0)
		}
		return sum == total/2
	})
	// The node to empty holds some of them, and is not the one asked.
	var leaving *node
	for _, n := range nodes[1:] {
		if n.metric(`narad_scheduled_messages{topic="later"}`) > 0 {
			leaving = n
		}
	}
	if leaving == nil {
		t.Fatal("no node but the first holds scheduled records")
	}
	if code, body, _ := nodes[0].do("POST", "/v1/cluster/members/"+leaving.id+"/decommission", "", nil); code != 200 {
		t.Fatalf("decommission %s: %d %s", leaving.id, code, body)
	}
	eventually(t, 60*time.Second, leaving.id+" empty", func() bool {
		return clusterMembers(t, nodes[0])[leaving.id].Partitions == 0 && movesInFlight(nodes[0]) == 0
	})
	if due := drainScheduled(t, nodes[0], "later", total, 60*time.Second, true); len(due) != total/2 {
		t.Fatalf("%d of %d scheduled records delivered after the move", len(due), total/2)
	}
}

// TestScheduledRecordsSurviveFailover: on an RF=3 topic the leader, which
// holds the schedule, is SIGKILLed after its frontier passed the
// scheduled records. The frontier its followers copied never passes a
// scheduled record not settled, so the new leader reads them again and
// files them from the due time they carry: every one is delivered once
// due, none before.
func TestScheduledRecordsSurviveFailover(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("kills processes")
	}
	nodes := startCluster(t, 3)
	createReplicated(t, nodes, "rsched", 3)
	ctx := ctxT(t)
	const total = 40
	produceHalfScheduled(t, nodes[0], "rsched", 1, total, "15s")
	ps, _ := partitionStats(nodes[0], "rsched")
	leader, survivors := byID(nodes, ps.OwnerNode)
	got := map[int]bool{}
	for len(got) < total/2 {
		ms, err := leader.c.Consume(ctx, "rsched", client.ConsumeOptions{Max: 100, Wait: time.Second})
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range ms {
			if i := recordIndex(t, m); i%2 == 0 {
				t.Fatalf("record %d offered before its delay", i)
			} else {
				got[i] = true
			}
			if err := leader.c.Ack(ctx, "rsched", m.ReceiptHandle); err != nil {
				t.Fatal(err)
			}
		}
	}
	if _, err := leader.c.Consume(ctx, "rsched", client.ConsumeOptions{Max: 100}); err != nil {
		t.Fatal(err)
	}
	eventually(t, 10*time.Second, "every scheduled record filed on the leader", func() bool {
		return leader.metric(`narad_scheduled_messages{topic="rsched"}`) == total/2
	})
	// Followers copy the leader's frontier at most every second: give
	// them a few, so a copy past the scheduled records would have landed.
	time.Sleep(3 * time.Second)
	leader.kill()
	due := map[int]bool{}
	deadline := time.Now().Add(60 * time.Second)
	for len(due) < total/2 && time.Now().Before(deadline) {
		ms, err := survivors[0].c.Consume(ctx, "rsched", client.ConsumeOptions{Max: 100, Wait: time.Second})
		if err != nil {
			continue // no leader yet
		}
		for _, m := range ms {
			i := recordIndex(t, m)
			if i%2 == 0 {
				at, _ := strconv.ParseInt(m.Headers["narad-deliver-at"], 10, 64)
				if now := time.Now().UnixMilli(); now < at {
					t.Fatalf("record %d offered %d ms early after the failover", i, at-now)
				}
				due[i] = true
			}
			survivors[0].c.Ack(ctx, "rsched", m.ReceiptHandle)
		}
	}
	if len(due) != total/2 {
		t.Fatalf("%d of %d scheduled records delivered after the failover", len(due), total/2)
	}
}

// drainScheduled consumes and acks topic's records {"i": i} for up to
// within, until it holds total/2 of the scheduled (even) or unscheduled
// (odd) ones as asked. It fails on a record offered before the due time
// it carries, and, asking for the unscheduled ones, on any scheduled one.
func drainScheduled(t *testing.T, n *node, topic string, total int, within time.Duration, scheduled bool) map[int]bool {
	t.Helper()
	ctx := ctxT(t)
	got := map[int]bool{}
	deadline := time.Now().Add(within)
	for len(got) < total/2 && time.Now().Before(deadline) {
		ms, err := n.c.Consume(ctx, topic, client.ConsumeOptions{Max: 100, Wait: 500 * time.Millisecond})
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range ms {
			i := recordIndex(t, m)
			if at, err := strconv.ParseInt(m.Headers["narad-deliver-at"], 10, 64); err == nil && time.Now().UnixMilli() < at {
				t.Fatalf("%s: record %d offered %d ms before its due time", topic, i, at-time.Now().UnixMilli())
			}
			if (i%2 == 0) != scheduled {
				if !scheduled {
					t.Fatalf("%s: scheduled record %d offered early", topic, i)
				}
				continue // an unscheduled record again: at least once allows it
			}
			got[i] = true
			if err := n.c.Ack(ctx, topic, m.ReceiptHandle); err != nil {
				t.Fatal(err)
			}
		}
	}
	return got
}
