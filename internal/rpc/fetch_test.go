package rpc

import (
	"context"
	"errors"
	"net/http"
	"reflect"
	"testing"
	"time"

	"github.com/narad-io/narad/internal/header"
	"github.com/narad-io/narad/internal/refusal"
	nodepb "github.com/narad-io/narad/internal/rpc/proto"
	"github.com/narad-io/narad/internal/storage"
)

// A fetch carries every field of the request, and the records come back as
// the leader's log holds them: offsets, commit times, keys (keyless stays
// keyless), headers, with the leader's committed point, frontier and side
// state (the echoed version, delivery counts, cursor positions); or, to a
// follower that takes them, as the frames the log stores.
func TestFetchRoundTrip(t *testing.T) {
	req := FetchRequest{Topic: "orders", Incarnation: 1<<33 + 1, Partition: 4, Epoch: 7, Follower: "n2", DiskID: "0f1e2d3c", Offset: 41,
		MaxBytes: 1 << 20, Wait: 500 * time.Millisecond, StateVersion: 1<<62 + 3}
	want := FetchResponse{Epoch: 7, Committed: 40, Frontier: 12, StateVersion: 1<<62 + 4,
		Counts:  []storage.CountEntry{{Offset: 13, Count: 4}, {Offset: 20, Count: 1}},
		Cursors: []FollowedCursor{{Child: "audit", Epoch: "e1", NextOffset: 38}, {Child: "late", Epoch: "e2", NextOffset: 0}}, Records: []storage.Record{
			{Offset: 41, CommittedAt: 1700000000123, Key: []byte("k"), Payload: []byte(`{"a":1}`),
				Headers: []header.Header{{Name: "a", Value: "1"}, {Name: header.MsgID, Value: "m-1"}}},
			{Offset: 42, CommittedAt: 1700000000124, Payload: []byte{0, 0xff}, Origin: 0xA11CE, Seq: 9}, // its WAL source: its message id
		}}
	fetchRoundTrip(t, req, want)
	// A follower that takes frames gets them byte for byte.
	req.Frames, want.Records, want.Frames = true, []storage.Record{}, []byte{0xCA, 0xFE, 0, 1, 2, 0xff}
	fetchRoundTrip(t, req, want)
}

func fetchRoundTrip(t *testing.T, req FetchRequest, want FetchResponse) {
	t.Helper()
	var got FetchRequest
	f := &fake{fetch: func(_ context.Context, r FetchRequest) (FetchResponse, error) {
		got = r
		return want, nil
	}}
	addr, _ := startServer(t, f)
	p := testPool(t, testSecret)
	resp, err := p.Fetch(context.Background(), addr, req)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, req) {
		t.Errorf("served request %+v, want %+v", got, req)
	}
	if !reflect.DeepEqual(resp, want) {
		t.Errorf("response %+v, want %+v", resp, want)
	}
}

// The refusals a follower acts on keep their kind across the edge: it
// tells a stale epoch (learn the new one) from a node that does not lead
// (ask the metastore) from a leader not ready yet (ask again).
func TestFetchRefusalsKeepTheirKind(t *testing.T) {
	for _, kind := range []refusal.Kind{refusal.ErrStaleEpoch, refusal.ErrNotLeader, refusal.ErrNotReady} {
		sent := refusal.New(kind, 200*time.Millisecond, "partition 1 of %q: %s", "orders", kind)
		f := &fake{fetch: func(context.Context, FetchRequest) (FetchResponse, error) { return FetchResponse{}, sent }}
		addr, _ := startServer(t, f)
		_, err := testPool(t, testSecret).Fetch(context.Background(), addr, FetchRequest{Topic: "orders", Partition: 1})
		if r, ok := err.(*refusal.Error); !ok || !errors.Is(err, kind) || !reflect.DeepEqual(r, sent) {
			t.Errorf("%s: got %#v", kind, err)
		}
	}
}

// A leader's answer whose offsets do not ascend by one, or whose headers
// the follower's log could not read back, is refused at the follower's
// edge, never appended.
func TestFetchRefusesRecordsOutOfOrder(t *testing.T) {
	_, err := storedFromPB([]*nodepb.StoredRecord{{Offset: 5, Payload: []byte("a")}, {Offset: 7, Payload: []byte("b")}})
	if asAPIErr(t, err).Status != http.StatusBadGateway {
		t.Fatalf("gap: %v", err)
	}
	long := make([]byte, 1<<17)
	_, err = storedFromPB([]*nodepb.StoredRecord{{Offset: 5, Payload: []byte("a"), Headers: []*nodepb.Header{{Name: "x", Value: string(long)}}}})
	if err == nil {
		t.Fatal("an oversized header was accepted")
	}
}

// Bad numbers in a fetch are a 400, and the handler never sees them.
func TestFetchRefusesNegativeNumbers(t *testing.T) {
	f := &fake{}
	addr, _ := startServer(t, f)
	p := testPool(t, testSecret)
	_, err := p.Fetch(context.Background(), addr, FetchRequest{Topic: "orders", Partition: -1})
	if asAPIErr(t, err).Status != http.StatusBadRequest || f.calls.Load() != 0 {
		t.Fatalf("got %v, handler calls %d", err, f.calls.Load())
	}
}

// A forwarded metastore command reaches the leader's handler byte for
// byte; its failure comes back as an error.
func TestProposeRoundTrip(t *testing.T) {
	f := &fake{}
	addr, _ := startServer(t, f)
	p := testPool(t, testSecret)
	if err := p.Propose(context.Background(), addr, []byte(`{"op":18}`)); err != nil || f.calls.Load() != 1 {
		t.Fatalf("propose: %v, calls %d", err, f.calls.Load())
	}
	if err := p.Propose(context.Background(), addr, []byte("refuse")); err == nil {
		t.Fatal("a refused proposal came back as success")
	}
}
