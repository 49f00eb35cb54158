package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/narad-io/narad/client"
)

// drain consumes and acks a topic until it stays empty, returning how many
// times each payload id was delivered.
func drain(t *testing.T, n *node, topic string, quiet int) map[int]int {
	t.Helper()
	ctx := ctxT(t)
	got := map[int]int{}
	empties := 0
	for empties < quiet {
		msgs, err := n.c.Consume(ctx, topic, client.ConsumeOptions{Wait: 500 * time.Millisecond, Max: 1000})
		if err != nil {
			t.Fatal(err)
		}
		if len(msgs) == 0 {
			empties++
			continue
		}
		empties = 0
		handles := make([]string, len(msgs))
		for i, m := range msgs {
			b, _ := m.Bytes()
			var id int
			if _, err := fmt.Sscanf(string(b), "id-%d", &id); err != nil {
				t.Fatalf("%s: unexpected payload %q", topic, b)
			}
			got[id]++
			handles[i] = m.ReceiptHandle
		}
		if _, err := n.c.AckBatch(ctx, topic, handles); err != nil {
			t.Fatal(err)
		}
	}
	return got
}

// TestFanoutSurvivesSIGKILL: a parent produced to while fanned out to three
// children (one of them a delay child) is SIGKILLed mid-stream. After the
// restart every accepted parent record is in every child at least once.
func TestFanoutSurvivesSIGKILL(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("kills processes")
	}
	n := startNode(t)
	ctx := ctxT(t)
	if _, err := n.c.CreateTopic(ctx, client.CreateTopicRequest{Name: "src", Partitions: 3}); err != nil {
		t.Fatal(err)
	}
	for _, c := range []client.CreateTopicRequest{
		{Name: "copy-a", Parent: "src"},
		{Name: "copy-b", Parent: "src", Partitions: 5},
		{Name: "copy-late", Parent: "src", FanoutDelayMs: 700},
	} {
		if _, err := n.c.CreateTopic(ctx, c); err != nil {
			t.Fatalf("create child %s: %v", c.Name, err)
		}
	}
	var (
		mu       sync.Mutex
		accepted = map[int]bool{}
		nextID   atomic.Int64
		wg       sync.WaitGroup
	)
	pctx, stop := context.WithCancel(ctx)
	for p := 0; p < 6; p++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for pctx.Err() == nil {
				id := int(nextID.Add(1))
				opts := client.ProduceOptions{}
				if id%3 == 0 {
					opts.Key = ptr(fmt.Sprintf("k%d", id%17))
				}
				if n.c.Produce(pctx, "src", []byte(fmt.Sprintf("id-%d", id)), opts) == nil {
					mu.Lock()
					accepted[id] = true
					mu.Unlock()
				}
			}
		}()
	}
	killAt := 400 + rand.Intn(400)
	eventually(t, 60*time.Second, "records accepted", func() bool {
		mu.Lock()
		defer mu.Unlock()
		return len(accepted) >= killAt
	})
	n.kill()
	stop()
	wg.Wait()
	n.restart()
	for _, topic := range []string{"src", "copy-a", "copy-b", "copy-late"} {
		got := drain(t, n, topic, 4)
		checkLedger(t, topic, accepted, got)
	}
}

// TestChildrenListingAndDetach exercises the children API end to end.
func TestChildrenListingAndDetach(t *testing.T) {
	n := startNode(t)
	ctx := ctxT(t)
	n.c.CreateTopic(ctx, client.CreateTopicRequest{Name: "par", Partitions: 2})
	n.c.CreateTopic(ctx, client.CreateTopicRequest{Name: "kid", Partitions: 2})
	if _, err := n.c.Attach(ctx, "par", client.AttachRequest{Child: "kid"}); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 10; i++ {
		n.c.Produce(ctx, "par", []byte(fmt.Sprintf("id-%d", i)), client.ProduceOptions{})
	}
	type listing struct {
		Parent   string `json:"parent"`
		Children []struct {
			Name        string `json:"name"`
			AttachEpoch string `json:"attach_epoch"`
			LagMessages uint64 `json:"lag_messages"`
			LagComplete bool   `json:"lag_complete"`
		} `json:"children"`
	}
	list := func() listing {
		status, body, _ := n.do("GET", "/v1/topics/par/children", "", nil)
		var l listing
		if status != 200 || json.Unmarshal(body, &l) != nil {
			t.Fatalf("children listing: %d %s", status, body)
		}
		return l
	}
	eventually(t, 10*time.Second, "lag 0 after copying", func() bool {
		l := list()
		return len(l.Children) == 1 && l.Children[0].Name == "kid" && len(l.Children[0].AttachEpoch) == 16 &&
			l.Children[0].LagMessages == 0 && l.Children[0].LagComplete
	})
	if got := drain(t, n, "kid", 2); len(got) != 10 {
		t.Fatalf("child got %d records, want 10", len(got))
	}
	if status, _, _ := n.do("POST", "/v1/topics/kid/produce", "", []byte("direct")); status != 202 {
		t.Fatalf("a plain (non-delay) child accepts direct produce; got %d", status)
	}
	if err := n.c.Detach(ctx, "par", "kid"); err != nil {
		t.Fatal(err)
	}
	if l := list(); len(l.Children) != 0 {
		t.Fatalf("after detach: %+v", l)
	}
	d, _ := n.c.GetTopic(ctx, "kid")
	if d.Role != "standalone" || d.Parent != "" {
		t.Fatalf("detached child: role %q parent %q", d.Role, d.Parent)
	}
}
