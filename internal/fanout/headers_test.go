package fanout

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/narad-io/narad/internal/header"
	"github.com/narad-io/narad/internal/messageid"
	"github.com/narad-io/narad/internal/meta"
	"github.com/narad-io/narad/internal/storage"
)

// A fan-out child's copies carry their records' headers, the broker's
// own (narad-) included, and each copy names its source by the source's
// message id (narad-source-id).
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
	if !slices.Equal(header.Without(got[0].Headers, header.SourceID), hs) || len(header.Without(got[1].Headers, header.SourceID)) != 0 {
		t.Fatalf("copies' headers %v and %v, want %v and none (beside the source id)", got[0].Headers, got[1].Headers, hs)
	}
	// Each copy names its source by the source's message id, and has an
	// id of its own (its position in the child).
	src := n.read("src", 0)
	parent, _ := n.meta.Topic("src")
	for i := range got {
		want := messageid.Of("src", parent.Incarnation, 0, src[i].Offset, src[i].Origin, src[i].Seq)
		if id, _ := header.Get(got[i].Headers, header.SourceID); id != want {
			t.Fatalf("copy %d: source id %q, want %q", i, id, want)
		}
	}
	if src[0].Origin != 0 || got[0].Origin != 0 {
		t.Fatalf("a copy of a record committed from no WAL has a WAL source: %x, %x", src[0].Origin, got[0].Origin)
	}
}

// A copy's source id is its source record's WAL id when the parent's log
// kept the record's WAL source, the position id otherwise; the copy itself
// keeps no WAL source (its own id is its position in the child).
func TestSourceIDsNameTheSource(t *testing.T) {
	parent := meta.Topic{Name: "src", Incarnation: 9}
	hs := []header.Header{{Name: "z", Value: "1"}}
	recs := []storage.Record{{Offset: 4, Origin: 0xA11CE, Seq: 77, Headers: hs}, {Offset: 5}}
	out := withSourceIDs(recs, parent, 3)
	if id, _ := header.Get(out[0].Headers, header.SourceID); id != messageid.FromWAL(0xA11CE, 77) {
		t.Fatalf("WAL record's source id %q", id)
	}
	if id, _ := header.Get(out[1].Headers, header.SourceID); id != messageid.FromPosition(9, 3, 5) {
		t.Fatalf("position source id %q", id)
	}
	if out[0].Origin != 0 || out[0].Seq != 0 || len(hs) != 1 || out[0].Offset != 4 {
		t.Fatalf("copy %+v, source headers %v", out[0], hs)
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
	want := map[string]string{"a": "1", "narad.dlq-reason": "nacked", "narad.source-id": "(the source's id)"}
	if len(got[0].headers) != len(want) || got[0].headers["a"] != "1" || got[0].headers["narad.dlq-reason"] != "nacked" ||
		!strings.HasPrefix(got[0].headers["narad.source-id"], "p") {
		t.Fatalf("target got headers %v, want %v", got[0].headers, want)
	}
	if got[0].msgID != "m-1" {
		t.Fatalf("the producer id arrived as msg_id %q, want m-1", got[0].msgID)
	}
	if len(got[1].headers) != 1 || got[1].headers["narad.source-id"] == got[0].headers["narad.source-id"] {
		t.Fatalf("a record without headers arrived with %v (want only its own source id)", got[1].headers)
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

// A remote copy carries the source id as narad.source-id where it fits the
// target's client caps, over a client header of that name; a record whose
// own headers fill the caps goes without it rather than being refused.
func TestRemoteSourceIDOnlyWhereItFits(t *testing.T) {
	src := header.Header{Name: header.SourceID, Value: "w0123"}
	got := remoteHeaders([]header.Header{{Name: "narad.source-id", Value: "client's"}, src})
	if len(got) != 1 || got["narad.source-id"] != "w0123" {
		t.Fatalf("over a client header: %v", got)
	}
	full := make([]header.Header, 0, header.MaxCount+1)
	for i := range header.MaxCount {
		full = append(full, header.Header{Name: fmt.Sprintf("h%02d", i), Value: "v"})
	}
	got = remoteHeaders(append(full, src))
	if len(got) != header.MaxCount || got["narad.source-id"] != "" {
		t.Fatalf("64 client headers: %d headers, source id %q", len(got), got["narad.source-id"])
	}
	big := []header.Header{{Name: "big", Value: strings.Repeat("x", header.MaxBytes-3-10)}, src}
	if got := remoteHeaders(big); got["narad.source-id"] != "" {
		t.Fatalf("past the byte cap: source id %q", got["narad.source-id"])
	}
	if got := remoteHeaders(big[:1:1]); len(got) != 1 {
		t.Fatalf("without it: %v", got)
	}
}
