package e2e

import (
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"testing"
	"time"

	"github.com/narad-io/narad/client"
)

// TestClusterAttachAfterOwnerCrash: after a SIGKILL, a partition's hwm file
// has no clean boundary, so its directory cannot tell its exact tail. The
// leader, measuring an attach point on another node's partition, asks for
// it exactly, and the owner opens the log to read it — as the local path
// always did — so the create-as-child answers 201 at once (not 503 until
// something happens to open the log), with the parent's high watermarks
// as its attach offsets.
func TestClusterAttachAfterOwnerCrash(t *testing.T) {
	nodes := startCluster(t, 3)
	ctx := ctxT(t)
	if _, err := nodes[0].c.CreateTopic(ctx, client.CreateTopicRequest{Name: "src", Partitions: 3}); err != nil {
		t.Fatal(err)
	}
	leader := leaderIndex(t, nodes)
	owners := ownersOf(t, nodes, "src")
	victim := (leader + 1) % 3 // owns a partition, does not lead
	front := (leader + 2) % 3  // neither: where the client asks
	want := []uint64{3, 5, 7}
	for p, n := range want {
		for i := uint64(0); i < n; i++ {
			if err := nodes[front].c.Produce(ctx, "src", []byte(fmt.Sprintf(`{"i":%d}`, i)), client.ProduceOptions{Partition: ptr(p)}); err != nil {
				t.Fatal(err)
			}
		}
	}
	eventually(t, 20*time.Second, "every record committed", func() bool {
		d, err := nodes[front].c.GetTopic(ctx, "src")
		if err != nil {
			return false
		}
		for p, ps := range d.PartitionStats {
			if ps.HighWatermark != want[p] {
				return false
			}
		}
		return true
	})
	if !slices.Contains(owners, victim) {
		t.Fatalf("owners %v: the victim node %d owns nothing", owners, victim)
	}
	nodes[victim].kill()
	nodes[victim].restart()

	// The leader may still be reconnecting to the restarted node: a 503 is
	// a retry, but only for a bounded time, and never one that lasts.
	var status int
	var body []byte
	deadline := time.Now().Add(15 * time.Second)
	for {
		status, body, _ = nodes[front].do("POST", "/v1/topics", "application/json", []byte(`{"name":"dst","parent":"src"}`))
		if status != http.StatusServiceUnavailable || time.Now().After(deadline) {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	if status != http.StatusCreated {
		t.Fatalf("create-as-child after the owner's crash: %d %s; want 201", status, body)
	}
	var got struct {
		AttachOffsets []uint64 `json:"attach_offsets"`
	}
	if err := json.Unmarshal(body, &got); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(got.AttachOffsets, want) {
		t.Fatalf("attach offsets %v; want the parent's high watermarks %v", got.AttachOffsets, want)
	}
}
