package e2e

import (
	"cmp"
	"context"
	"fmt"
	"math/rand"
	"net/http"
	"os"
	"slices"
	"strconv"
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
// CI runs a short version; NARAD_CHAOS_DURATION=10m runs a long one, and
// NARAD_CHAOS_SEED replays a run's choices (not its timing).
func TestChaos(t *testing.T) {
	runChaos(t, chaosPlan{
		short: 40 * time.Second,
		// Info: a failed run's report shows the moves planned and done.
		env: []string{"NARAD_LOG_LEVEL=info"},
		families: []chaosFamily{{
			// A short visibility timeout: a lease granted to a consume
			// whose answer died with a node comes back within the final
			// drain.
			parent: client.CreateTopicRequest{Name: "chaos", Partitions: 6, VisibilityTimeoutMs: 2000},
			children: []client.CreateTopicRequest{
				{Name: "chaos-copy", Parent: "chaos"},
				{Name: "chaos-late", Parent: "chaos", FanoutDelayMs: 500},
			},
		}},
	})
}

// chaosPlan is one chaos run: the topics under load and how nodes are
// disturbed. Every plan gets the same load (producers, consumers, the
// mover), the same SIGKILLs and the same ledger.
type chaosPlan struct {
	short    time.Duration // the run's length unless NARAD_CHAOS_DURATION says
	env      []string      // the nodes' extra settings
	families []chaosFamily
	// wipe: some disturbances also delete the killed node's data directory
	// (at least one per run). Only a topic whose every partition has
	// copies on a majority of nodes can keep its ledger through that.
	wipe bool
}

// chaosFamily is a parent topic produced to and consumed from throughout,
// and children fed by its fan-out, drained at the end: each keeps its own
// ledger of the parent's 202s.
type chaosFamily struct {
	parent   client.CreateTopicRequest
	children []client.CreateTopicRequest
	// pinned: records without a key name their partition (id modulo the
	// partitions), so a lost id says which partition lost it.
	pinned bool
}

// chaosRun is the state the load and the disturber share.
type chaosRun struct {
	t     *testing.T
	plan  chaosPlan
	nodes []*node

	mu       sync.Mutex
	down     int // index of the node currently killed, or -1
	nextID   int
	accepted []map[int]bool // per family
	consumed []map[int]int  // per family: what chaos-time consumers got
	past     map[string][]string
}

func runChaos(t *testing.T, plan chaosPlan) {
	if testing.Short() {
		t.Skip("kills processes")
	}
	duration := plan.short
	if v := os.Getenv("NARAD_CHAOS_DURATION"); v != "" {
		d, err := time.ParseDuration(v)
		if err != nil {
			t.Fatalf("NARAD_CHAOS_DURATION: %v", err)
		}
		duration = d
	}
	seed := time.Now().UnixNano()
	if v := os.Getenv("NARAD_CHAOS_SEED"); v != "" {
		s, err := strconv.ParseInt(v, 10, 64)
		if err != nil {
			t.Fatalf("NARAD_CHAOS_SEED: %v", err)
		}
		seed = s
	}
	// NARAD_CHAOS_NETWORK=wan runs the cluster on the slow network's
	// timings: elections take seconds, so more of the run happens with no
	// metastore leader (a flip or a confirmation unanswered).
	env := plan.env
	if v := os.Getenv("NARAD_CHAOS_NETWORK"); v != "" {
		env = append(slices.Clone(env), "NARAD_CLUSTER_NETWORK="+v)
	}
	t.Logf("chaos for %v, seed %d (NARAD_CHAOS_SEED=%d replays its choices), network settings %v",
		duration, seed, seed, cmp.Or(os.Getenv("NARAD_CHAOS_NETWORK"), "lan"))
	rng := rand.New(rand.NewSource(seed))
	run := &chaosRun{t: t, plan: plan, nodes: startCluster(t, 3, env...), down: -1, past: map[string][]string{}}
	nodes := run.nodes
	t.Cleanup(run.logHistoryOnFailure)
	ctx, cancel := context.WithTimeout(context.Background(), duration+5*time.Minute)
	defer cancel()
	for _, f := range plan.families {
		for _, c := range append([]client.CreateTopicRequest{f.parent}, f.children...) {
			if _, err := nodes[0].c.CreateTopic(ctx, c); err != nil {
				t.Fatalf("create %s: %v", c.Name, err)
			}
		}
		run.accepted = append(run.accepted, map[int]bool{})
		run.consumed = append(run.consumed, map[int]int{})
	}
	run.waitInSync("the topics created", "")

	cctx, stop := context.WithTimeout(ctx, duration)
	defer stop()
	var wg sync.WaitGroup
	for p := 0; p < 4; p++ {
		wg.Add(1)
		go func(r *rand.Rand) {
			defer wg.Done()
			run.produceLoop(cctx, r)
		}(rand.New(rand.NewSource(seed + int64(p))))
	}
	for c := 0; c < 2; c++ {
		wg.Add(1)
		go func(r *rand.Rand) {
			defer wg.Done()
			run.consumeLoop(cctx, r)
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
			if chaosDecommission(run.live(r), id, http.MethodPost) {
				toggles++
			}
			sleepFor(cctx, time.Duration(3000+r.Intn(3000))*time.Millisecond)
			chaosDecommission(run.live(r), id, http.MethodDelete)
		}
	}(rand.New(rand.NewSource(seed + 200)))
	kills, wipes := run.disturb(cctx, rng, duration)
	stop()
	wg.Wait()
	total := 0
	for _, a := range run.accepted {
		total += len(a)
	}
	t.Logf("%d SIGKILLs (%d of them with the data directory deleted), %d decommissions (each cancelled), %d records accepted",
		kills, wipes, toggles, total)
	// Calm: no node draining, every move done, every replica in sync,
	// before the ledger drains.
	for _, n := range nodes {
		eventually(t, 30*time.Second, "cancel the decommission of "+n.id, func() bool {
			return chaosDecommission(nodes[0], n.id, http.MethodDelete)
		})
	}
	run.waitNoMoves(90 * time.Second)
	run.waitInSync("the run", "")
	run.waitServing()
	completed := 0.0
	for _, n := range nodes {
		completed += max(n.metric("narad_moves_completed_total"), 0)
	}
	t.Logf("%v moves completed since the nodes' last restarts", completed)

	// The ledger: every 202 is still in the parent's log (a record
	// consumed before a disk was lost counts only once it is there), and
	// was delivered at least once — drain each parent (adding to what
	// chaos-time consumers got) and each child, through different nodes.
	for i, f := range plan.families {
		checkRetained(t, nodes, f.parent.Name, run.accepted[i])
		for id, c := range drain(t, nodes[1], f.parent.Name, 8) {
			run.consumed[i][id] += c
		}
		checkLedger(t, f.parent.Name, run.accepted[i], run.consumed[i])
		for j, c := range f.children {
			checkLedger(t, c.Name, run.accepted[i], drain(t, nodes[(2+j)%len(nodes)], c.Name, 6))
		}
	}
}

// replayLedger reads every partition of topic through n by offset (a
// replay: no lease, no queue effect) from its oldest offset until the
// partition answers nothing more, and counts the ids the log holds. It
// reads past the describe's high watermark (a describe may lag the log it
// describes) and says when the two differ.
func replayLedger(t *testing.T, n *node, topic string) (map[int]int, error) {
	t.Helper()
	ctx := ctxT(t)
	d, err := n.c.GetTopic(ctx, topic)
	if err != nil {
		return nil, fmt.Errorf("describe %s: %w", topic, err)
	}
	got := map[int]int{}
	for _, p := range d.PartitionStats {
		off := p.OldestOffset
		for {
			msgs, err := n.c.Consume(ctx, topic, client.ConsumeOptions{Partition: ptr(p.Index), Offset: ptr(off), Max: 1000})
			if err != nil {
				return nil, fmt.Errorf("replay %s/%d at %d through %s: %w", topic, p.Index, off, n.id, err)
			}
			if len(msgs) == 0 {
				break
			}
			for _, m := range msgs {
				got[payloadID(t, m)]++
				off = m.Offset + 1
			}
		}
		if off != p.HighWatermark {
			t.Logf("%s/%d through %s: the describe said high watermark %d, the replay ended at %d", topic, p.Index, n.id, p.HighWatermark, off)
		}
	}
	return got, nil
}

// checkRetained is the ledger of the parent's log: through every node,
// every record answered 202 is in it. A single-copy 202 may still be on
// its way from the ingress WAL to the partition, so the check waits (a
// bounded while) for the log to hold them all before it counts.
func checkRetained(t *testing.T, nodes []*node, topic string, accepted map[int]bool) {
	t.Helper()
	for _, n := range nodes {
		var got map[int]int
		var err error
		deadline := time.Now().Add(30 * time.Second)
		for ; time.Now().Before(deadline); time.Sleep(500 * time.Millisecond) {
			got, err = replayLedger(t, n, topic)
			if err == nil && holdsAll(got, accepted) {
				break
			}
		}
		if got == nil {
			t.Errorf("%s: no replay through %s answered: %v", topic, n.id, err)
			continue
		}
		checkLedger(t, topic+" (its log replayed through "+n.id+")", accepted, got)
	}
}

func holdsAll(got map[int]int, accepted map[int]bool) bool {
	for id := range accepted {
		if got[id] == 0 {
			return false
		}
	}
	return true
}

// live picks a node that is not the one killed.
func (run *chaosRun) live(r *rand.Rand) *node {
	run.mu.Lock()
	defer run.mu.Unlock()
	for {
		if i := r.Intn(len(run.nodes)); i != run.down {
			return run.nodes[i]
		}
	}
}

// produceLoop produces id-numbered records, one family after another,
// through live nodes, and remembers the ids answered 202.
func (run *chaosRun) produceLoop(ctx context.Context, r *rand.Rand) {
	for ctx.Err() == nil {
		run.mu.Lock()
		run.nextID++
		id := run.nextID
		run.mu.Unlock()
		fam := id % len(run.plan.families)
		f := run.plan.families[fam]
		opts := client.ProduceOptions{}
		switch {
		case id%3 == 0:
			opts.Key = ptr(fmt.Sprintf("k%d", id%11))
		case f.pinned:
			opts.Partition = ptr(id % f.parent.Partitions)
		}
		rctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		err := run.live(r).c.Produce(rctx, f.parent.Name, []byte(fmt.Sprintf("id-%d", id)), opts)
		cancel()
		if err == nil {
			run.mu.Lock()
			run.accepted[fam][id] = true
			run.mu.Unlock()
		}
	}
}

// consumeLoop consumes and acks from every family's parent in turn.
func (run *chaosRun) consumeLoop(ctx context.Context, r *rand.Rand) {
	for i := 0; ctx.Err() == nil; i++ {
		fam := i % len(run.plan.families)
		topic := run.plan.families[fam].parent.Name
		n := run.live(r)
		rctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		msgs, err := n.c.Consume(rctx, topic, client.ConsumeOptions{Max: 50, Wait: 300 * time.Millisecond})
		if err == nil && len(msgs) > 0 {
			hs := make([]string, 0, len(msgs))
			run.mu.Lock()
			for _, m := range msgs {
				b, _ := m.Bytes()
				var id int
				fmt.Sscanf(string(b), "id-%d", &id)
				run.consumed[fam][id]++
				hs = append(hs, m.ReceiptHandle)
			}
			run.mu.Unlock()
			n.c.AckBatch(rctx, topic, hs) // a failed ack only means a redelivery
		}
		cancel()
	}
}

// disturb SIGKILLs a random node every few seconds and restarts it (one
// at a time), until ctx ends; with plan.wipe some kills delete the data
// directory too. It returns the kills and, of them, the wipes.
func (run *chaosRun) disturb(ctx context.Context, rng *rand.Rand, duration time.Duration) (kills, wipes int) {
	start := time.Now()
	for ctx.Err() == nil {
		sleepFor(ctx, time.Duration(2000+rng.Intn(2000))*time.Millisecond)
		if ctx.Err() != nil {
			break
		}
		i := rng.Intn(len(run.nodes))
		wipe := run.plan.wipe && (rng.Intn(3) == 0 || wipes == 0 && time.Since(start) > duration/3)
		if wipe && !run.waitInSync("the disturbance before a wipe", "") {
			return kills, wipes
		}
		n := run.nodes[i]
		run.mu.Lock()
		run.down = i
		run.mu.Unlock()
		n.kill()
		run.keepLogs(n)
		kills++
		if wipe {
			wipes++
			if err := os.RemoveAll(n.dataDir()); err != nil {
				run.t.Fatal(err)
			}
			run.t.Logf("%v: %s SIGKILLed and its data directory deleted", time.Since(start).Round(time.Millisecond), n.id)
		}
		sleepFor(ctx, time.Duration(500+rng.Intn(2000))*time.Millisecond)
		n.restart()
		run.mu.Lock()
		run.down = -1
		run.mu.Unlock()
		if wipe {
			// One node disturbed at a time: the next disturbance waits
			// until the empty node holds every acknowledged record again.
			back := time.Now()
			if !run.waitNewDisk(n) || !run.waitInSync(n.id+" started empty", n.id) {
				return kills, wipes
			}
			run.t.Logf("%s, started empty, in every in-sync set %v after its restart", n.id, time.Since(back).Round(time.Millisecond))
		}
	}
	return kills, wipes
}

// keepLogs saves the logs of n's incarnation that just ended (a restart
// starts a new buffer) for the failure report.
func (run *chaosRun) keepLogs(n *node) {
	n.mu.Lock()
	logs := n.logs
	n.mu.Unlock()
	if logs != nil {
		run.mu.Lock()
		run.past[n.id] = append(run.past[n.id], logs.String())
		run.mu.Unlock()
	}
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
