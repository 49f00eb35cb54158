package e2e

import (
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/narad-io/narad/client"
	"github.com/narad-io/narad/internal/storage"
)

// TestGracefulSIGTERM: SIGTERM drains, exits 0 and closes every log cleanly
// (hwm files carry their boundary, so the directory describes itself
// exactly); a restart serves the same data.
func TestGracefulSIGTERM(t *testing.T) {
	n := startNode(t)
	ctx := ctxT(t)
	n.c.CreateTopic(ctx, client.CreateTopicRequest{Name: "gs", Partitions: 2})
	for i := 0; i < 20; i++ {
		if err := n.c.Produce(ctx, "gs", []byte(fmt.Sprintf("m%d", i)), client.ProduceOptions{Partition: ptr(i % 2)}); err != nil {
			t.Fatal(err)
		}
	}
	eventually(t, 10*time.Second, "all committed", func() bool {
		d, err := n.c.GetTopic(ctx, "gs")
		return err == nil && d.PartitionStats[0].HighWatermark+d.PartitionStats[1].HighWatermark == 20
	})
	n.stop()
	if code := n.cmd.ProcessState.ExitCode(); code != 0 {
		t.Fatalf("exit code %d after SIGTERM:\n%s", code, tail(n.logs.String(), 2000))
	}
	for p := 0; p < 2; p++ {
		dir := filepath.Join(n.dir, "data", "topics", "gs", fmt.Sprintf("p%05d", p))
		h, err := storage.ReadHWMFile(dir)
		if err != nil || !h.Boundary || h.HWM != 10 {
			t.Fatalf("partition %d hwm file after SIGTERM: %+v %v", p, h, err)
		}
		st, err := storage.Describe(dir)
		if err != nil || !st.Exact || st.HighWatermark != 10 {
			t.Fatalf("partition %d does not describe itself exactly: %+v %v", p, st, err)
		}
	}
	n.restart()
	msgs, err := n.c.Consume(ctx, "gs", client.ConsumeOptions{Max: 100, Wait: time.Second})
	if err != nil || len(msgs) != 20 {
		t.Fatalf("after restart: %d messages, %v", len(msgs), err)
	}
}
