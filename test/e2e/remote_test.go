package e2e

import (
	"bytes"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/narad-io/narad/client"
)

// TestRemoteChildAcrossClusters: a parent on one cluster copies into a
// topic of another (docs/concepts.md, "Fan-out children") through that
// cluster's batch produce, with a user that may only produce there. The
// source is SIGKILLed under produce and the target is stopped for a while:
// every record the source accepted reaches the target (duplicates allowed, no
// loss), the link shows "retrying" while the target is away, and the
// credentials never show.
func TestRemoteChildAcrossClusters(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("restarts processes")
	}
	src := startNode(t)
	dst := startSecureNode(t)
	dst.c = client.New("http://"+dst.http, "admin", rootPass, &http.Client{Timeout: 30 * time.Second})
	ctx := ctxT(t)
	root := func(method, path string, body any) biAnswer {
		return asUser(t, dst, "admin", rootPass, method, path, body)
	}
	biWantStatus(t, root("POST", "/v1/topics", map[string]any{"name": "mirror", "partitions": 2}), http.StatusCreated)
	biWantStatus(t, root("POST", "/v1/users", userBody{Username: "replicator", Password: "replicator-pw",
		Grants: []grant{{"produce", []string{"mirror"}}}}), http.StatusCreated)

	if _, err := src.c.CreateTopic(ctx, client.CreateTopicRequest{Name: "orders", Partitions: 3}); err != nil {
		t.Fatal(err)
	}
	attach := fmt.Sprintf(`{"child":"orders-dr","remote":{"url":"http://%s","topic":"mirror","username":"replicator","password":"replicator-pw"}}`, dst.http)
	a := biDo(t, src, "POST", "/v1/topics/orders/children", "application/json", []byte(attach))
	biWantStatus(t, a, http.StatusOK)
	// Credentials over plain http:// are allowed (rule: credentials never
	// shown, internal/fanout) but said aloud: in the answer and in the
	// node's log.
	if !bytes.Contains(a.body, []byte(`"warnings":["remote.url http://`)) || !bytes.Contains(a.body, []byte(`"child":"orders-dr"`)) {
		t.Fatalf("attach answer: %s", a.body)
	}
	eventually(t, 20*time.Second, "the plaintext warning in the log", func() bool {
		return strings.Contains(src.logs.String(), "credentials will cross the network in plaintext")
	})

	var mu sync.Mutex
	accepted := map[int]bool{}
	produce := func(from, to int) {
		for i := from; i < to; i++ {
			key := fmt.Sprintf("k%d", i%7)
			if err := src.c.Produce(ctx, "orders", []byte(fmt.Sprintf("id-%d", i)), client.ProduceOptions{Key: &key}); err == nil {
				mu.Lock()
				accepted[i] = true
				mu.Unlock()
			}
		}
	}
	produce(0, 150)
	src.kill() // mid-stream: cursors and the ingress WAL recover from disk
	src.start()
	produce(150, 250)

	// The target goes away: the link says so and holds its position.
	dst.stop()
	produce(250, 300)
	eventually(t, 20*time.Second, "the link reports retrying", func() bool {
		a := biDo(t, src, "GET", "/v1/topics/orders/children", "", nil)
		return bytes.Contains(a.body, []byte(`"state":"retrying"`)) && bytes.Contains(a.body, []byte(`"state_reason":"partition `))
	})
	if src.metric(`narad_remote_link_state{child="orders-dr",parent="orders",state="retrying"}`) != 1 {
		t.Errorf("narad_remote_link_state does not say retrying")
	}
	dst.start()
	eventually(t, 30*time.Second, "the link running and caught up", func() bool {
		a := biDo(t, src, "GET", "/v1/topics/orders/children", "", nil)
		return bytes.Contains(a.body, []byte(`"state":"running"`)) && bytes.Contains(a.body, []byte(`"lag_messages":0,`))
	})
	list := biDo(t, src, "GET", "/v1/topics/orders/children", "", nil)
	if bytes.Contains(list.body, []byte("replicator-pw")) || bytes.Contains(list.body, []byte(`"username"`)) {
		t.Fatalf("the listing shows credentials: %s", list.body)
	}
	if bytes.Contains([]byte(src.logs.String()), []byte("replicator-pw")) {
		t.Fatal("the source logged the target's password")
	}
	checkLedger(t, "mirror", accepted, drain(t, dst, "mirror", 4))
}
