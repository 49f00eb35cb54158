package e2e

import (
	"fmt"
	"testing"
	"time"

	"github.com/narad-io/narad/client"
)

// TestClusterRecreatedTopicGetsNoRecordsOfTheDeletedOne: records accepted
// by a node while the partition's owner is down wait in that node's WAL.
// If the topic is deleted and re-created meanwhile (another life of the
// name, maybe another user's), those records belong to the deleted topic:
// they are discarded once the leader confirms, and the new topic holds only
// its own records.
func TestClusterRecreatedTopicGetsNoRecordsOfTheDeletedOne(t *testing.T) {
	if testing.Short() {
		t.Skip("restarts processes")
	}
	nodes := startCluster(t, 3)
	ctx := ctxT(t)
	via := nodes[0]
	topic, ownerID := "", ""
	for i := 0; i < 30 && topic == ""; i++ {
		name := fmt.Sprintf("reborn-%d", i)
		if _, err := via.c.CreateTopic(ctx, client.CreateTopicRequest{Name: name, Partitions: 1}); err != nil {
			t.Fatal(err)
		}
		d, err := via.c.GetTopic(ctx, name)
		if err != nil {
			t.Fatal(err)
		}
		if o := d.PartitionStats[0].OwnerNode; o != "" && o != via.id {
			topic, ownerID = name, o
		}
	}
	if topic == "" {
		t.Fatal("no topic placed away from the producing node in 30 tries")
	}
	var owner *node
	for _, n := range nodes {
		if n.id == ownerID {
			owner = n
		}
	}
	owner.kill()
	const old = 20
	for i := 0; i < old; i++ {
		if err := via.c.Produce(ctx, topic, []byte(fmt.Sprintf("old-%d", i)), client.ProduceOptions{}); err != nil {
			t.Fatalf("produce %d while the owner is down: %v", i, err)
		}
	}
	eventually(t, 30*time.Second, "the topic deleted while its owner is down", func() bool {
		return via.c.DeleteTopic(ctx, topic) == nil
	})
	eventually(t, 30*time.Second, "the topic re-created", func() bool {
		_, err := via.c.CreateTopic(ctx, client.CreateTopicRequest{Name: topic, Partitions: 1})
		return err == nil
	})
	if err := via.c.Produce(ctx, topic, []byte("new-0"), client.ProduceOptions{}); err != nil {
		t.Fatal(err)
	}
	owner.startAsync()
	owner.waitReady()

	eventually(t, 60*time.Second, "the deleted topic's records discarded", func() bool {
		return via.metric("narad_dispatch_discarded_total") >= old
	})
	eventually(t, 30*time.Second, "nothing pending in the producing node's WAL", func() bool {
		return via.metric("narad_dispatch_pending_records") == 0
	})
	p, off := 0, uint64(0)
	var got []string
	eventually(t, 30*time.Second, "the new record committed", func() bool {
		msgs, err := via.c.Consume(ctx, topic, client.ConsumeOptions{Partition: &p, Offset: &off, Max: 100})
		if err != nil {
			return false
		}
		got = got[:0]
		for _, m := range msgs {
			b, err := m.Bytes()
			if err != nil {
				t.Fatal(err)
			}
			got = append(got, string(b))
		}
		return len(got) > 0
	})
	if len(got) != 1 || got[0] != "new-0" {
		t.Fatalf("the re-created topic holds %v, want only [new-0]", got)
	}
}
