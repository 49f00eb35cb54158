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
// must be delivered exactly once — the WAL re-dispatch after the restart
// skips, by WAL seq, what the partition logs already hold — and every
// record a reader saw by offset before the kill (lazily committed ones
// included) is at that same offset after it.
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
	// A reader replays each partition by offset while the producers run:
	// what it sees is what must not move.
	seen := map[int]string{}
	rctx, stopReader := context.WithCancel(ctx)
	readerDone := make(chan struct{})
	go func() {
		defer close(readerDone)
		next := make([]uint64, 4)
		for rctx.Err() == nil {
			for p := range next {
				msgs, err := n.c.Consume(rctx, "durable", client.ConsumeOptions{Partition: &p, Offset: &next[p], Max: 1000})
				if err != nil {
					continue
				}
				mu.Lock()
				for _, m := range msgs {
					seen[payloadID(t, m)] = fmt.Sprintf("%d/%d", m.Partition, m.Offset)
					next[p] = m.Offset + 1
				}
				mu.Unlock()
			}
		}
	}()
	eventually(t, 60*time.Second, "enough accepted records", func() bool {
		mu.Lock()
		defer mu.Unlock()
		return len(accepted) >= killAt
	})
	n.kill()
	stopProducers()
	stopReader()
	wg.Wait()
	<-readerDone
	mu.Lock()
	total := len(accepted)
	mu.Unlock()
	t.Logf("SIGKILL after %d records answered 202", total)

	n.restart()
	got, at := drainAt(t, n, "durable", 3)
	checkLedger(t, "durable", accepted, got)
	dups := 0
	for id, c := range got {
		if c > 1 {
			if dups++; dups <= 3 {
				t.Errorf("id-%d delivered %d times after the restart: the re-dispatch committed it again", id, c)
			}
		}
	}
	moved := 0
	for id, where := range seen {
		if at[id] != where {
			moved++
			if moved <= 3 {
				t.Errorf("id-%d was at %s before the kill and is at %q after it", id, where, at[id])
			}
		}
	}
	t.Logf("%d records seen by offset before the kill, %d moved", len(seen), moved)
}

func payloadID(t *testing.T, m client.Message) int {
	b, _ := m.Bytes()
	var id int
	if _, err := fmt.Sscanf(string(b), "id-%d", &id); err != nil {
		t.Errorf("unexpected payload %q", b)
	}
	return id
}

// drainAt is drain that also says where each id was delivered from
// ("partition/offset", the last delivery's).
func drainAt(t *testing.T, n *node, topic string, quiet int) (map[int]int, map[int]string) {
	t.Helper()
	ctx := ctxT(t)
	got, at := map[int]int{}, map[int]string{}
	for empties := 0; empties < quiet; {
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
			id := payloadID(t, m)
			got[id]++
			at[id] = fmt.Sprintf("%d/%d", m.Partition, m.Offset)
			handles[i] = m.ReceiptHandle
		}
		if _, err := n.c.AckBatch(ctx, topic, handles); err != nil {
			t.Fatal(err)
		}
	}
	return got, at
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
	eventually(t, 20*time.Second, "frontier 15 persisted", func() bool {
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
