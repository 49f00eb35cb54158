package broker

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/narad-io/narad/internal/header"
	"github.com/narad-io/narad/internal/meta"
	"github.com/narad-io/narad/internal/refusal"
	"github.com/narad-io/narad/internal/wal"
)

// walSince returns the ingress WAL's records after seq.
func walSince(t *testing.T, b *Broker, seq uint64) []wal.Record {
	t.Helper()
	if b.wal.LastSeq() == seq {
		return nil
	}
	recs, err := b.wal.Read(seq+1, 100_000, 64<<20)
	if err != nil {
		t.Fatal(err)
	}
	return recs
}

// Produce validates every record before it stores any (docs/http-api.md):
// each refusal leaves the ingress WAL as it was, a batch names its first
// failing index, and the refusals other packages act on are typed.
func produceRefusalsStoreNothing(t *testing.T, b *Broker, disk *fakeDisk) {
	ctx := testCtx(t)
	createTestTopic(t, b, "p3", 3)
	if _, err := b.CreateTopic(ctx, CreateTopicRequest{Name: "typed", Partitions: 1,
		Schema: json.RawMessage(`{"type":"object","required":["id"]}`)}, ""); err != nil {
		t.Fatal(err)
	}
	createTestTopic(t, b, "parent", 1)
	delayChild := meta.Topic{Name: "later", Partitions: 1, Parent: "parent", FanoutDelayMs: 60_000, RetentionMs: 0}
	if err := b.meta.CreateTopic(ctx, delayChild, b.assign("later", 0, 1, 1, "parent"),
		&meta.AttachSpec{Parent: "parent", Epoch: "e1", AttachOffsets: []uint64{0}, DelayMs: 60_000}); err != nil {
		t.Fatal(err)
	}
	rec := func(payload string) ProduceRecord { return ProduceRecord{Payload: []byte(payload)} }
	pinned := func(p int) ProduceRecord { return ProduceRecord{Payload: []byte("x"), Partition: &p} }
	big := ProduceRecord{Payload: bytes.Repeat([]byte("b"), MaxPayloadBytes+1)}
	keyed := func(n int) ProduceRecord {
		return ProduceRecord{Key: bytes.Repeat([]byte("k"), n), Payload: []byte("x")}
	}
	headed := func(name, value string) ProduceRecord {
		return ProduceRecord{Payload: []byte("x"), Headers: []header.Header{{Name: name, Value: value}}}
	}
	delayed := func(d time.Duration) ProduceRecord { return ProduceRecord{Payload: []byte("x"), Delay: &d} }
	at := func(ms int64) ProduceRecord { return ProduceRecord{Payload: []byte("x"), DeliverAt: &ms} }
	both := delayed(time.Second)
	both.DeliverAt = at(1).DeliverAt
	many := make([]ProduceRecord, MaxBatchRecords+1)
	for i := range many {
		many[i] = rec("m")
	}

	seq := b.wal.LastSeq()
	cases := []struct {
		name   string
		topic  string
		recs   []ProduceRecord
		batch  bool
		status int
		kind   refusal.Kind
		says   string
	}{
		{"unknown topic", "nope", []ProduceRecord{rec("x")}, false, 404, refusal.ErrTopicNotFound, `topic "nope" does not exist`},
		{"bad name", "a b", []ProduceRecord{rec("x")}, false, 400, "", "outside"},
		{"empty payload", "p3", []ProduceRecord{rec("")}, false, 400, "", "payload is empty"},
		{"payload over 1 MiB", "p3", []ProduceRecord{big}, false, 413, "", "payload of 1048577 bytes is over the 1 MiB cap"},
		{"key over 4 KiB", "p3", []ProduceRecord{keyed(MaxKeyBytes + 1)}, false, 400, "", "key of 4097 bytes is over the 4 KiB cap"},
		{"batch: key over 4 KiB at 1", "p3", []ProduceRecord{keyed(MaxKeyBytes), keyed(MaxKeyBytes + 1)}, true, 400, "", "record 1: key of 4097 bytes"},
		{"partition out of range", "p3", []ProduceRecord{pinned(3)}, false, 400, refusal.ErrPartitionRange, `partition 3 is out of range: "p3" has 3 partitions`},
		{"negative partition", "p3", []ProduceRecord{pinned(-1)}, false, 400, refusal.ErrPartitionRange, "partition -1 is out of range"},
		{"schema violation", "typed", []ProduceRecord{rec(`{"no":"id"}`)}, false, 400, "", `payload does not match the schema of "typed"`},
		{"not JSON under a schema", "typed", []ProduceRecord{rec(`plain`)}, false, 400, "", "schema"},
		{"delay child", "later", []ProduceRecord{rec("x")}, false, 409, "", `"later" is a delay child of "parent"`},
		{"empty batch", "p3", nil, true, 400, "", "no records"},
		{"batch over the cap", "p3", many, true, 413, "", "batch of 10001 records is over the cap of 10000"},
		{"batch: first failing index", "p3", []ProduceRecord{rec("a"), rec("b"), rec(""), pinned(9)}, true, 400, "", "record 2: payload is empty"},
		{"batch: out of range at 1", "p3", []ProduceRecord{rec("a"), pinned(7), rec("")}, true, 400, refusal.ErrPartitionRange, "record 1: partition 7 is out of range"},
		{"batch: too large at 1", "p3", []ProduceRecord{rec("a"), big}, true, 413, "", "record 1: payload of 1048577 bytes"},
		{"reserved header", "p3", []ProduceRecord{headed("narad-dlq-topic", "x")}, false, 400, "", `header "narad-dlq-topic": names beginning "narad-" are reserved`},
		{"bad header name", "p3", []ProduceRecord{headed("A", "x")}, false, 400, "", `header "A"`},
		{"batch: header value over 4 KiB at 1", "p3", []ProduceRecord{headed("a", "b"), headed("big", strings.Repeat("v", header.MaxValue+1))}, true, 400, "", `record 1: invalid header "big"`},
		{"batch: schema at 1", "typed", []ProduceRecord{rec(`{"id":1}`), rec(`{}`)}, true, 400, "", "record 1: payload does not match"},
		{"delay over a year", "p3", []ProduceRecord{delayed(MaxScheduleAhead + time.Millisecond)}, false, 400, refusal.ErrInvalid, "is out of range (0 .. 1 year)"},
		{"negative delay", "p3", []ProduceRecord{delayed(-time.Second)}, false, 400, refusal.ErrInvalid, "delay -1s is out of range"},
		{"delay and deliver_at", "p3", []ProduceRecord{both}, false, 400, refusal.ErrInvalid, "delay and deliver_at are both given"},
		{"batch: deliver_at over a year at 1", "p3", []ProduceRecord{rec("a"), at(time.Now().Add(2 * MaxScheduleAhead).UnixMilli())}, true, 400, refusal.ErrInvalid, "record 1: deliver_at"},
	}
	for _, c := range cases {
		var err error
		if c.batch {
			err = b.ProduceBatch(ctx, c.topic, c.recs)
		} else {
			err = b.Produce(ctx, c.topic, c.recs[0])
		}
		refused(t, c.name, err, c.status, c.kind, c.says)
	}
	// CheckBatch is the batch's validation alone: the same first index.
	refused(t, "CheckBatch", b.CheckBatch("p3", []ProduceRecord{rec("a"), pinned(5)}), 400, refusal.ErrPartitionRange, "record 1: partition 5")
	refused(t, "CheckBatch of an unknown topic", b.CheckBatch("nope", nil), 404, refusal.ErrTopicNotFound, "does not exist")

	disk.full.Store(true)
	refused(t, "produce on a full disk", b.Produce(ctx, "p3", rec("x")), 503, refusal.ErrDiskFull, "disk is full: nothing was stored")
	disk.full.Store(false)

	if got := walSince(t, b, seq); len(got) != 0 {
		t.Fatalf("refused produces stored %d records", len(got))
	}
	for _, reason := range []string{"not_found", "empty", "too_large", "bad_partition", "schema", "delay_child", "disk_full", "key_too_long", "bad_header", "bad_schedule"} {
		series := fmt.Sprintf(`narad_produce_rejections_total{reason=%q,topic=`, reason)
		if !strings.Contains(metricsText(b), series) {
			t.Errorf("no rejection counted as %s", reason)
		}
	}
	if err := b.Produce(ctx, "typed", rec(`{"id":1}`)); err != nil {
		t.Fatalf("a valid record after the refusals: %v", err)
	}
	if got := walSince(t, b, seq); len(got) != 1 {
		t.Fatalf("%d records stored, want 1", len(got))
	}
}

// KeyPartition is FNV-1a 32-bit of the key bytes modulo the partition
// count (docs/http-api.md), checked against the algorithm's published test
// vectors rather than against itself.
func TestKeyPartitionIsFNV1a(t *testing.T) {
	for _, c := range []struct {
		key  string
		hash uint32
	}{{"a", 0xe40c292c}, {"foobar", 0xbf9cf968}} {
		for _, n := range []int{1, 3, 7, 108} {
			if got, want := KeyPartition([]byte(c.key), n), int(c.hash%uint32(n)); got != want {
				t.Errorf("KeyPartition(%q, %d) = %d, want %d (FNV-1a %#x)", c.key, n, got, want, c.hash)
			}
		}
	}
}

// Produce chooses each record's partition: a pinned one as given, a keyed
// one by its key's hash, keyless ones in rotation over every partition,
// keylessRun records a turn (the keyless records of a batch share the
// turn's partition); every record carries the topic's incarnation into
// the WAL, in order.
func producePartitionChoice(t *testing.T, b *Broker) {
	ctx := testCtx(t)
	createTestTopic(t, b, "seven", 7)
	seven, _ := b.meta.Topic("seven")
	inc := seven.Incarnation
	seq := b.wal.LastSeq()
	two := 2
	recs := []ProduceRecord{
		{Key: []byte("a"), Payload: []byte("k1")},      // FNV-1a 0xe40c292c % 7 = 5
		{Key: []byte("foobar"), Payload: []byte("k2")}, // 0xbf9cf968 % 7 = 0
		{Key: []byte("a"), Partition: &two, Payload: []byte("pinned")},
		{Key: []byte("a"), Payload: []byte("k3")},
	}
	if err := b.ProduceBatch(ctx, "seven", recs); err != nil {
		t.Fatal(err)
	}
	// Keyless records: a run of keylessRun on one partition, whether they
	// come one a request or in batches, then the next partition's turn.
	for i := range 3 {
		if err := b.Produce(ctx, "seven", ProduceRecord{Payload: []byte(fmt.Sprint("r", i))}); err != nil {
			t.Fatal(err)
		}
	}
	fill := make([]ProduceRecord, keylessRun-3)
	for i := range fill {
		fill[i] = ProduceRecord{Payload: []byte(fmt.Sprint("f", i))}
	}
	if err := b.ProduceBatch(ctx, "seven", fill); err != nil {
		t.Fatal(err)
	}
	if err := b.Produce(ctx, "seven", ProduceRecord{Payload: []byte("next")}); err != nil {
		t.Fatal(err)
	}
	got := walSince(t, b, seq)
	if len(got) != 4+keylessRun+1 {
		t.Fatalf("%d records in the WAL, want %d", len(got), 4+keylessRun+1)
	}
	for i, want := range []int32{5, 0, 2, 5} {
		if r := got[i]; r.Partition != want || string(r.Payload) != string(recs[i].Payload) || !bytes.Equal(r.Key, recs[i].Key) {
			t.Errorf("record %d: partition %d key %q payload %q, want partition %d", i, r.Partition, r.Key, r.Payload, want)
		}
	}
	run := got[4].Partition
	for i, r := range got[4 : 4+keylessRun] {
		if r.Partition != run || len(r.Key) != 0 {
			t.Fatalf("keyless record %d (%s): partition %d key %q, want the run's partition %d", i, r.Payload, r.Partition, r.Key, run)
		}
	}
	if r := got[len(got)-1]; r.Partition != (run+1)%7 {
		t.Fatalf("record %d of the rotation (%s): partition %d, want the next turn's %d", keylessRun, r.Payload, r.Partition, (run+1)%7)
	}
	// Batches mixing keyless records with keyed and pinned ones: the
	// keyless ones of a batch go together to the partition in turn, and
	// after 7 turns every partition has had one.
	seq = b.wal.LastSeq()
	seen := map[int32]int{}
	last := int32(-1)
	for n := range 7 * keylessRun / 3 {
		batch := []ProduceRecord{{Payload: []byte("x0")}, {Key: []byte("foobar"), Payload: []byte("keyed")},
			{Payload: []byte("x1")}, {Partition: &two, Payload: []byte("pinned")}, {Payload: []byte("x2")}}
		if err := b.ProduceBatch(ctx, "seven", batch); err != nil {
			t.Fatal(err)
		}
		recs := walSince(t, b, seq)
		seq = b.wal.LastSeq()
		want := recs[0].Partition
		if n == 0 && want != (run+1)%7 || n > 0 && want != last && want != (last+1)%7 {
			t.Fatalf("batch %d: keyless records on partition %d after %d: not a rotation", n, want, last)
		}
		last = want
		for i, wantP := range []int32{want, 0, want, 2, want} {
			if recs[i].Partition != wantP {
				t.Fatalf("batch %d, record %d (%s): partition %d, want %d", n, i, recs[i].Payload, recs[i].Partition, wantP)
			}
		}
		seen[want] += 3
	}
	for p := range int32(7) {
		// Batches of 3 keyless records meet turns of keylessRun at their
		// first record, so a turn holds a few more or fewer.
		if seen[p] < keylessRun-3 || seen[p] > keylessRun+3 {
			t.Fatalf("%d batches spread their keyless records %v over 7 partitions, want %d±3 on each", 7*keylessRun/3, seen, keylessRun)
		}
	}
	for i, r := range got {
		if r.Topic != "seven" || r.Incarnation != inc || inc == 0 || r.AcceptedAt == 0 {
			t.Fatalf("record %d: topic %q incarnation %d (topic's %d) accepted at %d", i, r.Topic, r.Incarnation, inc, r.AcceptedAt)
		}
	}
}

// metricsText is the broker's metrics exposition.
func metricsText(b *Broker) string {
	rec := httptest.NewRecorder()
	b.m.Handler().ServeHTTP(rec, httptest.NewRequest("GET", "/metrics", nil))
	return rec.Body.String()
}

// A record with no key, partition or msg_id skips, on a replicated topic,
// the partitions stalled on this node, and keeps its turn when all are.
func TestNextPartitionSkipsStalled(t *testing.T) {
	b := newTestBroker(t, Config{})
	stall := func(ps ...int) {
		b.fwd.mu.Lock()
		defer b.fwd.mu.Unlock()
		b.fwd.queues = map[forwardKey]*forwardQueue{}
		for _, p := range ps {
			b.fwd.queues[forwardKey{"r", 7, p}] = &forwardQueue{since: time.Now().Add(-time.Minute)}
		}
	}
	placed := func(rf int) map[int]int {
		top := meta.Topic{Name: "r", Incarnation: 7, Partitions: 3, ReplicationFactor: rf}
		ts := &topicState{}
		got := map[int]int{}
		for range 30 {
			got[b.nextPartition(top, ts, keylessRun, time.Now())]++
		}
		return got
	}
	stall(1)
	if got := placed(3); got[1] != 0 || got[0]+got[2] != 30 {
		t.Errorf("replicated, partition 1 stalled: placed %v, want none on 1", got)
	}
	if got := placed(1); got[0] != 10 || got[1] != 10 || got[2] != 10 {
		t.Errorf("one copy (no forwards): placed %v, want 10 on each in turn", got)
	}
	stall(0, 1, 2)
	if got := placed(3); got[0] != 10 || got[1] != 10 || got[2] != 10 {
		t.Errorf("every partition stalled: placed %v, want 10 on each in turn", got)
	}
}

// Each node starts the rotation at its own place: the node second of three
// members places its first keyless records on partition 1*partitions/3,
// so nodes whose clients produce alike hold different partitions at a
// time.
func TestKeylessRotationStartsAtTheNodesPlace(t *testing.T) {
	b := newTestBroker(t, Config{})
	ctx := testCtx(t)
	for _, id := range []string{"n0", "n1", "n2"} {
		if err := b.meta.UpsertMember(ctx, meta.Member{ID: id, RaftAddr: "127.0.0.1:1", State: meta.MemberAlive}); err != nil {
			t.Fatal(err)
		}
	}
	for _, parts := range []int{3, 6} {
		name := fmt.Sprint("phase", parts)
		createTestTopic(t, b, name, parts)
		seq := b.wal.LastSeq()
		if err := b.Produce(ctx, name, ProduceRecord{Payload: []byte("x")}); err != nil {
			t.Fatal(err)
		}
		if got := walSince(t, b, seq); len(got) != 1 || got[0].Partition != int32(parts/3) {
			t.Fatalf("%d partitions: first keyless record placed %v, want on partition %d", parts, got, parts/3)
		}
	}
}
