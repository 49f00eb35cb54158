package broker

import (
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/narad-io/narad/internal/apierr"
	"github.com/narad-io/narad/internal/clock"
	"github.com/narad-io/narad/internal/header"
	"github.com/narad-io/narad/internal/storage"
)

// dedupeNode is a single node on a fake clock with topic "orders" (one
// partition) whose dedupe window is a minute.
func dedupeNode(t *testing.T, maxIDs int) (*testNode, *clock.Fake) {
	t.Helper()
	clk := clock.NewFake(time.Time{})
	n := newTestNode(t, Config{Now: clk.Now, DedupeMaxIDs: maxIDs})
	window := int64(60_000)
	if _, err := n.b.CreateTopic(testCtx(t), CreateTopicRequest{Name: "orders", Partitions: 1, DedupeWindowMs: &window}, ""); err != nil {
		t.Fatal(err)
	}
	return n, clk
}

func (n *testNode) stored(topic string) []string {
	n.t.Helper()
	msgs, err := n.replay(topic, 0, 0, 1000)
	if err != nil {
		n.t.Fatal(err)
	}
	out := make([]string, len(msgs))
	for i, m := range msgs {
		id, _ := header.MsgIDOf(m.Headers)
		out[i] = id + "=" + string(m.Payload)
	}
	return out
}

// The same msg_id reaching the owner through two paths — this node's
// dispatch (CommitLocal) and another node's, over node RPC (CommitRouted)
// — is stored once; every call succeeds.
func TestDedupeSameIDThroughTwoPathsCommittedOnce(t *testing.T) {
	n, _ := dedupeNode(t, 0)
	ctx := testCtx(t)
	if err := commitLocal(n.b, ctx, "orders", 0, idRecs("m1", "m2")); err != nil {
		t.Fatal(err)
	}
	if err := n.b.CommitRouted(ctx, "orders", 0, 0, idRecs("m2", "m1", "m3"), 0); err != nil {
		t.Fatal(err)
	}
	if err := commitLocal(n.b, ctx, "orders", 0, idRecs("m3", "", "m3")); err != nil {
		t.Fatal(err)
	}
	if got := fmt.Sprint(n.stored("orders")); got != "[m1=p0 m2=p1 m3=p2 =p1]" {
		t.Fatalf("stored %s, want each id once and the record without one", got)
	}
	if got := n.metric(`narad_deduplicated_records_total{topic="orders"}`); got != 4 {
		t.Fatalf("narad_deduplicated_records_total = %v, want 4", got)
	}
}

// After a restart the window is read back from the log: a retry within
// it is still a duplicate; once the window has passed, it is stored.
func TestDedupeSurvivesRestartThenExpires(t *testing.T) {
	n, clk := dedupeNode(t, 0)
	ctx := testCtx(t)
	if err := commitLocal(n.b, ctx, "orders", 0, idRecs("m1")); err != nil {
		t.Fatal(err)
	}
	clk.Advance(30 * time.Second)
	if err := commitLocal(n.b, ctx, "orders", 0, idRecs("m2")); err != nil {
		t.Fatal(err)
	}
	n.restart(nil)
	clk.Advance(29 * time.Second) // m1 is 59 s old: still within the minute
	if err := commitLocal(n.b, ctx, "orders", 0, idRecs("m1", "m2")); err != nil {
		t.Fatal(err)
	}
	if got := fmt.Sprint(n.stored("orders")); got != "[m1=p0 m2=p0]" {
		t.Fatalf("after a restart within the window: stored %s, want m1 and m2 once", got)
	}
	clk.Advance(2 * time.Second) // m1 is 61 s old, m2 31 s
	if err := commitLocal(n.b, ctx, "orders", 0, idRecs("m1", "m2")); err != nil {
		t.Fatal(err)
	}
	if got := fmt.Sprint(n.stored("orders")); got != "[m1=p0 m2=p0 m1=p0]" {
		t.Fatalf("after m1's window: stored %s, want m1 again and m2 still deduplicated", got)
	}
}

// A rebuild reads at most the cap's worth of the newest records, and the
// log instance decides: a log opened again (here after a restart with a
// smaller cap) is read anew.
func TestDedupeRebuildReadsNewestUpToCap(t *testing.T) {
	n, _ := dedupeNode(t, 0)
	ctx := testCtx(t)
	for i := range 10 {
		if err := commitLocal(n.b, ctx, "orders", 0, idRecs(fmt.Sprintf("m%d", i))); err != nil {
			t.Fatal(err)
		}
	}
	n.restart(func(c *Config) { c.DedupeMaxIDs = 4 })
	var retry []string
	for i := range 10 {
		retry = append(retry, fmt.Sprintf("m%d", i))
	}
	if err := commitLocal(n.b, ctx, "orders", 0, idRecs(retry...)); err != nil {
		t.Fatal(err)
	}
	// m6..m9 were read back; m0..m5 were not, and are stored again.
	if got := len(n.stored("orders")); got != 16 {
		t.Fatalf("stored %d records, want 10 + the 6 ids older than the newest 4", got)
	}
}

// Turning the window off stores every record; on again, the ids are read
// from the log (those committed while it was off included).
func TestDedupeWindowOffAndOn(t *testing.T) {
	n, _ := dedupeNode(t, 0)
	ctx := testCtx(t)
	zero, minute := int64(0), int64(60_000)
	commitLocal(n.b, ctx, "orders", 0, idRecs("a"))
	if _, err := n.b.AlterTopic(ctx, "orders", AlterTopicRequest{DedupeWindowMs: &zero}); err != nil {
		t.Fatal(err)
	}
	commitLocal(n.b, ctx, "orders", 0, idRecs("a", "b"))
	if _, err := n.b.AlterTopic(ctx, "orders", AlterTopicRequest{DedupeWindowMs: &minute}); err != nil {
		t.Fatal(err)
	}
	commitLocal(n.b, ctx, "orders", 0, idRecs("a", "b", "c"))
	if got := fmt.Sprint(n.stored("orders")); got != "[a=p0 a=p0 b=p1 c=p2]" {
		t.Fatalf("stored %s", got)
	}
}

// A failed commit remembers nothing: its retry is stored.
func TestDedupeFailedCommitRemembersNothing(t *testing.T) {
	n, _ := dedupeNode(t, 0)
	ctx := testCtx(t)
	calls := 0
	l, err := n.b.parts.Get("orders", 0)
	if err != nil {
		t.Fatal(err)
	}
	topic, _ := n.b.topic("orders")
	boom := errors.New("boom")
	err = n.b.dedupe(ctx, topic, 0, l, idRecs("a"), func([]storage.Record, []int) error { calls++; return boom })
	if !errors.Is(err, boom) || calls != 1 {
		t.Fatalf("dedupe = %v after %d calls", err, calls)
	}
	if err := commitLocal(n.b, ctx, "orders", 0, idRecs("a")); err != nil {
		t.Fatal(err)
	}
	if got := len(n.stored("orders")); got != 1 {
		t.Fatalf("stored %d records after a failed commit and its retry, want 1", got)
	}
}

// Produce: a keyless record with a msg_id is placed by the id's hash, a
// keyed one by its key; the id travels as the reserved header.
func TestProduceMsgIDPlacementAndHeader(t *testing.T) {
	b := newTestBroker(t, Config{})
	createTestTopic(t, b, "orders", 8)
	ctx := testCtx(t)
	for range 3 {
		if err := b.Produce(ctx, "orders", ProduceRecord{Payload: []byte("x"), MsgID: "retry-me", HasMsgID: true}); err != nil {
			t.Fatal(err)
		}
	}
	if err := b.Produce(ctx, "orders", ProduceRecord{Key: []byte("k"), Payload: []byte("y"), MsgID: "retry-me", HasMsgID: true,
		Headers: []header.Header{{Name: "zz", Value: "1"}, {Name: "aa", Value: "2"}}}); err != nil {
		t.Fatal(err)
	}
	recs, err := b.wal.Read(1, 100, 1<<20)
	if err != nil || len(recs) != 4 {
		t.Fatalf("%d WAL records, %v", len(recs), err)
	}
	want := KeyPartition([]byte("retry-me"), 8)
	for i, r := range recs[:3] {
		if int(r.Partition) != want {
			t.Fatalf("keyless record %d with a msg_id went to partition %d, want %d (the id's hash)", i, r.Partition, want)
		}
	}
	if p := int(recs[3].Partition); p != KeyPartition([]byte("k"), 8) {
		t.Fatalf("keyed record with a msg_id went to partition %d, want its key's", p)
	}
	if got := fmt.Sprint(recs[3].Headers); got != "[{aa 2} {narad-msg-id retry-me} {zz 1}]" {
		t.Fatalf("headers %s, want the id as narad-msg-id, sorted in", got)
	}
}

func TestProduceMsgIDRefusals(t *testing.T) {
	b := newTestBroker(t, Config{})
	createTestTopic(t, b, "orders", 1)
	ctx := testCtx(t)
	for _, id := range []string{"", string(make([]byte, 129)), "tab\there", "é"} {
		err := b.ProduceBatch(ctx, "orders", []ProduceRecord{{Payload: []byte("ok")}, {Payload: []byte("x"), MsgID: id, HasMsgID: true}})
		if e, ok := apierr.From(err); !ok || e.Status != 400 || e.Index == nil || *e.Index != 1 {
			t.Fatalf("msg_id %q: %v (status %d), want 400 naming index 1", id, err, apierr.Status(err))
		}
	}
	if err := b.Produce(ctx, "orders", ProduceRecord{Payload: []byte("x"), MsgID: string(make([]byte, 128)), HasMsgID: true}); apierr.Status(err) != 400 {
		t.Fatalf("NUL bytes: %v", err)
	}
	id := "~ !"
	if err := b.Produce(ctx, "orders", ProduceRecord{Payload: []byte("x"), MsgID: id, HasMsgID: true}); err != nil {
		t.Fatalf("printable msg_id %q refused: %v", id, err)
	}
}

func TestDedupeWindowFieldRules(t *testing.T) {
	b := newTestBroker(t, Config{})
	ctx := testCtx(t)
	for _, v := range []int64{-1, 1, 999, 86_400_001} {
		_, err := b.CreateTopic(ctx, CreateTopicRequest{Name: "t", DedupeWindowMs: &v}, "")
		if apierr.Status(err) != 400 || !contains(err, "dedupe_window_ms") {
			t.Fatalf("create with %d: %v", v, err)
		}
	}
	ok := int64(1000)
	if _, err := b.CreateTopic(ctx, CreateTopicRequest{Name: "t", DedupeWindowMs: &ok}, ""); err != nil {
		t.Fatal(err)
	}
	bad, max := int64(500), int64(86_400_000)
	if _, err := b.AlterTopic(ctx, "t", AlterTopicRequest{DedupeWindowMs: &bad}); apierr.Status(err) != 400 || !contains(err, "dedupe_window_ms") {
		t.Fatalf("PATCH with 500: %v", err)
	}
	v, err := b.AlterTopic(ctx, "t", AlterTopicRequest{DedupeWindowMs: &max})
	if err != nil || v.DedupeWindowMs != max {
		t.Fatalf("PATCH to a day: %+v, %v", v.DedupeWindowMs, err)
	}
	d, err := b.DescribeTopic("t")
	if err != nil || d.DedupeWindowMs != max {
		t.Fatalf("describe shows %d, %v", d.DedupeWindowMs, err)
	}
}

func contains(err error, s string) bool {
	return err != nil && len(s) > 0 && errContains(err.Error(), s)
}

func errContains(msg, s string) bool {
	for i := 0; i+len(s) <= len(msg); i++ {
		if msg[i:i+len(s)] == s {
			return true
		}
	}
	return false
}
