package e2e

import (
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/narad-io/narad/client"
	"github.com/narad-io/narad/internal/storage"
)

// The side state of a replicated partition follows its leader
// (docs/replication.md): its fan-out cursor files
// and its delivery counts reach the followers, so a SIGKILLed leader's
// successor resumes its cursors near where they were (never from the
// attach point) and counts deliveries on.

// createTopicJSON creates a topic from a JSON body through n.
func createTopicJSON(t *testing.T, n *node, body string) {
	t.Helper()
	if st, b, _ := n.do("POST", "/v1/topics", "application/json", []byte(body)); st != http.StatusCreated {
		t.Fatalf("create %s: %d %s", body, st, b)
	}
}

// waitInSync waits until n describes topic's partition 0 with rf copies in
// sync.
func waitInSync(t *testing.T, nodes []*node, topic string, rf int) {
	t.Helper()
	for _, n := range nodes {
		eventually(t, 20*time.Second, n.id+" to see "+topic+" fully in sync", func() bool {
			ps, ok := partitionStats(n, topic)
			return ok && ps.OwnerNode != "" && len(ps.Replicas) == rf && len(ps.InSync) == rf
		})
	}
}

// partFile is a file of partition 0 of topic in n's data directory.
func partFile(n *node, topic, name string) string {
	return filepath.Join(n.dir, "data", "topics", topic, "p00000", name)
}

// replayIDs reads partition 0 of topic from offset 0 through whichever of
// nodes answers, counting each payload id; ok is false if none answered
// every read.
func replayIDs(t *testing.T, nodes []*node, topic string) (got map[int]int, total int, ok bool) {
	for _, n := range nodes {
		got, total = map[int]int{}, 0
		off := uint64(0)
		for {
			msgs, err := n.c.Consume(ctxT(t), topic, client.ConsumeOptions{Partition: ptr(0), Offset: &off, Max: 1000})
			if err != nil {
				break
			}
			if len(msgs) == 0 {
				return got, total, true
			}
			for _, m := range msgs {
				b, _ := m.Bytes()
				var id int
				fmt.Sscanf(string(b), "id-%d", &id)
				got[id]++
				total++
				off = m.Offset + 1
			}
		}
	}
	return nil, 0, false
}

// waitNewLeader waits until a survivor describes another leader than old
// and that leader takes a produce through led.
func waitNewLeader(t *testing.T, survivors []*node, old string, led *replLedger) {
	t.Helper()
	killed := time.Now()
	eventually(t, 40*time.Second, "a new leader to take a produce", func() bool {
		ps, ok := partitionStats(survivors[0], led.topic)
		return ok && ps.OwnerNode != old && ps.OwnerNode != "" && led.produce(survivors[0])
	})
	t.Logf("a new leader took a produce %v after the leader was SIGKILLed", time.Since(killed).Round(time.Millisecond))
}

// TestReplicatedFanoutCursorsFollowTheLeader: an RF=3 parent with a
// replica child and a delay child is produced to; once its followers hold
// copies of the leader's cursor files, more is produced and the leader is
// SIGKILLed. Every record answered 202 reaches both children, and the new
// leader's cursors resume from the copies: the children hold far fewer
// duplicates than "everything again" (the attach point is offset 0). At
// most the records produced after the copies were seen (50) and those of
// a child's own takeover are copied again; the bound asserted is half of
// everything.
func TestReplicatedFanoutCursorsFollowTheLeader(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("kills processes")
	}
	nodes := startCluster(t, 3)
	createReplicated(t, nodes, "fp", 3)
	createTopicJSON(t, nodes[0], `{"name":"fc","partitions":1,"replication_factor":3,"parent":"fp"}`)
	createTopicJSON(t, nodes[0], `{"name":"fd","partitions":1,"replication_factor":3,"parent":"fp","fanout_delay_ms":200}`)
	waitInSync(t, nodes, "fc", 3)
	waitInSync(t, nodes, "fd", 3)
	ps, _ := partitionStats(nodes[0], "fp")
	leader, survivors := byID(nodes, ps.OwnerNode)
	led := newReplLedger(t, "fp")
	const first, more = 200, 50
	for i := 0; i < first; i++ {
		if !led.produce(nodes[i%3]) {
			t.Fatalf("produce with every replica up refused: %+v", led.refused)
		}
	}
	// The followers' copies of the leader's cursor files reach the end.
	for _, f := range survivors {
		for _, child := range []string{"fc", "fd"} {
			path := partFile(f, "fp", "fanout-"+child+".offset")
			eventually(t, 20*time.Second, f.id+"'s copy of the "+child+" cursor at "+fmt.Sprint(first), func() bool {
				// A copy is written by rename (whole), and the file is a
				// JSON object.
				var st struct {
					NextOffset uint64 `json:"next_offset"`
				}
				b, err := os.ReadFile(path)
				return err == nil && json.Unmarshal(b, &st) == nil && st.NextOffset == first
			})
		}
	}
	for i := 0; i < more; i++ {
		led.produce(nodes[i%3])
	}
	leader.kill()
	waitNewLeader(t, survivors, leader.id, led)
	accepted := led.snapshot()
	for _, child := range []string{"fc", "fd"} {
		var got map[int]int
		var total int
		eventually(t, 40*time.Second, "every record answered 202 in "+child, func() bool {
			var ok bool
			if got, total, ok = replayIDs(t, survivors, child); !ok {
				return false
			}
			for id := range accepted {
				if got[id] == 0 {
					return false
				}
			}
			return true
		})
		dups := total - len(got)
		t.Logf("%s: %d records for %d accepted (%d duplicates) after the failover", child, total, len(accepted), dups)
		if dups >= len(accepted)/2 {
			t.Errorf("%s: %d duplicates of %d accepted records: the new leader's cursor copied from near the attach point", child, dups, len(accepted))
		}
	}
}

// TestReplicatedDeliveryCountsFollowTheLeader: a record of an RF=3 topic
// with max_deliveries 3 is delivered twice (nacked), the followers hold
// the count, and the leader is SIGKILLed: on the new leader the next
// delivery says 3, and its nack dead-letters the record.
func TestReplicatedDeliveryCountsFollowTheLeader(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("kills processes")
	}
	nodes := startCluster(t, 3)
	createReplicated(t, nodes, "ddlq", 3)
	createTopicJSON(t, nodes[0], `{"name":"dsrc","partitions":1,"replication_factor":3,"visibility_timeout_ms":1000,"max_deliveries":3,"dead_letter_topic":"ddlq"}`)
	waitInSync(t, nodes, "dsrc", 3)
	ps, _ := partitionStats(nodes[0], "dsrc")
	leader, survivors := byID(nodes, ps.OwnerNode)
	led := newReplLedger(t, "dsrc")
	if !led.produce(nodes[0]) {
		t.Fatalf("produce refused: %+v", led.refused)
	}
	for want := 1; want <= 2; want++ {
		if got := nackOnce(t, survivors[0], "dsrc"); got != want {
			t.Fatalf("delivery %d says %d", want, got)
		}
	}
	for _, f := range survivors {
		path := partFile(f, "dsrc", storage.DeliveryCountsFile)
		eventually(t, 20*time.Second, f.id+"'s copy of the delivery count 2", func() bool {
			b, err := os.ReadFile(path)
			if err != nil {
				return false
			}
			es, err := storage.DecodeDeliveryCounts(b)
			return err == nil && len(es) == 1 && es[0].Count == 2
		})
	}
	leader.kill()
	var m client.Message
	eventually(t, 40*time.Second, "the record delivered by the new leader", func() bool {
		msgs, err := survivors[0].c.Consume(ctxT(t), "dsrc", client.ConsumeOptions{Wait: 500 * time.Millisecond})
		if err != nil || len(msgs) != 1 {
			return false
		}
		m = msgs[0]
		return true
	})
	if m.DeliveryCount != 3 {
		t.Fatalf("first delivery on the new leader says %d, want 3 (2 before the failover)", m.DeliveryCount)
	}
	if err := survivors[0].c.Nack(ctxT(t), "dsrc", m.ReceiptHandle); err != nil {
		t.Fatal(err)
	}
	eventually(t, 30*time.Second, "the record dead-lettered", func() bool { return hwmOf(t, survivors[0], "ddlq") == 1 })
	if msgs, err := survivors[0].c.Consume(ctxT(t), "dsrc", client.ConsumeOptions{Wait: 1500 * time.Millisecond}); err != nil || len(msgs) != 0 {
		t.Fatalf("dsrc offered %d records after the dead-letter (%v)", len(msgs), err)
	}
}
