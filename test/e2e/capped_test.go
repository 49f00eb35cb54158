package e2e

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/narad-io/narad/client"
)

// TestClusterForwardedAnswersAreCapped: consume and replay answers served
// by another node (node RPC Forward) keep the owner's byte cap
// (http.max_consume_bytes) — at least one record, never more than the
// cap — and the records past it are there for the next consume at once.
func TestClusterForwardedAnswersAreCapped(t *testing.T) {
	const capBytes, size, n = 64 << 10, 10 << 10, 20
	nodes := startCluster(t, 2, fmt.Sprintf("NARAD_HTTP_MAX_CONSUME_BYTES=%d", capBytes))
	ctx := ctxT(t)
	if _, err := nodes[0].c.CreateTopic(ctx, client.CreateTopicRequest{Name: "capped", Partitions: 2}); err != nil {
		t.Fatal(err)
	}
	owners := ownersOf(t, nodes, "capped")
	p := 0
	if owners[0] == 0 {
		p = 1 // the partition the second node owns
	}
	front := nodes[0]
	recs := make([]client.BatchRecord, n)
	for i := range recs {
		recs[i] = client.RecordFromBytes([]byte(strings.Repeat(string(rune('a'+i)), size)))
		recs[i].Partition = ptr(p)
	}
	if _, err := front.c.ProduceBatch(ctx, "capped", recs); err != nil {
		t.Fatal(err)
	}
	eventually(t, 20*time.Second, "the batch committed", func() bool {
		d, err := front.c.GetTopic(ctx, "capped")
		return err == nil && d.PartitionStats[p].HighWatermark == n
	})
	check := func(what string, msgs []client.Message) int {
		t.Helper()
		total := 0
		for _, m := range msgs {
			b, err := m.Bytes()
			if err != nil {
				t.Fatal(err)
			}
			total += len(b)
		}
		if len(msgs) == 0 || total > capBytes {
			t.Fatalf("%s through %s: %d records, %d payload bytes; want 1 or more within %d", what, front.id, len(msgs), total, capBytes)
		}
		return len(msgs)
	}
	from := uint64(0)
	replayed, err := front.c.Consume(ctx, "capped", client.ConsumeOptions{Partition: ptr(p), Offset: &from, Max: 1000})
	if err != nil {
		t.Fatal(err)
	}
	check("replay", replayed)
	got := 0
	for answers := 0; got < n; answers++ {
		msgs, err := front.c.Consume(ctx, "capped", client.ConsumeOptions{Partition: ptr(p), Max: 1000})
		if err != nil {
			t.Fatal(err)
		}
		if len(msgs) == 0 {
			t.Fatalf("after %d answers and %d of %d records a forwarded consume found nothing: records left leased", answers, got, n)
		}
		got += check("pinned consume", msgs)
	}
}
