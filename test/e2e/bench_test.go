package e2e

import (
	"bytes"
	"encoding/json"
	"errors"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/narad-io/narad/client"
)

// benchTopics lists the node's topics named like a bench's scratch topic.
func benchTopics(t *testing.T, n *node) []string {
	t.Helper()
	topics, _, err := n.c.ListTopics(ctxT(t), 1000, "")
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, tp := range topics {
		if strings.HasPrefix(tp.Name, "bench-") {
			out = append(out, tp.Name)
		}
	}
	return out
}

// narad bench against a real node: it produces and consumes on a scratch
// topic of its own, deletes it, and leaves every other topic as it was.
func TestBenchLeavesOtherTopicsAlone(t *testing.T) {
	n := startNode(t)
	ctx := ctxT(t)
	if _, err := n.c.CreateTopic(ctx, client.CreateTopicRequest{Name: "orders", Partitions: 1}); err != nil {
		t.Fatal(err)
	}
	if err := n.c.Produce(ctx, "orders", []byte(`{"id":1}`), client.ProduceOptions{}); err != nil {
		t.Fatal(err)
	}
	var stdout, stderr bytes.Buffer
	cmd := exec.Command(naradBin, "-s", "http://"+n.http, "bench", "--messages", "200", "--producers", "4",
		"--batch", "10", "--consumers", "2", "--json")
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("bench: %v\nstdout %s\nstderr %s", err, stdout.String(), stderr.String())
	}
	var rep struct {
		Topic          string `json:"topic"`
		Scratch        bool   `json:"scratch"`
		ScratchDeleted bool   `json:"scratch_deleted"`
		Produce        struct {
			Messages int `json:"messages"`
		} `json:"produce"`
		Consume struct {
			Messages int `json:"messages"`
		} `json:"consume"`
	}
	if err := json.Unmarshal(stdout.Bytes(), &rep); err != nil {
		t.Fatalf("%v: %s", err, stdout.String())
	}
	if !rep.Scratch || !rep.ScratchDeleted || rep.Produce.Messages != 200 || rep.Consume.Messages != 200 {
		t.Fatalf("report %s", stdout.String())
	}
	if left := benchTopics(t, n); len(left) != 0 {
		t.Fatalf("scratch topics left: %v", left)
	}
	orders, err := n.c.GetTopic(ctx, "orders")
	if err != nil {
		t.Fatal(err)
	}
	if p := orders.PartitionStats[0]; p.NextOffset != 1 || p.ConsumerFrontier != 0 {
		t.Fatalf("orders touched by the bench: %+v", p)
	}
	msgs, err := n.c.Consume(ctx, "orders", client.ConsumeOptions{})
	if err != nil || len(msgs) != 1 || string(msgs[0].Payload) != `{"id":1}` {
		t.Fatalf("orders' record: %+v, %v", msgs, err)
	}
}

// SIGINT to a running bench: it prints what it measured, deletes its
// scratch topic and exits 130.
func TestBenchSIGINT(t *testing.T) {
	n := startNode(t)
	var stdout, stderr bytes.Buffer
	cmd := exec.Command(naradBin, "-s", "http://"+n.http, "bench", "--duration", "2m", "--producers", "2")
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	t.Cleanup(func() { cmd.Process.Kill() })
	eventually(t, 30*time.Second, "the scratch topic with records in it", func() bool {
		for _, name := range benchTopics(t, n) {
			if tp, err := n.c.GetTopic(ctxT(t), name); err == nil && len(tp.PartitionStats) > 0 && tp.PartitionStats[0].NextOffset > 0 {
				return true
			}
		}
		return false
	})
	if err := cmd.Process.Signal(syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	var err error
	select {
	case err = <-done:
	case <-time.After(30 * time.Second):
		t.Fatalf("bench still running 30s after SIGINT; stderr %s", stderr.String())
	}
	var exit *exec.ExitError
	if !errors.As(err, &exit) || exit.ExitCode() != 130 {
		t.Fatalf("exit %v, want 130; stdout %s stderr %s", err, stdout.String(), stderr.String())
	}
	if !strings.Contains(stdout.String(), "produce: ") || !strings.Contains(stdout.String(), "bench: interrupted: the figures are partial") {
		t.Errorf("stdout %q", stdout.String())
	}
	if left := benchTopics(t, n); len(left) != 0 {
		t.Fatalf("scratch topics left after SIGINT: %v", left)
	}
}

// narad bench --e2e --via-child against a real node: producers and
// consumers run at once, the consumers read a scratch child attached to
// the scratch topic, every produced record reaches them (each one's
// end-to-end latency is counted), and both scratch topics are gone after.
func TestBenchEndToEndViaChild(t *testing.T) {
	n := startNode(t)
	var stdout, stderr bytes.Buffer
	cmd := exec.Command(naradBin, "-s", "http://"+n.http, "bench", "--e2e", "--via-child", "--messages", "300",
		"--producers", "3", "--batch", "10", "--rate", "3000", "--consumers", "2", "--json")
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("bench: %v\nstdout %s\nstderr %s", err, stdout.String(), stderr.String())
	}
	var rep struct {
		ScratchDeleted bool `json:"scratch_deleted"`
		Settings       struct {
			Rate     int  `json:"rate"`
			ViaChild bool `json:"via_child"`
		} `json:"settings"`
		Produce struct {
			Messages int `json:"messages"`
		} `json:"produce"`
		Consume struct {
			Messages int `json:"messages"`
		} `json:"consume"`
		EndToEnd *struct {
			P50 int64 `json:"p50"`
			Max int64 `json:"max"`
		} `json:"end_to_end_us"`
	}
	if err := json.Unmarshal(stdout.Bytes(), &rep); err != nil {
		t.Fatalf("%v: %s", err, stdout.String())
	}
	if !rep.ScratchDeleted || rep.Produce.Messages != 300 || rep.Consume.Messages != 300 ||
		rep.Settings.Rate != 3000 || !rep.Settings.ViaChild || rep.EndToEnd == nil || rep.EndToEnd.P50 <= 0 ||
		rep.EndToEnd.Max < rep.EndToEnd.P50 {
		t.Fatalf("report %s", stdout.String())
	}
	if !strings.Contains(stderr.String(), "-child attached; the consumers read it") {
		t.Errorf("stderr %q does not name the child", stderr.String())
	}
	if left := benchTopics(t, n); len(left) != 0 {
		t.Fatalf("scratch topics left: %v", left)
	}
}
