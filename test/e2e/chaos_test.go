package e2e

import (
	"context"
	"fmt"
	"math/rand"
	"net/http"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/narad-io/narad/client"
)

// TestChaos kills and restarts random nodes of a 3-node cluster (SIGKILL,
// one at a time so the quorum stays) under produce, consume, fan-out and
// partition moves (a random node is decommissioned and the decommission
// cancelled again and again, so its partitions move away and back), and
// keeps a loss ledger: every record answered 202 must be consumed at least
// once from the parent and from each child.
//
// CI runs a short version; NARAD_CHAOS_DURATION=10m runs a long one.
func TestChaos(t *testing.T) {
	if testing.Short() {
		t.Skip("kills processes")
	}
	duration := 40 * time.Second
	if v := os.Getenv("NARAD_CHAOS_DURATION"); v != "" {
		d, err := time.ParseDuration(v)
		if err != nil {
			t.Fatalf("NARAD_CHAOS_DURATION: %v", err)
		}
		duration = d
	}
	seed := time.Now().UnixNano()
	t.Logf("chaos for %v, seed %d", duration, seed)
	rng := rand.New(rand.NewSource(seed))
	nodes := startCluster(t, 3)
	ctx, cancel := context.WithTimeout(context.Background(), duration+5*time.Minute)
	defer cancel()
	// A short visibility timeout: a lease granted to a consume whose answer
	// died with a node comes back within the final drain.
	if _, err := nodes[0].c.CreateTopic(ctx, client.CreateTopicRequest{Name: "chaos", Partitions: 6, VisibilityTimeoutMs: 2000}); err != nil {
		t.Fatal(err)
	}
	for _, c := range []client.CreateTopicRequest{{Name: "chaos-copy", Parent: "chaos"}, {Name: "chaos-late", Parent: "chaos", FanoutDelayMs: 500}} {
		if _, err := nodes[0].c.CreateTopic(ctx, c); err != nil {
			t.Fatal(err)
		}
	}

	var (
		mu       sync.Mutex
		down     = -1 // index of the node currently killed
		accepted = map[int]bool{}
		consumed = map[int]int{}
		nextID   int
	)
	live := func(r *rand.Rand) *node {
		mu.Lock()
		defer mu.Unlock()
		for {
			if i := r.Intn(len(nodes)); i != down {
				return nodes[i]
			}
		}
	}
	cctx, stop := context.WithTimeout(ctx, duration)
	defer stop()
	var wg sync.WaitGroup
	for p := 0; p < 4; p++ {
		wg.Add(1)
		go func(r *rand.Rand) {
			defer wg.Done()
			for cctx.Err() == nil {
				mu.Lock()
				nextID++
				id := nextID
				mu.Unlock()
				opts := client.ProduceOptions{}
				if id%3 == 0 {
					opts.Key = ptr(fmt.Sprintf("k%d", id%11))
				}
				rctx, cancel := context.WithTimeout(cctx, 5*time.Second)
				err := live(r).c.Produce(rctx, "chaos", []byte(fmt.Sprintf("id-%d", id)), opts)
				cancel()
				if err == nil {
					mu.Lock()
					accepted[id] = true
					mu.Unlock()
				}
			}
		}(rand.New(rand.NewSource(seed + int64(p))))
	}
	for c := 0; c < 2; c++ {
		wg.Add(1)
		go func(r *rand.Rand) {
			defer wg.Done()
			for cctx.Err() == nil {
				n := live(r)
				rctx, cancel := context.WithTimeout(cctx, 5*time.Second)
				msgs, err := n.c.Consume(rctx, "chaos", client.ConsumeOptions{Max: 50, Wait: 300 * time.Millisecond})
				if err == nil && len(msgs) > 0 {
					hs := make([]string, 0, len(msgs))
					mu.Lock()
					for _, m := range msgs {
						b, _ := m.Bytes()
						var id int
						fmt.Sscanf(string(b), "id-%d", &id)
						consumed[id]++
						hs = append(hs, m.ReceiptHandle)
					}
					mu.Unlock()
					n.c.AckBatch(rctx, "chaos", hs) // a failed ack only means a redelivery
				}
				cancel()
			}
		}(rand.New(rand.NewSource(seed + 100 + int64(c))))
	}
	// The mover: drain a random node, later cancel it (with 3 voters a
	// decommission never removes one, so the partitions come back).
	toggles := 0
	wg.Add(1)
	go func(r *rand.Rand) {
		defer wg.Done()
		for cctx.Err() == nil {
			sleepFor(cctx, time.Duration(3000+r.Intn(3000))*time.Millisecond)
			id := nodes[r.Intn(len(nodes))].id
			if chaosDecommission(live(r), id, http.MethodPost) {
				toggles++
			}
			sleepFor(cctx, time.Duration(3000+r.Intn(3000))*time.Millisecond)
			chaosDecommission(live(r), id, http.MethodDelete)
		}
	}(rand.New(rand.NewSource(seed + 200)))
	kills := 0
	for cctx.Err() == nil {
		sleepFor(cctx, time.Duration(2000+rng.Intn(2000))*time.Millisecond)
		if cctx.Err() != nil {
			break
		}
		i := rng.Intn(len(nodes))
		mu.Lock()
		down = i
		mu.Unlock()
		nodes[i].kill()
		kills++
		sleepFor(cctx, time.Duration(500+rng.Intn(2000))*time.Millisecond)
		nodes[i].restart()
		mu.Lock()
		down = -1
		mu.Unlock()
	}
	stop()
	wg.Wait()
	t.Logf("%d SIGKILLs, %d decommissions (each cancelled), %d records accepted", kills, toggles, len(accepted))
	// Calm: no node draining, every move done, before the ledger drains.
	for _, n := range nodes {
		eventually(t, 30*time.Second, "cancel the decommission of "+n.id, func() bool {
			return chaosDecommission(nodes[0], n.id, http.MethodDelete)
		})
	}
	eventually(t, 90*time.Second, "no move in flight", func() bool { return movesInFlight(nodes[0]) == 0 })
	completed := 0.0
	for _, n := range nodes {
		completed += max(n.metric("narad_moves_completed_total"), 0)
	}
	t.Logf("%v moves completed since the nodes' last restarts", completed)

	// The ledger: drain the parent (adding to what chaos-time consumers
	// got) and each child.
	for id, c := range drain(t, nodes[1], "chaos", 8) {
		consumed[id] += c
	}
	checkLedger(t, "chaos", accepted, consumed)
	checkLedger(t, "chaos-copy", accepted, drain(t, nodes[2], "chaos-copy", 6))
	checkLedger(t, "chaos-late", accepted, drain(t, nodes[0], "chaos-late", 6))
}

func sleepFor(ctx context.Context, d time.Duration) {
	select {
	case <-ctx.Done():
	case <-time.After(d):
	}
}

// chaosDecommission drains (POST) or undrains (DELETE) a member through a
// node that may be down: it reports whether the request was answered 200.
func chaosDecommission(via *node, id, method string) bool {
	req, err := http.NewRequest(method, via.url("/v1/cluster/members/"+id+"/decommission"), nil)
	if err != nil {
		return false
	}
	resp, err := (&http.Client{Timeout: 10 * time.Second}).Do(req)
	if err != nil {
		return false
	}
	resp.Body.Close()
	return resp.StatusCode == http.StatusOK
}
