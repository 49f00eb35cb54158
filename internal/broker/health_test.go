package broker

import (
	"context"
	"encoding/binary"
	"errors"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/narad-io/narad/internal/apierr"
	"github.com/narad-io/narad/internal/refusal"
	"github.com/narad-io/narad/internal/storage"
	"github.com/narad-io/narad/internal/vfs/errorfs"
)

// want503 checks err is a 503 whose message says each of want and names
// no path of the node's disk.
func (n *testNode) want503(what string, err error, want ...string) {
	n.t.Helper()
	if apierr.Status(err) != http.StatusServiceUnavailable {
		n.t.Fatalf("%s: %v (status %d), want 503", what, err, apierr.Status(err))
	}
	if strings.Contains(err.Error(), n.dir) || strings.Contains(err.Error(), ".log") {
		n.t.Fatalf("%s: the answer names a server path: %v", what, err)
	}
	for _, w := range want {
		if !strings.Contains(err.Error(), w) {
			n.t.Fatalf("%s: %q does not say %q", what, err, w)
		}
	}
}

func (n *testNode) partitionState(topic string, p int) (available bool, reason string) {
	n.t.Helper()
	v, err := n.b.DescribeTopic(topic)
	if err != nil {
		n.t.Fatal(err)
	}
	ps := v.PartitionStats[p]
	return ps.Available == nil || *ps.Available, ps.Error
}

// Issue 9 §5: an fdatasync failure fences the partition log; the broker
// recovers it on next use, so the partition heals without a restart, and
// what was acknowledged stays.
func TestFencedPartitionHealsOnNextUse(t *testing.T) {
	n := newTestNode(t, Config{})
	n.createTopic("orders", 1)
	if err := n.commit("orders", 0, "a"); err != nil {
		t.Fatal(err)
	}
	n.fs.Inject(errorfs.Rule{Ops: errorfs.OpSync, Path: ".log", Times: 1, Err: syscall.EIO, LoseUnsynced: true})
	err := n.commit("orders", 0, "b")
	n.want503("commit on a failing fdatasync", err, "fenced", "input/output error")
	if !errors.Is(err, refusal.ErrFenced) {
		t.Fatalf("commit on a fenced log: %v is not refusal.ErrFenced", err)
	}
	if v := n.metric(`narad_errors_total{component="storage",kind="fenced"}`); v != 1 {
		t.Fatalf("errors_total{storage,fenced} = %v", v)
	}
	if ok, reason := n.partitionState("orders", 0); ok || !strings.Contains(reason, "fenced") {
		t.Fatalf("describe of the fenced partition: available %v, %q", ok, reason)
	}
	if err := n.commit("orders", 0, "c"); err != nil {
		t.Fatalf("commit after the fault is gone: %v (the fence was not recovered)", err)
	}
	msgs, err := n.consume("orders", 0, 10)
	if err != nil || strings.Join(payloadsOf(msgs), ",") != "a,c" {
		t.Fatalf("consume: %v %v", payloadsOf(msgs), err)
	}
	if ok, reason := n.partitionState("orders", 0); !ok || reason != "" {
		t.Fatalf("describe after recovery: available %v, %q", ok, reason)
	}
}

// A read that fails with an I/O error (EIO) is not damage: consume and
// replay answer 503 naming no path, count errors_total{storage,read}, and
// skip nothing — once the disk answers, every record is delivered.
// (Skipping would have settled records no consumer ever saw.)
func TestReadErrorAnswers503AndSkipsNothing(t *testing.T) {
	n := newTestNode(t, Config{})
	n.createTopic("orders", 1)
	for _, p := range []string{"a", "b", "c"} {
		if err := n.commit("orders", 0, p); err != nil {
			t.Fatal(err)
		}
	}
	eio := n.fs.Inject(errorfs.Rule{Ops: errorfs.OpRead, Path: ".log", Err: syscall.EIO})
	_, err := n.consume("orders", 0, 10)
	n.want503("consume on a failing read", err, "be read", "input/output error")
	_, err = n.replay("orders", 0, 1, 10)
	n.want503("replay on a failing read", err, "be read", "input/output error")
	if v := n.metric(`narad_errors_total{component="storage",kind="read"}`); v < 2 {
		t.Fatalf("errors_total{storage,read} = %v, want a count per failed read", v)
	}
	eio.Remove()
	msgs, err := n.consume("orders", 0, 10)
	if err != nil || strings.Join(payloadsOf(msgs), ",") != "a,b,c" {
		t.Fatalf("consume once the disk answers: %v %v, want a,b,c", payloadsOf(msgs), err)
	}
	if v := n.metric("narad_consumer_corrupt_skipped_total"); v != 0 {
		t.Fatalf("corrupt_skipped_total = %v after an I/O error", v)
	}
}

// A consumer frontier file that cannot be read (EIO) is not frontier 0:
// the describe shows the partition unavailable rather than a frontier
// that would count every retained record as unconsumed (and a remote
// child attached at it would copy them all again).
func TestFrontierReadErrorIsNotFrontierZero(t *testing.T) {
	n := newTestNode(t, Config{})
	n.createTopic("orders", 1)
	if err := n.commit("orders", 0, "a", "b"); err != nil {
		t.Fatal(err)
	}
	msgs, err := n.consume("orders", 0, 2)
	if err != nil || len(msgs) != 2 {
		t.Fatalf("consume: %v %v", payloadsOf(msgs), err)
	}
	for _, m := range msgs {
		if err := n.b.Ack(context.Background(), "orders", m.ReceiptHandle, Settle); err != nil {
			t.Fatal(err)
		}
	}
	n.b.Close()
	n.start() // the queue is not loaded: the describe reads the frontier file
	n.fs.Inject(errorfs.Rule{Ops: errorfs.OpRead, Path: storage.ConsumerOffsetFile, Err: syscall.EIO})
	if ok, _ := n.partitionState("orders", 0); ok {
		t.Fatal("describe with a frontier file that cannot be read shows the partition available")
	}
	if r := n.b.LocalReports("orders", []int{0}, false); r[0].Available {
		t.Fatalf("the report other nodes and attaches read shows the partition available, frontier %d", r[0].Frontier)
	}
}

// A full disk (ENOSPC on write) answers 503 naming no path, and commits
// succeed again once space exists.
func TestFullDiskHealsWithoutRestart(t *testing.T) {
	n := newTestNode(t, Config{})
	n.createTopic("orders", 1)
	full := n.fs.Inject(errorfs.Rule{Ops: errorfs.OpWrite, Path: ".log", Err: syscall.ENOSPC})
	err := n.commit("orders", 0, "a")
	n.want503("commit on a full disk", err, "no space left on device")
	if !errors.Is(err, refusal.ErrDiskFull) {
		t.Fatalf("commit on a full disk: %v is not refusal.ErrDiskFull", err)
	}
	full.Remove()
	if err := n.commit("orders", 0, "a"); err != nil {
		t.Fatalf("commit once space exists: %v", err)
	}
}

// frameEnd returns where the frame starting at pos ends.
func frameEnd(seg []byte, pos int) int {
	return pos + 27 + int(binary.BigEndian.Uint32(seg[pos+19:pos+23]))
}

// stopAndDamage stops the broker and lets damage rewrite the first segment
// of topic/p on disk (it returns the new content), as an operator's or a
// disk's mistake would while the node is down.
func (n *testNode) stopAndDamage(topic string, p int, damage func(seg []byte) []byte) string {
	n.t.Helper()
	n.b.Close()
	seg := filepath.Join(n.partDir(topic, p), "00000000000000000000.log")
	data, err := os.ReadFile(seg)
	if err != nil {
		n.t.Fatal(err)
	}
	if err := os.WriteFile(seg, damage(data), 0o644); err != nil {
		n.t.Fatal(err)
	}
	return seg
}

// Issue 9 §4 "mid-segment damage": a bad frame with valid frames after it
// makes its partition answer 503 with the reason (not 500 forever), the
// describe shows it, an unpinned consume still serves the other
// partitions, and the operator's switch opens it: readers walk over the
// damaged records (a gap, not the end of the log), counted once each.
func TestDamagedPartitionAnswers503UntilSkipped(t *testing.T) {
	n := newTestNode(t, Config{})
	n.createTopic("orders", 2)
	for _, b := range []string{"a", "b", "c"} {
		if err := n.commit("orders", 0, b+"0", b+"1", b+"2"); err != nil {
			t.Fatal(err)
		}
	}
	if err := n.commit("orders", 1, "other"); err != nil {
		t.Fatal(err)
	}
	seg := n.stopAndDamage("orders", 0, func(data []byte) []byte {
		data[frameEnd(data, 0)+30] ^= 0x40 // a payload byte of the second frame
		return data
	})
	n.start()

	reason := []string{"damaged", "offsets 3..5", "NARAD_STORAGE_SKIP_CORRUPT=true"}
	_, err := n.consume("orders", 0, 10)
	n.want503("pinned consume of the damaged partition", err, reason...)
	_, err = n.replay("orders", 0, 0, 10)
	n.want503("replay of the damaged partition", err, reason...)
	n.want503("commit to the damaged partition", n.commit("orders", 0, "x"), reason...)
	if ok, why := n.partitionState("orders", 0); ok || !strings.Contains(why, "offsets 3..5") {
		t.Fatalf("describe of the damaged partition: available %v, %q", ok, why)
	}
	if ok, _ := n.partitionState("orders", 1); !ok {
		t.Fatal("describe: the healthy partition is listed unavailable")
	}
	if msgs, err := n.consume("orders", -1, 10); err != nil || strings.Join(payloadsOf(msgs), ",") != "other" {
		t.Fatalf("unpinned consume past the damaged partition: %v %v", payloadsOf(msgs), err)
	}
	if !strings.Contains(n.logs.String(), seg) {
		t.Fatalf("the node's log does not name the damaged file %s", seg)
	}

	n.restart(func(c *Config) { c.SkipCorrupt = true })
	msgs, err := n.replay("orders", 0, 3, 10)
	if err != nil || len(msgs) != 3 || msgs[0].Offset != 6 {
		t.Fatalf("replay from inside the damaged range: %v %v; want c0..c2 from offset 6", payloadsOf(msgs), err)
	}
	var got []string
	for { // a client drains until the first empty answer: a gap must not be one
		msgs, err := n.consume("orders", 0, 10)
		if err != nil {
			t.Fatal(err)
		}
		if len(msgs) == 0 {
			break
		}
		got = append(got, payloadsOf(msgs)...)
	}
	if strings.Join(got, ",") != "a0,a1,a2,c0,c1,c2" {
		t.Fatalf("consume with the skip switch: %v", got)
	}
	if v := n.metric("narad_consumer_corrupt_skipped_total"); v != 3 {
		t.Fatalf("consumer_corrupt_skipped_total = %v, want 3 (once per record, though replay and consume both stepped over)", v)
	}
	if err := n.commit("orders", 0, "d"); err != nil {
		t.Fatal(err)
	}
}

// Issue 9 §4 "truncated active segment", through the broker: recovery
// reports the shortfall (narad_storage_recovery_shortfalls_total), new
// records get offsets above everything published before, and consumers
// get them.
func TestTruncatedActiveSegmentKeepsOffsetsMoving(t *testing.T) {
	n := newTestNode(t, Config{})
	n.createTopic("orders", 1)
	for _, b := range []string{"a", "b"} {
		if err := n.commit("orders", 0, b+"0", b+"1"); err != nil {
			t.Fatal(err)
		}
	}
	n.stopAndDamage("orders", 0, func(data []byte) []byte {
		return data[:frameEnd(data, 0)+10] // truncated into the second frame
	})
	n.start()
	if err := n.commit("orders", 0, "new"); err != nil {
		t.Fatal(err)
	}
	if v := n.metric("narad_storage_recovery_shortfalls_total"); v != 1 {
		t.Fatalf("narad_storage_recovery_shortfalls_total = %v", v)
	}
	msgs, err := n.consume("orders", 0, 10)
	if err == nil && len(msgs) == 2 { // the first read stops before the gap
		var more []Message
		more, err = n.consume("orders", 0, 10)
		msgs = append(msgs, more...)
	}
	if err != nil || len(msgs) != 3 || msgs[2].Offset != 4 || string(msgs[2].Payload) != "new" {
		t.Fatalf("consume: %v %v; want a0, a1 and the new record at offset 4", payloadsOf(msgs), err)
	}
	if !strings.Contains(n.logs.String(), "lost_from_offset=2") {
		t.Fatalf("the shortfall is not logged with its offsets:\n%s", n.logs)
	}
}
