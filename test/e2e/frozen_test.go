package e2e

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/narad-io/narad/client"
)

// timed is one raw request with its answer and how long it took. The
// client gives up at 25 s, under the nodes' 30 s HTTP write timeout: an
// answer that needs longer is no answer.
type timed struct {
	status  int
	body    []byte
	header  http.Header
	elapsed time.Duration
	err     error
}

var impatient = &http.Client{Timeout: 25 * time.Second}

func (n *node) timedDo(method, path string, body []byte) timed {
	req, err := http.NewRequest(method, n.url(path), bytes.NewReader(body))
	if err != nil {
		n.t.Fatal(err)
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	start := time.Now()
	resp, err := impatient.Do(req)
	if err != nil {
		return timed{err: err, elapsed: time.Since(start)}
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return timed{status: resp.StatusCode, body: b, header: resp.Header, elapsed: time.Since(start)}
}

// ownersOf maps each partition of topic to its owner's index in nodes.
func ownersOf(t *testing.T, nodes []*node, topic string) []int {
	t.Helper()
	d, err := nodes[0].c.GetTopic(ctxT(t), topic)
	if err != nil {
		t.Fatal(err)
	}
	out := make([]int, len(d.PartitionStats))
	for p, ps := range d.PartitionStats {
		out[p] = -1
		for i, n := range nodes {
			if n.id == ps.OwnerNode {
				out[p] = i
			}
		}
		if out[p] < 0 {
			t.Fatalf("partition %d owned by %q, not a node of the test", p, ps.OwnerNode)
		}
	}
	return out
}

// TestClusterFrozenOwner: with a partition's owner frozen (SIGSTOP), a
// pinned consume, a long-poll, a replay, an ack and a batch ack sent to it
// through another node answer 503 with Retry-After within the forward
// budget (5 s, plus the wait for a long-poll) — not after 75 s, by which
// time the HTTP write timeout has closed the connection with no answer.
// An unpinned consume gets records from the owners that do answer, and
// once one timed out it is tried last, so the next unpinned consume does
// not wait for it. After SIGCONT the partition serves again.
func TestClusterFrozenOwner(t *testing.T) {
	nodes := startCluster(t, 3)
	ctx := ctxT(t)
	if _, err := nodes[0].c.CreateTopic(ctx, client.CreateTopicRequest{Name: "frozen", Partitions: 3, VisibilityTimeoutMs: 3000}); err != nil {
		t.Fatal(err)
	}
	owners := ownersOf(t, nodes, "frozen")
	// victim owns pv, other owns po, and front, where the clients talk,
	// owns the third partition, left empty. The victim's id sorts first,
	// so an unpinned consume that did not skip it would ask it first.
	victim, other, front := 0, 1, 2
	pv, po := -1, -1
	for p, o := range owners {
		switch o {
		case victim:
			pv = p
		case other:
			po = p
		}
	}
	if pv < 0 || po < 0 || owners[0] == owners[1] || owners[1] == owners[2] || owners[0] == owners[2] {
		t.Fatalf("owners %v: want one partition per node", owners)
	}
	for i := 0; i < 3; i++ {
		for _, p := range []int{pv, po} {
			if err := nodes[front].c.Produce(ctx, "frozen", []byte(fmt.Sprintf(`{"p":%d,"i":%d}`, p, i)), client.ProduceOptions{Partition: ptr(p)}); err != nil {
				t.Fatal(err)
			}
		}
	}
	eventually(t, 20*time.Second, "records committed on both owners", func() bool {
		d, err := nodes[front].c.GetTopic(ctx, "frozen")
		return err == nil && d.PartitionStats[pv].HighWatermark == 3 && d.PartitionStats[po].HighWatermark == 3
	})

	nodes[victim].signal(syscall.SIGSTOP)
	const budget = 5 * time.Second
	slack := 5 * time.Second // a loaded machine under the race detector
	unavailable := func(what string, r timed, within time.Duration) {
		t.Helper()
		if r.err != nil {
			t.Fatalf("%s to the frozen owner: no answer after %v: %v", what, r.elapsed.Round(time.Millisecond), r.err)
		}
		if r.status != http.StatusServiceUnavailable || r.header.Get("Retry-After") == "" {
			t.Fatalf("%s to the frozen owner: %d (Retry-After %q) %s; want 503 with Retry-After", what, r.status, r.header.Get("Retry-After"), r.body)
		}
		t.Logf("%s to the frozen owner: %d after %v", what, r.status, r.elapsed.Round(time.Millisecond))
		if r.elapsed > within+slack {
			t.Fatalf("%s to the frozen owner answered after %v; want about %v", what, r.elapsed.Round(time.Millisecond), within)
		}
	}
	// The six calls wait on the same frozen owner, so they run at once:
	// each is still timed on its own.
	handle := fmt.Sprintf("%d:0:1", pv)
	calls := []struct {
		what, method, path string
		body               []byte
		within             time.Duration
	}{
		{"pinned consume", "GET", fmt.Sprintf("/v1/topics/frozen/consume?partition=%d", pv), nil, budget},
		{"pinned long-poll", "GET", fmt.Sprintf("/v1/topics/frozen/consume?partition=%d&wait=2s", pv), nil, budget + 2*time.Second},
		{"replay", "GET", fmt.Sprintf("/v1/topics/frozen/consume?partition=%d&offset=0&max=10", pv), nil, budget},
		{"ack", "POST", "/v1/topics/frozen/ack?receipt_handle=" + handle, nil, budget},
		{"nack", "POST", "/v1/topics/frozen/ack?extend=0&receipt_handle=" + handle, nil, budget},
		{"batch ack", "POST", "/v1/topics/frozen/ack", []byte(`{"receipt_handles":["` + handle + `"]}`), budget},
	}
	results := make([]timed, len(calls))
	var wg sync.WaitGroup
	for i, c := range calls {
		wg.Go(func() { results[i] = nodes[front].timedDo(c.method, c.path, c.body) })
	}
	wg.Wait()
	for i, c := range calls[:5] {
		unavailable(c.what, results[i], c.within)
	}
	batch := results[5]
	if batch.err != nil || batch.status != http.StatusOK || !strings.Contains(string(batch.body), `"status":503`) || batch.elapsed > budget+slack {
		t.Fatalf("batch ack to the frozen owner: %d after %v (%v): %s; want 200 with a 503 result within about %v",
			batch.status, batch.elapsed.Round(time.Millisecond), batch.err, batch.body, budget)
	}

	// Unpinned: the records of the owner that answers. The front node's
	// own partition is empty, so they come from other's.
	r := nodes[front].timedDo("GET", "/v1/topics/frozen/consume?max=1", nil)
	if r.err != nil || r.status != http.StatusOK {
		t.Fatalf("unpinned consume with an owner frozen: %d after %v (%v): %s; want 200 with other owners' records", r.status, r.elapsed, r.err, r.body)
	}
	if first := decodeMessages(t, r.body); len(first) != 1 || first[0].Partition != po {
		t.Fatalf("unpinned consume got %+v; want one record of partition %d", first, po)
	}
	// The frozen owner timed out (in the pinned calls above, or in this
	// consume): the next unpinned consume tries the others first and does
	// not spend a forward timeout on it.
	r = nodes[front].timedDo("GET", "/v1/topics/frozen/consume?max=1", nil)
	if r.err != nil || r.status != http.StatusOK || r.elapsed >= budget {
		t.Fatalf("second unpinned consume: %d after %v (%v): %s; want 200 without waiting on the frozen owner", r.status, r.elapsed, r.err, r.body)
	}
	if m := decodeMessages(t, r.body); len(m) != 1 || m[0].Partition != po {
		t.Fatalf("second unpinned consume got %+v; want one record of partition %d", m, po)
	}

	nodes[victim].signal(syscall.SIGCONT)
	eventually(t, 30*time.Second, "the thawed owner serves its partition again", func() bool {
		r := nodes[front].timedDo("GET", fmt.Sprintf("/v1/topics/frozen/consume?partition=%d&max=10", pv), nil)
		return r.err == nil && r.status == http.StatusOK && len(decodeMessages(t, r.body)) > 0
	})
	r = nodes[front].timedDo("GET", fmt.Sprintf("/v1/topics/frozen/consume?partition=%d&offset=0&max=10", pv), nil)
	if r.status != http.StatusOK || len(decodeMessages(t, r.body)) != 3 {
		t.Fatalf("replay of the thawed partition: %d %s; want its 3 records", r.status, r.body)
	}
}

func decodeMessages(t *testing.T, body []byte) []client.Message {
	t.Helper()
	var env struct {
		Messages []client.Message `json:"messages"`
	}
	if err := json.Unmarshal(body, &env); err != nil {
		t.Fatalf("decoding %s: %v", body, err)
	}
	return env.Messages
}
