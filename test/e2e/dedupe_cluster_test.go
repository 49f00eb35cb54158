package e2e

import (
	"bytes"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/narad-io/narad/client"
)

// Idempotent produce on a 3-node cluster with real processes: each of
// five msg_ids is produced keyless through every node (so two of the
// three produces are forwarded to the partition's owner, which is where
// the decision is made). Every produce answers 202; replaying all the
// topic's partitions finds each id stored exactly once, and the owners
// count the ten copies as deduplicated.
func TestDedupeAcrossClusterNodes(t *testing.T) {
	nodes := startCluster(t, 3)
	ctx := ctxT(t)
	const partitions = 6
	if _, err := nodes[0].c.CreateTopic(ctx, client.CreateTopicRequest{Name: "ddc", Partitions: partitions, DedupeWindowMs: 600_000}); err != nil {
		t.Fatal(err)
	}
	// Every node must see the topic before it is produced to through it.
	for _, n := range nodes {
		eventually(t, 20*time.Second, n.id+" knows topic ddc", func() bool {
			_, err := n.c.GetTopic(ctx, "ddc")
			return err == nil
		})
	}
	const ids = 5
	// Each node is given the ids in another order, so that a node placing
	// keyless records round-robin (not by the id's hash) would put one
	// id's copies on different partitions.
	for j, n := range nodes {
		for k := range ids {
			id := fmt.Sprintf("order-%d", (k+j)%ids)
			req, err := http.NewRequest("POST", n.url("/v1/topics/ddc/produce"), strings.NewReader(id+" via "+n.id))
			if err != nil {
				t.Fatal(err)
			}
			req.Header.Set("Narad-Msg-Id", id)
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatalf("produce %s through %s: %v", id, n.id, err)
			}
			resp.Body.Close()
			if resp.StatusCode != http.StatusAccepted {
				t.Fatalf("produce %s through %s: %d, want 202", id, n.id, resp.StatusCode)
			}
		}
	}
	deduplicated := func() float64 {
		sum := 0.0
		for _, n := range nodes {
			if v := n.metric(`narad_deduplicated_records_total{topic="ddc"}`); v > 0 {
				sum += v
			}
		}
		return sum
	}
	replay := func() map[string][]string { // msg_id → "partition:offset" of each stored copy
		stored := map[string][]string{}
		for p := range partitions {
			var from uint64
			for {
				part, off := p, from
				ms, err := nodes[p%3].c.Consume(ctx, "ddc", client.ConsumeOptions{Partition: &part, Offset: &off, Max: 100})
				if err != nil {
					t.Fatalf("replay partition %d: %v", p, err)
				}
				if len(ms) == 0 {
					break
				}
				for _, m := range ms {
					id, _, _ := strings.Cut(string(bytes.Trim(m.Payload, `"`)), " via ")
					stored[id] = append(stored[id], fmt.Sprintf("%d:%d", m.Partition, m.Offset))
					from = m.Offset + 1
				}
			}
		}
		return stored
	}
	// A 202 is durable in the accepting node's WAL; the record is
	// committed to the owner's log (and the decision made) after it, so
	// wait until all fifteen produces are accounted for: stored or
	// counted as deduplicated.
	var stored map[string][]string
	eventually(t, 30*time.Second, "the 15 produces stored or deduplicated", func() bool {
		stored = replay()
		n := 0
		for _, copies := range stored {
			n += len(copies)
		}
		return float64(n)+deduplicated() == 3*ids
	})
	if len(stored) != ids {
		t.Fatalf("stored ids %v, want %d of them", stored, ids)
	}
	for i := range ids {
		id := fmt.Sprintf("order-%d", i)
		if len(stored[id]) != 1 {
			t.Errorf("%s stored %d times (%v), want once", id, len(stored[id]), stored[id])
		}
	}
	if got := deduplicated(); got != 2*ids {
		t.Errorf("narad_deduplicated_records_total summed over the nodes = %v after the replay, want %d", got, 2*ids)
	}
}
