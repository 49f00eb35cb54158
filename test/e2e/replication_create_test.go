package e2e

import (
	"bytes"
	"fmt"
	"io"
	"net/http"
	"sync"
	"testing"
	"time"
)

// TestReplicatedCreateServesAtOnce: a topic created with three copies
// takes produces as soon as its create answers (docs/replication.md,
// "1. Placed"). Right after the 201, 100 records are produced one by one
// through each of the three nodes at once, with no retries: every one is
// answered 202, none 503, and all 300 are consumed.
func TestReplicatedCreateServesAtOnce(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a cluster")
	}
	nodes := startCluster(t, 3)
	const topic, parts, each = "rfnow", 3, 100
	began := time.Now()
	body := fmt.Sprintf(`{"name":%q,"partitions":%d,"replication_factor":3}`, topic, parts)
	if st, b, _ := nodes[0].do("POST", "/v1/topics", "application/json", []byte(body)); st != http.StatusCreated {
		t.Fatalf("create: %d %s", st, b)
	}
	t.Logf("create with replication_factor 3 answered 201 in %s", time.Since(began).Round(time.Millisecond))

	type refusal struct {
		via, status, retryAfter, body string
	}
	var mu sync.Mutex
	var refused []refusal
	accepted := map[int]bool{}
	hc := &http.Client{Timeout: 30 * time.Second}
	var wg sync.WaitGroup
	for i, n := range nodes {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for k := 0; k < each; k++ {
				id := i*each + k + 1
				resp, err := hc.Post(n.url("/v1/topics/"+topic+"/produce"), "application/octet-stream", bytes.NewReader([]byte(fmt.Sprintf("id-%d", id))))
				if err != nil {
					mu.Lock()
					refused = append(refused, refusal{via: n.id, status: err.Error()})
					mu.Unlock()
					continue
				}
				b, _ := io.ReadAll(resp.Body)
				resp.Body.Close()
				mu.Lock()
				if resp.StatusCode == http.StatusAccepted {
					accepted[id] = true
				} else {
					refused = append(refused, refusal{via: n.id, status: resp.Status, retryAfter: resp.Header.Get("Retry-After"), body: string(b)})
				}
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	for i, r := range refused {
		if i == 5 {
			t.Logf("... and %d more", len(refused)-5)
			break
		}
		t.Logf("via %s: %s (Retry-After %q) %s", r.via, r.status, r.retryAfter, r.body)
	}
	if len(refused) > 0 {
		t.Fatalf("%d of %d produces right after the create were not answered 202", len(refused), 3*each)
	}
	got := drain(t, nodes[1], topic, 4)
	checkLedger(t, topic, accepted, got)
	if len(got) != 3*each {
		t.Fatalf("consumed %d distinct records, want %d", len(got), 3*each)
	}
}

// TestReplicatedServesOnceReadyAfterRestart: after the whole cluster
// restarts, a node that answers /readyz 200 takes writes to the
// replicated partitions it leads. Every node is stopped, all at once,
// and started again; as soon as all three are ready, one record is
// produced to each partition through each node, with no retries, and
// every one is answered 202. A node that leads replicated partitions is
// not ready until the metastore leader has answered one of its
// heartbeats (docs/http-api.md, GET /readyz): before it waited, each
// node answered 503 ("has not heard from the cluster within its lease")
// for about two seconds after it was ready.
//
// The nodes stop together, as a whole cluster does: stopped one after
// another, the later ones may fail over the partitions of a node that
// is slow to exit, and after the restart the controller spreads that
// leadership again; a produce in flight through such an election may be
// refused as possibly stored, which is a leader change's contract
// (docs/replication-faults.md), not the readiness this test is about.
func TestReplicatedServesOnceReadyAfterRestart(t *testing.T) {
	if testing.Short() {
		t.Skip("restarts a cluster")
	}
	nodes := startCluster(t, 3)
	createReplicatedN(t, nodes[0], "again", 3, 3)
	var stopping sync.WaitGroup
	for _, n := range nodes {
		stopping.Go(n.stop)
	}
	stopping.Wait()
	for _, n := range nodes {
		n.startAsync()
	}
	for _, n := range nodes {
		n.waitReady()
	}
	for _, n := range nodes {
		for p := range 3 {
			path := fmt.Sprintf("/v1/topics/again/produce?partition=%d", p)
			if st, b, _ := n.do("POST", path, "application/octet-stream", []byte("x")); st != http.StatusAccepted {
				t.Errorf("produce to partition %d through %s, ready after the restart: %d %s", p, n.id, st, b)
			}
		}
	}
}
