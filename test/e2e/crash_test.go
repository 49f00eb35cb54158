package e2e

import (
	"context"
	"encoding/binary"
	"fmt"
	"math/rand"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/narad-io/narad/client"
)

// TestCrashLosesNoAcceptedRecord produces from several clients, SIGKILLs the
// server mid-stream, restarts it, and consumes: every record answered 202
// must be delivered at least once. Duplicates are counted and reported.
func TestCrashLosesNoAcceptedRecord(t *testing.T) {
	if testing.Short() {
		t.Skip("kills processes")
	}
	n := startNode(t)
	ctx := ctxT(t)
	if _, err := n.c.CreateTopic(ctx, client.CreateTopicRequest{Name: "durable", Partitions: 4}); err != nil {
		t.Fatal(err)
	}
	var (
		mu       sync.Mutex
		accepted = map[int]bool{}
		nextID   atomic.Int64
		wg       sync.WaitGroup
	)
	killAt := 300 + rand.Intn(700)
	pctx, stopProducers := context.WithCancel(ctx)
	for p := 0; p < 8; p++ {
		wg.Add(1)
		go func(p int) {
			defer wg.Done()
			for pctx.Err() == nil {
				id := int(nextID.Add(1))
				var err error
				if id%5 == 0 {
					// Some batches too: all or nothing.
					_, err = n.c.ProduceBatch(pctx, "durable", []client.BatchRecord{
						client.RecordFromBytes([]byte(fmt.Sprintf("id-%d", id))),
					})
				} else {
					opts := client.ProduceOptions{}
					if id%2 == 0 {
						opts.Key = ptr(fmt.Sprintf("k%d", id%13))
					}
					err = n.c.Produce(pctx, "durable", []byte(fmt.Sprintf("id-%d", id)), opts)
				}
				if err == nil {
					mu.Lock()
					accepted[id] = true
					mu.Unlock()
				}
			}
		}(p)
	}
	eventually(t, 60*time.Second, "enough accepted records", func() bool {
		mu.Lock()
		defer mu.Unlock()
		return len(accepted) >= killAt
	})
	n.kill()
	stopProducers()
	wg.Wait()
	mu.Lock()
	total := len(accepted)
	mu.Unlock()
	t.Logf("SIGKILL after %d records answered 202", total)

	n.restart()
	got := drain(t, n, "durable", 3)
	checkLedger(t, "durable", accepted, got)
}

// TestFrontierSurvivesRestart: acked records are not redelivered after a
// restart beyond the ~100 ms persist window.
func TestFrontierSurvivesRestart(t *testing.T) {
	n := startNode(t)
	ctx := ctxT(t)
	n.c.CreateTopic(ctx, client.CreateTopicRequest{Name: "fr", Partitions: 1})
	for i := 0; i < 20; i++ {
		if err := n.c.Produce(ctx, "fr", []byte(fmt.Sprintf("m%d", i)), client.ProduceOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	acked := 0
	for acked < 15 {
		msgs, err := n.c.Consume(ctx, "fr", client.ConsumeOptions{Wait: time.Second, Max: 15 - acked})
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range msgs {
			if err := n.c.Ack(ctx, "fr", m.ReceiptHandle); err != nil {
				t.Fatal(err)
			}
			acked++
		}
	}
	// The frontier file is the durable state: wait for it on disk.
	offsetFile := filepath.Join(n.dir, "data", "topics", "fr", "p00000", "consumer.offset")
	eventually(t, 5*time.Second, "frontier 15 persisted", func() bool {
		b, err := os.ReadFile(offsetFile)
		return err == nil && len(b) == 8 && binary.BigEndian.Uint64(b) == 15
	})
	n.kill()
	n.restart()
	msgs, err := n.c.Consume(ctx, "fr", client.ConsumeOptions{Wait: 2 * time.Second, Max: 100})
	if err != nil {
		t.Fatal(err)
	}
	if len(msgs) != 5 || msgs[0].Offset != 15 {
		d, _ := n.c.GetTopic(ctx, "fr")
		t.Fatalf("after restart got %d messages from offset %d; want the 5 unacked from 15 (stats %+v)", len(msgs), msgs[0].Offset, d.PartitionStats)
	}
}
