package rpc

import (
	"bytes"
	"context"
	"net/http"
	"reflect"
	"slices"
	"testing"
	"time"

	"github.com/narad-io/narad/internal/apierr"
	"github.com/narad-io/narad/internal/storage"
)

func TestCommitRoundTrip(t *testing.T) {
	big := bytes.Repeat([]byte{0xAB}, 20<<20) // over gRPC's 4 MiB default
	sent := []storage.Record{
		{Key: []byte("k1"), Payload: []byte(`{"a":1}`), Origin: 0xA11CE, Seq: 7},           // a WAL record's source travels: its message id
		{Key: nil, Payload: []byte{0x00, 0xff, 0x00, '\n'}, Origin: 0xA11CE, Seq: 1 << 40}, // keyless, binary
		{Key: []byte{0}, Payload: big},
	}
	var got []storage.Record
	var gotTopic string
	var gotPart int
	var gotVersion, gotInc uint64
	f := &fake{commit: func(_ context.Context, topic string, inc uint64, p int, recs []storage.Record, v uint64) error {
		gotTopic, gotInc, gotPart, got, gotVersion = topic, inc, p, recs, v
		recs[0].Offset, recs[2].Offset = 40, 41 // stored; recs[1] left out (a duplicate)
		return nil
	}}
	addr, _ := startServer(t, f)
	p := testPool(t, testSecret)
	if err := p.Commit(context.Background(), addr, "orders", 1<<33+5, 7, sent, 4242); err != nil {
		t.Fatal(err)
	}
	if gotTopic != "orders" || gotInc != 1<<33+5 || gotPart != 7 || len(got) != len(sent) || gotVersion != 4242 {
		t.Fatalf("got topic %q incarnation %d partition %d version %d, %d records", gotTopic, gotInc, gotPart, gotVersion, len(got))
	}
	// The owner's offsets come back into the sender's records.
	if sent[0].Offset != 40 || sent[1].Offset != storage.NoOffset || sent[2].Offset != 41 {
		t.Fatalf("offsets after the commit: %d %d %d", sent[0].Offset, sent[1].Offset, sent[2].Offset)
	}
	for i := range sent {
		if !bytes.Equal(got[i].Key, sent[i].Key) || !bytes.Equal(got[i].Payload, sent[i].Payload) {
			t.Errorf("record %d differs", i)
		}
		if got[i].Origin != sent[i].Origin || got[i].Seq != sent[i].Seq {
			t.Errorf("record %d: WAL source %x/%d, sent %x/%d", i, got[i].Origin, got[i].Seq, sent[i].Origin, sent[i].Seq)
		}
		if len(got[i].Key) == 0 != (len(sent[i].Key) == 0) {
			t.Errorf("record %d: keyless changed", i)
		}
	}
}

func TestForwardRoundTrip(t *testing.T) {
	req := ForwardRequest{
		Method: "POST", Path: "/v1/topics/orders/ack", RawQuery: "receipt_handle=2:0:861651&x=%20",
		Body: []byte{1, 2, 3, 0}, User: "admin", ContentType: "application/json",
	}
	body := bytes.Repeat([]byte("z"), 8<<20) // a response over 4 MiB
	want := ForwardResponse{Status: 503, ContentType: "application/json", Body: body, RetryAfter: 2 * time.Second, MetaVersion: 4711}
	var got ForwardRequest
	f := &fake{forward: func(_ context.Context, r ForwardRequest) (ForwardResponse, error) {
		got = r
		return want, nil
	}}
	addr, _ := startServer(t, f)
	p := testPool(t, testSecret)
	resp, err := p.Forward(context.Background(), addr, req)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, req) {
		t.Errorf("handler saw %+v, want %+v", got, req)
	}
	if !reflect.DeepEqual(resp, want) {
		t.Errorf("response %d %q %d bytes %v, want %d %q %d bytes %v",
			resp.Status, resp.ContentType, len(resp.Body), resp.RetryAfter, want.Status, want.ContentType, len(want.Body), want.RetryAfter)
	}
}

func TestStatsRoundTrip(t *testing.T) {
	want := []PartitionStats{
		{Partition: 0, Available: true, Segments: 3, OldestOffset: 10, HighWatermark: 1 << 40, SizeBytes: 123456789,
			OldestSegmentAt: 1700000000, ConsumerFrontier: 99, Exact: true, InFlight: 7, OldestUnconsumedAt: 1796004226001,
			CommitStall: "waiting for in-sync followers: b (no fetch in this epoch)",
			Cursors: []CursorPosition{{Child: "audit", Epoch: "e1", NextOffset: 42},
				{Child: "dr", Epoch: "e7", NextOffset: 0, State: "retrying", AckedAtMs: 1796004226123, StateReason: "target answers 503"},
				// The refused record's parent offset crosses nodes, 0 included.
				{Child: "dr2", Epoch: "e8", NextOffset: 0, State: "rejected", StateReason: "refused at 0", RejectedOffset: new(uint64)},
				{Child: "dr3", Epoch: "e9", NextOffset: 17, State: "rejected", RejectedOffset: func() *uint64 { v := uint64(17); return &v }()}}},
		{Partition: 2, Available: false},
	}
	var gotParts []int
	var gotTopic string
	f := &fake{stats: func(_ context.Context, topic string, parts []int) ([]PartitionStats, error) {
		gotTopic, gotParts = topic, parts
		return want, nil
	}}
	addr, _ := startServer(t, f)
	p := testPool(t, testSecret)
	got, err := p.Stats(context.Background(), addr, "orders", []int{0, 2}, false)
	if err != nil {
		t.Fatal(err)
	}
	if f.exact.Load() {
		t.Errorf("a describe's stats arrived asking for exact tails")
	}
	if gotTopic != "orders" || !reflect.DeepEqual(gotParts, []int{0, 2}) {
		t.Errorf("handler saw %q %v", gotTopic, gotParts)
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("stats\n got %+v\nwant %+v", got, want)
	}
	// No partitions means "the handler decides", and arrives as nil.
	if _, err := p.Stats(context.Background(), addr, "orders", nil, true); err != nil || gotParts != nil {
		t.Errorf("nil partitions: err %v, handler saw %v", err, gotParts)
	}
	if !f.exact.Load() {
		t.Errorf("an attach point's stats arrived without asking for exact tails")
	}
}

func TestConfirmJoinHeartbeatRoundTrip(t *testing.T) {
	m := Member{ID: "n2", RaftAddr: "10.0.0.2:7946", RPCAddr: "10.0.0.2:7947", HTTPAddr: "10.0.0.2:7942", DiskID: "0f1e2d3c", Network: "wan"}
	var gotName, gotEpoch string
	var joined, beat Member
	f := &fake{
		confirm: func(_ context.Context, name, epoch string) (bool, bool, uint64, error) {
			gotName, gotEpoch = name, epoch
			return true, false, 91, nil
		},
		join: func(_ context.Context, mm Member) (JoinResult, error) {
			joined = mm
			return JoinResult{Admitted: false, LeaderID: "n1", LeaderRPCAddr: "10.0.0.1:7947"}, nil
		},
		heartbeat: func(_ context.Context, mm Member) error { beat = mm; return nil },
	}
	addr, _ := startServer(t, f)
	p := testPool(t, testSecret)
	ctx := context.Background()

	exists, current, err := p.ConfirmTopic(ctx, addr, "orders", "e3")
	if err != nil || !exists || current || gotName != "orders" || gotEpoch != "e3" {
		t.Errorf("confirm: %v %v %v, handler saw %q %q", exists, current, err, gotName, gotEpoch)
	}
	exists, inc, err := p.TopicIncarnation(ctx, addr, "orders")
	if err != nil || !exists || inc != 91 || gotName != "orders" || gotEpoch != "" {
		t.Errorf("incarnation: %v %d %v, handler saw %q %q", exists, inc, err, gotName, gotEpoch)
	}
	res, err := p.Join(ctx, addr, m)
	if err != nil || joined != m || res != (JoinResult{LeaderID: "n1", LeaderRPCAddr: "10.0.0.1:7947"}) {
		t.Errorf("join: %+v %v, handler saw %+v", res, err, joined)
	}
	if err := p.Heartbeat(ctx, addr, m); err != nil || beat != m {
		t.Errorf("heartbeat: %v, handler saw %+v", err, beat)
	}
	if n := f.calls.Load(); n != 4 {
		t.Errorf("handler calls = %d, want 4", n)
	}
}

// Wait carries topic and wait to the handler and its answer back; a
// refusal keeps its HTTP status; the caller's cancel ends a parked call.
func TestWaitRoundTrip(t *testing.T) {
	var gotTopic string
	var gotWait time.Duration
	f := &fake{wait: func(ctx context.Context, topic string, wait time.Duration) (bool, error) {
		gotTopic, gotWait = topic, wait
		switch topic {
		case "gone":
			return false, apierr.NotFound("topic %q does not exist", topic)
		case "parked":
			<-ctx.Done()
			return false, nil
		}
		return true, nil
	}}
	addr, _ := startServer(t, f)
	p := testPool(t, testSecret)
	ctx := context.Background()

	woken, err := p.Wait(ctx, addr, "orders", 1500*time.Millisecond)
	if err != nil || !woken || gotTopic != "orders" || gotWait != 1500*time.Millisecond {
		t.Fatalf("wait: %v %v, handler saw %q %v", woken, err, gotTopic, gotWait)
	}
	if _, err := p.Wait(ctx, addr, "gone", time.Second); apierr.Status(err) != http.StatusNotFound {
		t.Fatalf("wait on a missing topic: %v, want 404", err)
	}
	cctx, cancel := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { _, err := p.Wait(cctx, addr, "parked", time.Minute); done <- err }()
	cancel()
	select {
	case err := <-done:
		if err == nil {
			t.Fatal("a cancelled wait answered without error")
		}
	case <-time.After(10 * time.Second):
		t.Fatal("a cancelled wait did not return")
	}
}

// The move session and owner confirmation carry their arguments and
// answers; a read over the cap is refused before the handler.
func TestMoveCallsRoundTrip(t *testing.T) {
	addr, _ := startServer(t, &fake{})
	p := testPool(t, testSecret)
	ctx := context.Background()
	if owner, target, err := p.ConfirmOwner(ctx, addr, "orders", 3); err != nil || owner != "n1" || target != "n2" {
		t.Fatalf("ConfirmOwner = %q %q %v", owner, target, err)
	}
	if err := p.Flip(ctx, addr, "orders", 3, "n1", "n2"); err != nil {
		t.Fatal(err)
	}
	if hwm, err := p.MoveFreeze(ctx, addr, "orders", 3, 1500*time.Millisecond, "n2/7"); err != nil || hwm != 1504 {
		t.Fatalf("MoveFreeze = %d %v", hwm, err)
	}
	files, hwm, err := p.MoveFiles(ctx, addr, "orders", 3)
	if err != nil || hwm != 7 || len(files) != 1 || files[0] != (MoveFile{Name: "orders", Size: 3}) {
		t.Fatalf("MoveFiles = %v %d %v", files, hwm, err)
	}
	data, err := p.MoveRead(ctx, addr, "orders", 3, "00000000000000000000.log", 10, 20)
	if err != nil || string(data) != "orders/3/00000000000000000000.log@10+20" {
		t.Fatalf("MoveRead = %q %v", data, err)
	}
	if _, err := p.MoveRead(ctx, addr, "orders", 3, "x", 0, MaxMoveRead+1); apierr.Status(err) != http.StatusBadRequest {
		t.Fatalf("oversized read: %v, want 400", err)
	}
}

// The read index carries the leader's version back.
func TestReadIndexRoundTrip(t *testing.T) {
	addr, _ := startServer(t, &fake{})
	p := testPool(t, testSecret)
	if v, err := p.ReadIndex(context.Background(), addr); err != nil || v != 4242 {
		t.Fatalf("ReadIndex = %d %v, want 4242", v, err)
	}
}

// A heartbeat carries its unreachable-leader reports to the handler
// field by field (the duration in whole milliseconds); one without any
// hands the handler none.
func TestHeartbeatCarriesUnreachableLeaders(t *testing.T) {
	var got [][]UnreachableLeader
	f := &fake{reports: func(us []UnreachableLeader) { got = append(got, us) }}
	addr, _ := startServer(t, f)
	p := testPool(t, testSecret)
	ctx := context.Background()
	sent := []UnreachableLeader{{Topic: "orders", Partition: 3, Leader: "n1", LeaderEpoch: 7, For: 2500 * time.Millisecond},
		{Topic: "audit", Partition: 0, Leader: "n4", LeaderEpoch: 1, For: time.Millisecond}}
	if err := p.Heartbeat(ctx, addr, Member{ID: "n2"}, sent...); err != nil {
		t.Fatal(err)
	}
	if err := p.Heartbeat(ctx, addr, Member{ID: "n2"}); err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || !slices.Equal(got[0], sent) || len(got[1]) != 0 {
		t.Fatalf("handler saw %+v, want %+v then none", got, sent)
	}
}
