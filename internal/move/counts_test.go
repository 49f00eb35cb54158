package move

import (
	"testing"

	"github.com/narad-io/narad/internal/broker"
)

// Delivery counts move with the partition: the source writes them at its
// freeze, the copy carries the counts file, and the new owner's first
// delivery of a record the source delivered three times says 4.
func TestMoveCarriesDeliveryCounts(t *testing.T) {
	p := newPair(t)
	p.fill(5)
	part := 0
	for want := 1; want <= 3; want++ {
		msgs, err := p.src.b.Consume(p.ctx(), broker.ConsumeRequest{Topic: "orders", Partition: &part, Max: 1})
		if err != nil || len(msgs) != 1 || msgs[0].DeliveryCount != want {
			t.Fatalf("delivery %d at the source: %+v %v", want, msgs, err)
		}
		if err := p.src.b.Ack(p.ctx(), "orders", msgs[0].ReceiptHandle, broker.Nack); err != nil {
			t.Fatal(err)
		}
	}
	if err := p.w.session(p.ctx(), p.target()); err != nil {
		t.Fatal(err)
	}
	msgs, err := p.dst.b.Consume(p.ctx(), broker.ConsumeRequest{Topic: "orders", Partition: &part, Max: 2})
	if err != nil || len(msgs) != 2 {
		t.Fatalf("consume at the new owner: %+v %v", msgs, err)
	}
	if msgs[0].Offset != 0 || msgs[0].DeliveryCount != 4 || msgs[1].DeliveryCount != 1 {
		t.Fatalf("at the new owner: offset %d says %d, offset %d says %d; want 4 and 1",
			msgs[0].Offset, msgs[0].DeliveryCount, msgs[1].Offset, msgs[1].DeliveryCount)
	}
}
