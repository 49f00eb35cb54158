package e2e

import (
	"fmt"
	"net/http"
	"testing"
	"time"
)

// TestClusterReadYourWritesAcrossNodes: a topic created through one node
// is known at once on every other — a produce, a describe, a consume and
// an ack right after the 201, each through another node, never answer
// 404 — while a topic that was never created still answers 404 promptly
// (one question to the leader, not the catch-up bound).
func TestClusterReadYourWritesAcrossNodes(t *testing.T) {
	t.Parallel()
	nodes := startCluster(t, 3)
	const rounds = 40
	for i := 0; i < rounds; i++ {
		a, b, c := nodes[i%3], nodes[(i+1)%3], nodes[(i+2)%3]
		name := fmt.Sprintf("ryw-%d", i)
		if st, body, _ := a.do("POST", "/v1/topics", "application/json", []byte(`{"name":"`+name+`","partitions":3}`)); st != http.StatusCreated {
			t.Fatalf("round %d: create on %s: %d %s", i, a.id, st, body)
		}
		var path string
		var st int
		var body []byte
		switch i % 4 {
		case 0:
			path = "/v1/topics/" + name + "/produce"
			st, body, _ = b.do("POST", path, "application/json", []byte(`{"round":`+fmt.Sprint(i)+`}`))
		case 1:
			path = "/v1/topics/" + name
			st, body, _ = b.do("GET", path, "", nil)
		case 2:
			path = "/v1/topics/" + name + "/consume"
			st, body, _ = b.do("GET", path, "", nil)
		case 3:
			path = "/v1/topics/" + name + "/ack?receipt_handle=0:0:1"
			st, body, _ = b.do("POST", path, "", nil)
		}
		if st == http.StatusNotFound {
			t.Fatalf("round %d: %s on %s right after the 201 on %s: 404 %s", i, path, b.id, a.id, body)
		}
		if st, body, _ := c.do("POST", "/v1/topics/"+name+"/produce/batch", "application/json", []byte(`{"records":[{"payload":"x"}]}`)); st != http.StatusAccepted {
			t.Fatalf("round %d: batch produce on %s right after the 201 on %s: %d %s", i, c.id, a.id, st, body)
		}
	}
	for _, n := range nodes {
		start := time.Now()
		st, body, _ := n.do("POST", "/v1/topics/never-created/produce", "application/json", []byte(`{}`))
		if took := time.Since(start); st != http.StatusNotFound || took > time.Second {
			t.Fatalf("produce to a topic that was never created, on %s: %d after %v %s; want 404 at once", n.id, st, took, body)
		}
	}
}
