package e2e

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/narad-io/narad/client"
	"github.com/narad-io/narad/internal/storage"
)

// TestNetworkFaultSoak cycles two clusters of the netfault binary through
// every kind of network fault, each followed by a heal, while steady
// producers send to a three-copy and a single-copy topic on each:
//
//  1. slow links: every link 50–200 ms each way with 5% loss;
//  2. a partition leader cut from both its followers, while every node
//     still reaches the metastore leader;
//  3. the metastore leader cut from everyone;
//  4. a minority split: one node cut from the others;
//  5. a bridge: the metastore leader reaches one node only, the others
//     reach each other and that node;
//  6. flapping: the link between the metastore leader and one node cut
//     and healed every second;
//  7. one node cut from the others and SIGKILLed while cut off, started
//     again once the links heal.
//
// During a phase the producers send only through the nodes on the
// majority side of the fault. Per phase the test logs the produces sent
// after the phase's first 3 s (answered 202, refused by status) and the
// metastore's Raft terms, and fails unless at least 95% of them were
// answered 202. At the end every record answered 202 must be consumable,
// and the copies of every partition of the three-copy topics, read from
// the stopped nodes' disks, must hold the same records.
//
// Two clusters, because no one cluster.network passes every phase: at
// lan the slow links cost metastore elections and lapsed leases (62–94%
// of three-copy produces answered, docs/cluster.md), at wan a failover
// takes 7.5 s, more than the 3 s a phase is given. Phases 2 to 7 run on
// four lan nodes (four, so that a partition has copies off the metastore
// leader: on three nodes a partition leader cut from its followers is cut
// from the metastore leader too, which is phase 3 or 4). Phase 1 runs on
// both: the three wan nodes are held to the 95%, the lan nodes' share is
// logged and not asserted, since the product documents that lan is not
// made for such links.
//
// NARAD_NETSOAK_DURATION (5m: `make netchaos`) cycles through the phases
// for that long, 15 s each; unset, the test runs each phase once for 5 s.
func TestNetworkFaultSoak(t *testing.T) {
	if testing.Short() {
		t.Skip("runs clusters under network faults")
	}
	duration, faultFor := time.Duration(0), 5*time.Second
	if v := os.Getenv("NARAD_NETSOAK_DURATION"); v != "" {
		d, err := time.ParseDuration(v)
		if err != nil {
			t.Fatalf("NARAD_NETSOAK_DURATION: %v", err)
		}
		duration, faultFor = d, 15*time.Second
	}
	const every = 50 * time.Millisecond
	// Half the produces a phase's measured window should see: fewer means
	// the producer stalled.
	least := int((faultFor-3*time.Second)/every) / 2

	s := &soak{t: t, lan: startFaultCluster(t, 4, "lan"), wan: startFaultCluster(t, 3, "wan")}
	// Each cluster's topics are named after it, so that the log says
	// which cluster a line is about.
	for _, c := range []struct {
		fc        *faultCluster
		name      string
		producers *[]*steadyProducer
	}{{s.lan, "lan", &s.lanProducers}, {s.wan, "wan", &s.wanProducers}} {
		createReplicatedN(t, c.fc.nodes[0], c.name+"-triple", 4, 3)
		createReplicatedN(t, c.fc.nodes[0], c.name+"-single", 4, 1)
		*c.producers = []*steadyProducer{
			startProducer(t, c.name+"-triple", every, c.fc.nodes),
			startProducer(t, c.name+"-single", every, c.fc.nodes),
		}
	}

	begin := time.Now()
	phases := 0
	// Every kind at least once, then on until the duration is spent.
	for ; phases < 7 || time.Since(begin) < duration; phases++ {
		s.run(phases/7, phases%7+1, faultFor, least)
	}
	t.Logf("%d phases in %v", phases, time.Since(begin).Round(time.Second))

	for _, p := range append(slices.Clone(s.lanProducers), s.wanProducers...) {
		p.finish()
	}
	s.lanProducers[0].checkConsumable(s.lan.nodes[1])
	s.lanProducers[1].checkConsumable(s.lan.nodes[2])
	s.wanProducers[0].checkConsumable(s.wan.nodes[1])
	s.wanProducers[1].checkConsumable(s.wan.nodes[2])
	for _, c := range []struct {
		fc    *faultCluster
		topic string
	}{{s.lan, "lan-triple"}, {s.wan, "wan-triple"}} {
		s.healed(c.fc)
		if divergent := copiesDiverge(t, c.fc.nodes, c.topic); divergent > 0 {
			t.Errorf("%d partitions of %s hold copies that differ", divergent, c.topic)
		}
	}
}

// soak is TestNetworkFaultSoak's two clusters and their producers
// ([0]: the three-copy topic, [1]: the single-copy one).
type soak struct {
	t                          *testing.T
	lan, wan                   *faultCluster
	lanProducers, wanProducers []*steadyProducer
}

// fault is one phase's fault on the lan cluster.
type fault struct {
	name     string
	rule     func(from, to int) linkRule
	majority []int
	// during runs every 100 ms while the fault lasts (flapping, a kill).
	during func(elapsed time.Duration)
	// afterHeal runs once every link is healthy again (a restart).
	afterHeal func()
}

// cutBetween is the rule that cuts every link between a node of one set
// and a node of the other, both ways.
func cutBetween(one, other []int) func(from, to int) linkRule {
	return func(from, to int) linkRule {
		return linkRule{Cut: slices.Contains(one, from) && slices.Contains(other, to) ||
			slices.Contains(other, from) && slices.Contains(one, to)}
	}
}

// others is every index of n nodes except those given.
func others(n int, except ...int) []int {
	var out []int
	for i := range n {
		if !slices.Contains(except, i) {
			out = append(out, i)
		}
	}
	return out
}

// plan builds phase kind (2 to 7) of cycle on the lan cluster as it is
// now: the nodes each fault picks depend on who leads the metastore, and
// rotate with the cycle so that long runs fault different nodes.
func (s *soak) plan(cycle, kind int) fault {
	t, nodes := s.t, s.lan.nodes
	size := len(nodes)
	meta := leaderIndex(t, nodes)
	// x: a node other than the metastore leader, a different one each
	// cycle.
	x := others(size, meta)[cycle%(size-1)]
	switch kind {
	case 2:
		stats, _ := allPartitionStats(nodes[meta], "lan-triple")
		part := slices.IndexFunc(stats, func(p client.PartitionStats) bool {
			return p.OwnerNode != "" && !slices.Contains(p.Replicas, nodes[meta].id)
		})
		if part < 0 {
			t.Fatalf("every partition of lan-triple has a copy on the metastore leader %s: %+v", nodes[meta].id, stats)
		}
		index := func(id string) int { return slices.IndexFunc(nodes, func(n *node) bool { return n.id == id }) }
		leader := index(stats[part].OwnerNode)
		var followers []int
		for _, id := range stats[part].Replicas {
			if i := index(id); i != leader {
				followers = append(followers, i)
			}
		}
		return fault{
			name: fmt.Sprintf("partition %d's leader %s cut from its followers %v (%s leads the metastore)",
				part, nodes[leader].id, ids(nodes, followers), nodes[meta].id),
			rule: cutBetween([]int{leader}, followers),
			// Only the metastore leader reaches every partition leader.
			majority: []int{meta},
		}
	case 3:
		return fault{
			name:     fmt.Sprintf("metastore leader %s cut from everyone", nodes[meta].id),
			rule:     cutBetween([]int{meta}, others(size, meta)),
			majority: others(size, meta),
		}
	case 4:
		return fault{
			name:     fmt.Sprintf("%s cut from the others (%s leads the metastore)", nodes[x].id, nodes[meta].id),
			rule:     cutBetween([]int{x}, others(size, x)),
			majority: others(size, x),
		}
	case 5:
		// The metastore leader keeps a link to x only: two of four, no
		// quorum, while x keeps hearing it.
		return fault{
			name:     fmt.Sprintf("bridge: metastore leader %s reaches only %s", nodes[meta].id, nodes[x].id),
			rule:     cutBetween([]int{meta}, others(size, meta, x)),
			majority: others(size, meta),
		}
	case 6:
		flap := cutBetween([]int{meta}, []int{x})
		cut := true
		return fault{
			name:     fmt.Sprintf("flapping: the link %s–%s cut and healed every second", nodes[meta].id, nodes[x].id),
			rule:     flap,
			majority: others(size, x),
			during: func(elapsed time.Duration) {
				if now := int(elapsed/time.Second)%2 == 0; now != cut {
					cut = now
					if cut {
						s.lan.set(flap)
					} else {
						s.lan.set(everyLink(linkRule{}))
					}
				}
			},
		}
	case 7:
		// Every node in turn, the metastore leader included.
		v := cycle % size
		killed := false
		return fault{
			name:     fmt.Sprintf("%s cut from the others and SIGKILLed 2 s later (%s leads the metastore)", nodes[v].id, nodes[meta].id),
			rule:     cutBetween([]int{v}, others(size, v)),
			majority: others(size, v),
			during: func(elapsed time.Duration) {
				// After 2 s the node has fenced itself (1.5 s lease):
				// the kill finds it cut off and serving nothing.
				if !killed && elapsed >= 2*time.Second {
					killed = true
					nodes[v].kill()
				}
			},
			afterHeal: func() { nodes[v].restart() },
		}
	}
	panic(fmt.Sprintf("no fault phase %d", kind))
}

func ids(nodes []*node, idx []int) []string {
	var out []string
	for _, i := range idx {
		out = append(out, nodes[i].id)
	}
	return out
}

func pick(nodes []*node, idx []int) []*node {
	var out []*node
	for _, i := range idx {
		out = append(out, nodes[i])
	}
	return out
}

// run runs one phase: the fault for faultFor with the producers aimed at
// its majority, then the heal, then the phase's report and checks.
func (s *soak) run(cycle, kind int, faultFor time.Duration, least int) {
	t := s.t
	var f fault
	if kind == 1 {
		f = fault{name: fmt.Sprintf("slow links %+v on every link of both clusters", slowLink), rule: everyLink(slowLink),
			majority: others(len(s.lan.nodes))}
	} else {
		f = s.plan(cycle, kind)
	}
	majority := pick(s.lan.nodes, f.majority)
	for _, p := range s.lanProducers {
		p.targets.Store(&majority)
	}
	lanBefore, wanBefore := raftTerms(s.lan.nodes), raftTerms(s.wan.nodes)
	leaders := partitionLeaders(s.lan.nodes[0], "lan-triple")
	start := time.Now()
	s.lan.set(f.rule)
	if kind == 1 {
		s.wan.set(f.rule)
	}
	for time.Since(start) < faultFor {
		if f.during != nil {
			f.during(time.Since(start))
		}
		time.Sleep(100 * time.Millisecond)
	}
	end := time.Now()
	lanAfter, wanAfter := raftTerms(s.lan.nodes), raftTerms(s.wan.nodes)
	s.lan.set(everyLink(linkRule{}))
	s.wan.set(everyLink(linkRule{}))
	all := s.lan.nodes
	for _, p := range s.lanProducers {
		p.targets.Store(&all)
	}
	healing := time.Now()
	if f.afterHeal != nil {
		f.afterHeal()
	}
	s.healed(s.lan)
	if kind == 1 {
		s.healed(s.wan)
	}

	for _, p := range append(slices.Clone(s.lanProducers), s.wanProducers...) {
		p.settle(end)
	}
	when := fmt.Sprintf("in phase %d (cycle %d) after its first 3 s", kind, cycle+1)
	t.Logf("phase %d (cycle %d): %s for %v; lan Raft terms %v -> %v; lan-triple's leaders before it %v; healed %v after the links",
		kind, cycle+1, f.name, faultFor, lanBefore, lanAfter, leaders, time.Since(healing).Round(100*time.Millisecond))
	if kind == 1 {
		t.Logf("phase 1 (cycle %d): wan Raft terms %v -> %v", cycle+1, wanBefore, wanAfter)
		for _, p := range s.wanProducers {
			p.requireAnswered(start.Add(3*time.Second), end, least, when+" (wan)")
		}
		// lan under these links: measured, not asserted (see the test's
		// comment).
		for _, p := range s.lanProducers {
			ok, total, refused := p.tally(start.Add(3*time.Second), end)
			t.Logf("%s: %d of %d produces answered 202 %s (lan, not asserted); the others by status: %v",
				p.topic, ok, total, when, refused)
		}
		return
	}
	for _, p := range s.lanProducers {
		p.requireAnswered(start.Add(3*time.Second), end, least, when)
	}
}

// partitionLeaders is the leader of each partition of topic as n
// describes it ("?" when n does not answer).
func partitionLeaders(n *node, topic string) []string {
	stats, ok := allPartitionStats(n, topic)
	if !ok {
		return []string{"?"}
	}
	out := make([]string, len(stats))
	for i, p := range stats {
		out[i] = p.OwnerNode
	}
	return out
}

// healed waits until every node of fc describes every partition of its
// three-copy topic with a leader and every copy in sync.
func (s *soak) healed(fc *faultCluster) {
	s.t.Helper()
	topic := "lan-triple"
	if fc == s.wan {
		topic = "wan-triple"
	}
	// The last describe that fell short, for the report of a heal that
	// never completes.
	var last string
	defer func() {
		if s.t.Failed() && last != "" {
			s.t.Logf("%s, last described short of in sync: %s", topic, last)
		}
	}()
	eventually(s.t, time.Minute, "every copy of "+topic+" in sync after the heal", func() bool {
		for _, n := range fc.nodes {
			ps, ok := allPartitionStats(n, topic)
			last = fmt.Sprintf("through %s: %+v", n.id, ps)
			if !ok || len(ps) == 0 {
				return false
			}
			for _, p := range ps {
				if p.OwnerNode == "" || len(p.Replicas) != 3 || len(p.InSync) != 3 {
					return false
				}
			}
		}
		return true
	})
}

// copiesDiverge SIGKILLs every node of nodes, all at once so that no
// failover runs while they stop, and compares the copies of each
// partition of topic, read from their disks: every record below the
// shortest copy's end must be the same in each (offset, key, payload,
// headers, commit time, message id), and no copy may end below the high
// watermark described before the stop (a record committed and missing
// from a copy). A held log's records are on disk when it acknowledges
// them, so a SIGKILL leaves the copies as they were; a SIGTERM of every
// node at once once left a node running 30 s later, which this check has
// no need to wait for. It logs what differs and returns the number of
// partitions whose copies do not agree.
func copiesDiverge(t *testing.T, nodes []*node, topic string) int {
	t.Helper()
	stats, ok := allPartitionStats(nodes[0], topic)
	if !ok {
		t.Fatalf("describe %s through %s failed", topic, nodes[0].id)
	}
	var wg sync.WaitGroup
	for _, n := range nodes {
		wg.Add(1)
		go func() { defer wg.Done(); n.kill() }()
	}
	wg.Wait()
	byID := map[string]*node{}
	for _, n := range nodes {
		byID[n.id] = n
	}
	divergent := 0
	for _, p := range stats {
		copies := map[string][]storage.Record{}
		for _, id := range p.Replicas {
			copies[id] = readCopy(t, filepath.Join(byID[id].dir, "data", "topics", topic, storage.PartitionDirName(p.Index)))
		}
		bad := false
		first := p.Replicas[0]
		for _, id := range p.Replicas {
			recs := copies[id]
			if end := copyEnd(recs); end < p.HighWatermark {
				t.Errorf("%s/%d: %s's copy ends at %d, below the high watermark %d", topic, p.Index, id, end, p.HighWatermark)
				bad = true
			}
			if id == first {
				continue
			}
			if at, differ := firstDifference(copies[first], recs); differ {
				t.Errorf("%s/%d: the copies on %s and %s differ at offset %d", topic, p.Index, first, id, at)
				bad = true
			}
		}
		var ends []string
		for _, id := range p.Replicas {
			ends = append(ends, fmt.Sprintf("%s:%d", id, copyEnd(copies[id])))
		}
		t.Logf("%s/%d: high watermark %d, copies end at %v", topic, p.Index, p.HighWatermark, ends)
		if bad {
			divergent++
		}
	}
	return divergent
}

// readCopy reads every record of the held log in dir, up to its local
// end (released or not).
func readCopy(t *testing.T, dir string) []storage.Record {
	t.Helper()
	l, err := storage.Open(dir, storage.Options{Held: true})
	if err != nil {
		t.Fatalf("open the copy in %s: %v", dir, err)
	}
	defer l.Close()
	var out []storage.Record
	for from := l.Stats().OldestOffset; from < l.End(); {
		recs, err := l.ReadTo(from, 1000, 1<<24)
		if err != nil {
			t.Fatalf("read the copy in %s at %d: %v", dir, from, err)
		}
		if len(recs) == 0 {
			break
		}
		for _, r := range recs {
			r.Key, r.Payload = bytes.Clone(r.Key), bytes.Clone(r.Payload)
			out = append(out, r)
		}
		from = recs[len(recs)-1].Offset + 1
	}
	return out
}

func copyEnd(recs []storage.Record) uint64 {
	if len(recs) == 0 {
		return 0
	}
	return recs[len(recs)-1].Offset + 1
}

// firstDifference compares two copies over the offsets both hold.
func firstDifference(a, b []storage.Record) (uint64, bool) {
	for i := range min(len(a), len(b)) {
		x, y := a[i], b[i]
		if x.Offset != y.Offset || !bytes.Equal(x.Key, y.Key) || !bytes.Equal(x.Payload, y.Payload) ||
			x.CommittedAt != y.CommittedAt || x.Origin != y.Origin || x.Seq != y.Seq ||
			fmt.Sprint(x.Headers) != fmt.Sprint(y.Headers) {
			return min(x.Offset, y.Offset), true
		}
	}
	return 0, false
}
