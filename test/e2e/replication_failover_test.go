package e2e

import (
	"fmt"
	"testing"
	"time"

	"github.com/narad-io/narad/client"
)

// TestReplicatedFailoverWhenTheMetastoreLeaderDies: the node that leads
// both the metastore and a partition of an RF=3 topic is SIGKILLed and
// not restarted. The survivors elect a metastore leader first; its
// controller, which has heard from nobody yet, counts the dead partition
// leader's silence from its own first turn and elects an in-sync
// follower. The time from the kill to a produce the new leader answers is
// logged (the test asks only that it happens); every record answered 202
// before and after is then read back from the partition, with the message
// id produce answered (docs/concepts.md, "Message ids": stable across
// failover).
func TestReplicatedFailoverWhenTheMetastoreLeaderDies(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("kills processes")
	}
	nodes := startCluster(t, 3)
	createReplicatedN(t, nodes[0], "mrep", 3, 3)
	var raftLeader string
	eventually(t, 10*time.Second, "a metastore leader in the member list", func() bool {
		ms, err := nodes[0].c.Members(ctxT(t))
		for _, m := range ms {
			if m.Leader {
				raftLeader = m.ID
			}
		}
		return err == nil && raftLeader != ""
	})
	stats, _ := allPartitionStats(nodes[0], "mrep")
	part := -1
	for i, ps := range stats {
		if ps.OwnerNode == raftLeader {
			part = i
		}
	}
	if part < 0 {
		t.Fatalf("the metastore leader %s leads none of the partitions: %+v", raftLeader, stats)
	}
	victim, survivors := byID(nodes, raftLeader)
	led := newReplLedger(t, "mrep")
	led.into = &part
	for i := 0; i < 60; i++ {
		if !led.produce(survivors[i%2]) {
			t.Fatalf("produce with every replica up refused: %+v", led.refused)
		}
	}

	killed := time.Now()
	victim.kill()
	var took time.Duration
	eventually(t, 40*time.Second, "a new leader of partition "+fmt.Sprint(part)+" to take a produce", func() bool {
		if led.produce(survivors[0]) {
			took = time.Since(killed)
			return true
		}
		return false
	})
	t.Logf("the metastore and partition %d leader %s SIGKILLed; a produce taken by the new leader %v later (refusals meanwhile %v)",
		part, raftLeader, took.Round(time.Millisecond), led.refused)
	for i := 0; i < 60; i++ {
		if !led.produce(survivors[i%2]) {
			t.Errorf("produce %d after the takeover refused", i)
		}
	}

	// Read the partition back by offset through the other survivor.
	accepted := led.snapshot()
	seen := map[int]bool{}
	eventually(t, 30*time.Second, "every record answered 202 to be in the partition", func() bool {
		for off := uint64(0); ; {
			msgs, err := survivors[1].c.Consume(ctxT(t), "mrep", client.ConsumeOptions{Partition: &part, Offset: &off, Max: 1000})
			if err != nil || len(msgs) == 0 {
				break
			}
			for _, m := range msgs {
				b, _ := m.Bytes()
				var id int
				fmt.Sscanf(string(b), "id-%d", &id)
				if want := led.idOf(id); want != "" && m.ID != want {
					t.Fatalf("%s read back with id %q after the failover; produce answered %q", b, m.ID, want)
				}
				seen[id] = true
				off = m.Offset + 1
			}
		}
		for id := range accepted {
			if !seen[id] {
				return false
			}
		}
		return true
	})
}
