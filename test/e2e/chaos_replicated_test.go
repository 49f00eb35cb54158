package e2e

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/narad-io/narad/client"
)

// TestChaosReplicated is the chaos run on a replicated topic (three
// copies of each of its partitions on the three nodes): the same load,
// SIGKILLs, moves and ledger as TestChaos, and at least once per run the
// killed node's data directory is deleted and it starts empty. A
// replicated topic survives the loss of any minority of its replicas,
// disks included (docs/replication.md), so the disturber keeps to one node
// at a time: before a wipe every replica is in sync, and after one the
// wiped node is back in every in-sync set before anything else is
// disturbed. A single-copy topic cannot keep a ledger through a wiped
// disk, so this run has none (TestChaos keeps them).
func TestChaosReplicated(t *testing.T) {
	runChaos(t, chaosPlan{
		short: 25 * time.Second,
		// The replication engine's decisions (elections, truncations,
		// in-sync changes) are logged at info: a loss's report needs them.
		env: []string{"NARAD_LOG_LEVEL=info"},
		families: []chaosFamily{{
			parent: client.CreateTopicRequest{Name: "chaos-rep", Partitions: 4, VisibilityTimeoutMs: 2000, ReplicationFactor: 3},
			pinned: true,
		}},
		wipe: true,
	})
}

// dataDir is the directory a wipe deletes: everything the node stored
// (metastore, ingress, partitions, its id file).
func (n *node) dataDir() string { return filepath.Join(n.dir, "data") }

// waitInSync waits until a live node describes every partition of every
// replicated family with a leader and its in-sync set equal to its
// replicas (including id, when not ""); false (and the test failed) when
// that does not happen within a minute. Single-copy families have nothing
// to wait for.
func (run *chaosRun) waitInSync(after, id string) bool {
	run.t.Helper()
	var last []client.PartitionStats
	deadline := time.Now().Add(time.Minute)
	for time.Now().Before(deadline) {
		ok := true
		for _, f := range run.plan.families {
			if f.parent.ReplicationFactor < 2 {
				continue
			}
			ps, good := run.describeReplicated(f.parent, id)
			last = ps
			if !good {
				ok = false
				break
			}
		}
		if ok {
			return true
		}
		time.Sleep(100 * time.Millisecond)
	}
	run.t.Errorf("after %s: the replicas not all in sync within a minute; last described: %+v", after, last)
	return false
}

// waitNoMoves waits until no move is in flight, as n1 sees it; on a
// timeout the test fails naming the moves still in flight, so a stuck one
// can be looked up in the nodes' logs.
func (run *chaosRun) waitNoMoves(within time.Duration) {
	run.t.Helper()
	var last []moveView
	deadline := time.Now().Add(within)
	for time.Now().Before(deadline) {
		list, ok := moves(run.nodes[0])
		if ok && len(list) == 0 {
			return
		}
		if ok {
			last = list
		}
		time.Sleep(100 * time.Millisecond)
	}
	run.t.Fatalf("moves still in flight after %v: %+v", within, last)
}

// waitNewDisk waits until the controller has recorded the disk n started
// on after its wipe (datadir's disk id, read from n's new data directory;
// the controller logs the replacement, naming both). Until then the
// metastore may still count n's lost copies as in sync, and a describe
// naming n in every in-sync set proves nothing.
func (run *chaosRun) waitNewDisk(n *node) bool {
	run.t.Helper()
	var disk string
	var want *regexp.Regexp
	deadline := time.Now().Add(30 * time.Second)
	for ; time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		if want == nil {
			b, err := os.ReadFile(filepath.Join(n.dataDir(), "disk-id"))
			if err != nil {
				continue
			}
			disk = strings.TrimSpace(string(b))
			want = regexp.MustCompile(`member came back on a new disk.* member=` + regexp.QuoteMeta(n.id) + ` .*disk=` + regexp.QuoteMeta(disk))
		}
		for _, m := range run.nodes {
			m.mu.Lock()
			logs := m.logs
			m.mu.Unlock()
			if logs != nil && want.MatchString(logs.String()) {
				return true
			}
		}
	}
	run.t.Errorf("%s started on a new disk (%q) and no controller recorded it within 30s", n.id, disk)
	return false
}

// waitServing waits until every partition of every replicated family
// answers a replay through every node: the calm before the ledger drains
// (a node fenced a moment ago answers 503 until it hears the cluster).
func (run *chaosRun) waitServing() {
	run.t.Helper()
	for _, f := range run.plan.families {
		if f.parent.ReplicationFactor < 2 {
			continue
		}
		for _, n := range run.nodes {
			for p := 0; p < f.parent.Partitions; p++ {
				eventually(run.t, time.Minute, fmt.Sprintf("%s/%d to answer a replay through %s", f.parent.Name, p, n.id), func() bool {
					ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
					defer cancel()
					_, err := n.c.Consume(ctx, f.parent.Name, client.ConsumeOptions{Partition: ptr(p), Offset: ptr(uint64(0)), Max: 1})
					return err == nil
				})
			}
		}
	}
}

// describeReplicated describes topic through a node that is up and says
// whether every partition has a leader and every replica in sync.
func (run *chaosRun) describeReplicated(topic client.CreateTopicRequest, id string) ([]client.PartitionStats, bool) {
	run.mu.Lock()
	down := run.down
	run.mu.Unlock()
	for i, n := range run.nodes {
		if i == down {
			continue
		}
		ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
		d, err := n.c.GetTopic(ctx, topic.Name)
		cancel()
		if err != nil {
			continue
		}
		if len(d.PartitionStats) != topic.Partitions {
			return d.PartitionStats, false
		}
		for _, p := range d.PartitionStats {
			if p.OwnerNode == "" || len(p.Replicas) != topic.ReplicationFactor || len(p.InSync) != len(p.Replicas) ||
				id != "" && !slices.Contains(p.InSync, id) {
				return d.PartitionStats, false
			}
		}
		return d.PartitionStats, true
	}
	return nil, false
}

// chaosLogLine is what a failed run's report keeps of the nodes' logs:
// the brokers' and the controller's warnings and errors, and the
// replication engine's and the movers' decisions; not Raft's connection
// noise.
var (
	chaosLogLine  = regexp.MustCompile(`level=(WARN|ERROR)|(?i)elect|epoch|truncat|in.sync|fenc|follow|replica|ready|move|freeze|flip`)
	chaosLogNoise = regexp.MustCompile(`component=raft|PLAINTEXT|msg=request`)
)

// logHistoryOnFailure logs, when the test failed, the relevant lines of
// every incarnation of every node (the harness's cleanup logs only the
// last one's tail).
func (run *chaosRun) logHistoryOnFailure() {
	if !run.t.Failed() {
		return
	}
	for _, n := range run.nodes {
		run.keepLogs(n)
	}
	run.mu.Lock()
	defer run.mu.Unlock()
	for _, n := range run.nodes {
		for i, logs := range run.past[n.id] {
			var keep []string
			for _, l := range strings.Split(logs, "\n") {
				if chaosLogLine.MatchString(l) && !chaosLogNoise.MatchString(l) {
					keep = append(keep, l)
				}
			}
			if len(keep) > 150 {
				keep = append([]string{fmt.Sprintf("… %d earlier lines", len(keep)-150)}, keep[len(keep)-150:]...)
			}
			run.t.Logf("%s, incarnation %d, relevant lines:\n%s", n.id, i+1, strings.Join(keep, "\n"))
		}
	}
}
