package fanout

import (
	"slices"
	"testing"
	"time"

	"github.com/narad-io/narad/internal/header"
	"github.com/narad-io/narad/internal/storage"
)

// A fan-out child's copies carry their records' headers, the broker's
// own (narad-) included; a record without headers is copied without.
func TestChildCopiesKeepHeaders(t *testing.T) {
	n := newNode(t, Config{Linger: time.Millisecond})
	n.link(1, 1)
	n.e.Start()
	hs := []header.Header{{Name: "narad-dlq-topic", Value: "orders"}, {Name: "trace-id", Value: "t1"}}
	recs := []storage.Record{{Key: []byte("k"), Payload: []byte("a"), Headers: hs}, {Payload: []byte("b")}}
	if err := commitLocal(n.b, n.ctx(), "src", 0, recs); err != nil {
		t.Fatal(err)
	}
	waitFor(t, 10*time.Second, "two copies", func() bool { return len(n.read("dst", 0)) == 2 })
	got := n.read("dst", 0)
	if !slices.Equal(got[0].Headers, hs) || got[1].Headers != nil {
		t.Fatalf("copies' headers %v and %v, want %v and none", got[0].Headers, got[1].Headers, hs)
	}
}

// A remote child's copies carry headers through the target's public
// batch produce; a reserved narad- header, which that API refuses from
// any client, arrives as narad.… and wins over a client header of that
// name; the producer id (narad-msg-id) crosses as the record's msg_id.
func TestRemoteCopiesCarryHeaders(t *testing.T) {
	tg := newTarget(t)
	n := newNode(t, Config{Linger: time.Millisecond})
	n.createTopic("orders", 1, 0)
	n.attachRemote("orders", "orders-dr", tg.srv.URL, "")
	n.e.Start()
	hs := []header.Header{{Name: "a", Value: "1"}, {Name: "narad-dlq-reason", Value: "nacked"}, {Name: "narad-msg-id", Value: "m-1"}, {Name: "narad.dlq-reason", Value: "client's"}}
	if err := commitLocal(n.b, n.ctx(), "orders", 0, []storage.Record{{Payload: []byte("x"), Headers: hs}, {Payload: []byte("y")}}); err != nil {
		t.Fatal(err)
	}
	waitFor(t, 10*time.Second, "two records at the target", func() bool { return len(tg.records()) >= 2 })
	got := tg.records()
	want := map[string]string{"a": "1", "narad.dlq-reason": "nacked"}
	if len(got[0].headers) != len(want) || got[0].headers["a"] != "1" || got[0].headers["narad.dlq-reason"] != "nacked" {
		t.Fatalf("target got headers %v, want %v", got[0].headers, want)
	}
	if got[0].msgID != "m-1" {
		t.Fatalf("the producer id arrived as msg_id %q, want m-1", got[0].msgID)
	}
	if got[1].headers != nil {
		t.Fatalf("a record without headers arrived with %v", got[1].headers)
	}
}

// A record held across a failing round is detached from the read buffers
// with its headers (they share no buffer: strings).
func TestDetachKeepsHeaders(t *testing.T) {
	hs := []header.Header{{Name: "a", Value: "b"}}
	out := detach([]storage.Record{{Offset: 3, Payload: []byte("x"), Headers: hs}, {Offset: 4, Payload: []byte("y")}})
	if !slices.Equal(out[0].Headers, hs) || out[1].Headers != nil || out[0].Offset != 3 {
		t.Fatalf("detached %+v", out)
	}
}
