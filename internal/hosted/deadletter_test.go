package hosted

import (
	"slices"
	"testing"

	"github.com/narad-io/narad/internal/header"
	"github.com/narad-io/narad/internal/lease"
	"github.com/narad-io/narad/internal/storage"
)

// TestDeadLetterRecordReplacesOldDLQHeaders: a record dead-lettered out of
// a dead-letter topic says where it was last, not where it was first.
func TestDeadLetterRecordReplacesOldDLQHeaders(t *testing.T) {
	src := storage.Record{Key: []byte("k"), Payload: []byte("p"), Headers: []header.Header{
		{Name: HeaderDLQOffset, Value: "9"}, {Name: HeaderDLQTopic, Value: "first"}, {Name: "a", Value: "b"}}}
	got := deadLetterRecord(src, "second", 3, lease.Dead{Offset: 4, DeliveryCount: 5, Reason: lease.ReasonExpired})
	want := []header.Header{{Name: "a", Value: "b"},
		{Name: HeaderDLQDeliveryCount, Value: "5"}, {Name: HeaderDLQOffset, Value: "4"}, {Name: HeaderDLQPartition, Value: "3"},
		{Name: HeaderDLQReason, Value: "expired"}, {Name: HeaderDLQTopic, Value: "second"}}
	if !slices.Equal(got.Headers, want) || string(got.Key) != "k" || string(got.Payload) != "p" {
		t.Fatalf("got %+v; want headers %v", got, want)
	}
	if err := header.Check(got.Headers, header.Reserved); err != nil {
		t.Fatalf("the copy's headers do not pass the broker's check: %v", err)
	}
}

// TestDeadLetterRecordKeepsTheMsgIDOutOfDedupe: a producer id goes to the
// dead-letter copy as narad-dlq-msg-id, never as narad-msg-id, which a
// deduplication window in the dead-letter topic would read (and drop a
// record dead-lettered a second time, after a redrive, as a retry).
func TestDeadLetterRecordKeepsTheMsgIDOutOfDedupe(t *testing.T) {
	src := storage.Record{Key: []byte("k"), Payload: []byte("p"), Headers: header.WithMsgID(nil, "order-7")}
	got := deadLetterRecord(src, "src", 0, lease.Dead{Offset: 1, DeliveryCount: 2, Reason: lease.ReasonNacked})
	if id, ok := header.MsgIDOf(got.Headers); ok {
		t.Fatalf("dead-letter copy carries %s=%q; want it under %s", header.MsgID, id, HeaderDLQMsgID)
	}
	if v, ok := header.Get(got.Headers, HeaderDLQMsgID); !ok || v != "order-7" {
		t.Fatalf("%s = %q, %v; want order-7", HeaderDLQMsgID, v, ok)
	}
	if err := header.Check(got.Headers, header.Reserved); err != nil {
		t.Fatalf("the copy's headers do not pass the broker's check: %v", err)
	}
}
