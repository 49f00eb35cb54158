package client

import (
	"testing"
)

func TestChildren(t *testing.T) {
	c, f := newFake(t,
		reply{status: 200, body: `{"parent":"orders","children":[{"name":"audit","delay_ms":3600000,"attach_epoch":"67953471cc57a32a","lag_messages":41233,"due_lag_seconds":0.2,"lag_complete":true,"dropped_messages":0},{"name":"plain","delay_ms":0,"attach_epoch":"0011223344556677","lag_messages":0,"lag_complete":false,"dropped_messages":3}]}`},
	)
	kids, err := c.Children(ctx, "a/b")
	if err != nil || len(kids) != 2 {
		t.Fatalf("got %+v %v", kids, err)
	}
	if k := kids[0]; k.Name != "audit" || k.DelayMs != 3600000 || k.AttachEpoch != "67953471cc57a32a" ||
		k.LagMessages != 41233 || k.DueLagSeconds == nil || *k.DueLagSeconds != 0.2 || !k.LagComplete {
		t.Errorf("delay child decoded as %+v", k)
	}
	if k := kids[1]; k.DueLagSeconds != nil || k.LagComplete || k.DroppedMessages != 3 {
		t.Errorf("plain child decoded as %+v", k)
	}
	f.expect(seen{Method: "GET", Path: "/v1/topics/a%2Fb/children"})
}

func TestAttachDetach(t *testing.T) {
	c, f := newFake(t, reply{status: 201, body: `{"name":"audit"}`}, reply{status: 204})
	if err := c.Attach(ctx, "orders", AttachRequest{Child: "audit", DelayMs: 60000}); err != nil {
		t.Fatal(err)
	}
	if err := c.Detach(ctx, "orders", "au dit"); err != nil {
		t.Fatal(err)
	}
	f.expect(
		seen{Method: "POST", Path: "/v1/topics/orders/children", Body: `{"child":"audit","delay_ms":60000}`, ContentType: "application/json"},
		seen{Method: "DELETE", Path: "/v1/topics/orders/children/au%20dit"},
	)
}
