package broker_test

import (
	"context"
	"io/fs"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/narad-io/narad/internal/broker"
	"github.com/narad-io/narad/internal/messageid"
	"github.com/narad-io/narad/internal/storage"
)

// replayIDs replays partition p of topic from offset 0 until want records
// are there (the dispatcher commits them after produce answered), and
// returns payload → id.
func (n *node) replayIDs(t *testing.T, topic string, p, want int) map[string]string {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		off := uint64(0)
		msgs, err := n.b.Consume(context.Background(), broker.ConsumeRequest{Topic: topic, Partition: &p, Offset: &off, Max: 1000})
		if err != nil {
			t.Fatal(err)
		}
		if len(msgs) >= want || time.Now().After(deadline) {
			out := map[string]string{}
			for _, m := range msgs {
				out[string(m.Payload)] = m.ID
			}
			return out
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// Produce answers every record's message id and partition; replay, a
// queue consume and a replay by time return the same id on the record;
// ids differ record by record; and the id reads back the same from the
// partition log reopened after the broker closed (a restart).
func TestProduceAnswersTheIDConsumeAndReplayShow(t *testing.T) {
	n := newNode(t, false)
	ctx := context.Background()
	if _, err := n.b.CreateTopic(ctx, broker.CreateTopicRequest{Name: "orders", Partitions: 2}, ""); err != nil {
		t.Fatal(err)
	}
	one, err := n.b.ProduceWithID(ctx, "orders", broker.ProduceRecord{Key: []byte("k"), Payload: []byte("single")})
	if err != nil {
		t.Fatal(err)
	}
	p1 := 1
	batch, err := n.b.ProduceBatchWithIDs(ctx, "orders", []broker.ProduceRecord{
		{Payload: []byte("b0"), Partition: &p1}, {Payload: []byte("b1"), Partition: &p1}, {Payload: []byte("b2"), Partition: &p1}})
	if err != nil {
		t.Fatal(err)
	}
	answered := map[string]string{"single": one.ID, "b0": batch[0].ID, "b1": batch[1].ID, "b2": batch[2].ID}
	seen := map[string]bool{}
	for payload, id := range answered {
		if id == "" || len(id) > messageid.MaxLen || !strings.HasPrefix(id, "w") || seen[id] {
			t.Fatalf("record %s answered id %q (all: %v)", payload, id, answered)
		}
		seen[id] = true
	}
	if batch[0].Partition != 1 || batch[2].Partition != 1 || !(batch[0].ID < batch[1].ID && batch[1].ID < batch[2].ID) {
		t.Fatalf("batch answer %+v: want partition 1, ids in request order", batch)
	}

	got := n.replayIDs(t, "orders", one.Partition, 1)
	for k, v := range n.replayIDs(t, "orders", 1, 3) {
		got[k] = v
	}
	for payload, id := range answered {
		if got[payload] != id {
			t.Fatalf("replay shows %s with id %q, produce answered %q", payload, got[payload], id)
		}
	}
	msgs, err := n.b.Consume(ctx, broker.ConsumeRequest{Topic: "orders", Partition: &p1, Max: 10})
	if err != nil || len(msgs) != 3 {
		t.Fatalf("consume: %d messages, %v", len(msgs), err)
	}
	for _, m := range msgs {
		if m.ID != answered[string(m.Payload)] {
			t.Fatalf("consume shows %s with id %q, produce answered %q", m.Payload, m.ID, answered[string(m.Payload)])
		}
	}
	page, err := n.b.ReplaySince("orders", 1, time.UnixMilli(0), nil, 10)
	if err != nil || len(page.Messages) != 3 || page.Messages[1].ID != batch[1].ID {
		t.Fatalf("replay since: %+v, %v", page.Messages, err)
	}

	// Restart: the broker closes its logs; reopened, the log gives the
	// records the same WAL sources, hence the same ids.
	dir := filepath.Join(n.partDir(t, "orders", 1))
	n.stopDispatch()
	n.stopDispatch = nil
	n.b.Close()
	l, err := storage.Open(dir, storage.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	res, err := l.Read(0, 10, 1<<20, storage.NoDueLimit)
	if err != nil || len(res.Records) != 3 {
		t.Fatalf("reopened log: %d records, %v", len(res.Records), err)
	}
	for _, r := range res.Records {
		if id := messageid.Of("orders", 0, 1, r.Offset, r.Origin, r.Seq); id != answered[string(r.Payload)] {
			t.Fatalf("after a restart %s has id %q, produce answered %q", r.Payload, id, answered[string(r.Payload)])
		}
	}
}

// Two nodes' ingress WALs have identities of their own: the first record
// each accepts has seq 1 in both, and different ids.
func TestIDsDifferAcrossNodes(t *testing.T) {
	ctx := context.Background()
	var ids []string
	for range 2 {
		n := newNode(t, true)
		if _, err := n.b.CreateTopic(ctx, broker.CreateTopicRequest{Name: "orders"}, ""); err != nil {
			t.Fatal(err)
		}
		acc, err := n.b.ProduceWithID(ctx, "orders", broker.ProduceRecord{Payload: []byte("x")})
		if err != nil {
			t.Fatal(err)
		}
		if n.w.LastSeq() != 1 || acc.ID != messageid.FromWAL(n.w.Identity(), 1) {
			t.Fatalf("id %q of seq %d", acc.ID, n.w.LastSeq())
		}
		ids = append(ids, acc.ID)
	}
	if ids[0] == ids[1] {
		t.Fatalf("two nodes answered the same id %q", ids[0])
	}
}

// partDir finds the directory of partition p of topic under the node's
// data directory.
func (n *node) partDir(t *testing.T, topic string, p int) string {
	t.Helper()
	var found string
	filepath.WalkDir(n.dir, func(path string, d fs.DirEntry, err error) error {
		if err == nil && d.IsDir() && d.Name() == storage.PartitionDirName(p) && strings.Contains(path, topic) {
			found = path
		}
		return nil
	})
	if found == "" {
		t.Fatalf("no directory for partition %d of %q", p, topic)
	}
	return found
}
