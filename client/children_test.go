package client

import (
	"encoding/json"
	"strings"
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
	c, f := newFake(t, reply{status: 200, body: `{"name":"orders","role":"parent","children":["audit"],
		"child":"audit","attach_epoch":"67953471cc57a32a","attach_offsets":[0,4]}`}, reply{status: 204})
	res, err := c.Attach(ctx, "orders", AttachRequest{Child: "audit", DelayMs: 60000})
	if err != nil {
		t.Fatal(err)
	}
	if res.Name != "orders" || res.Role != "parent" || res.Child != "audit" || res.AttachEpoch != "67953471cc57a32a" ||
		string(res.AttachOffsets) != "[0,4]" || len(res.Children) != 1 {
		t.Errorf("attach answer decoded as %+v", res)
	}
	if !strings.Contains(string(res.Raw()), `"child":"audit"`) {
		t.Errorf("Raw %s", res.Raw())
	}
	if err := c.Detach(ctx, "orders", "au dit"); err != nil {
		t.Fatal(err)
	}
	f.expect(
		seen{Method: "POST", Path: "/v1/topics/orders/children", Body: `{"child":"audit","delay_ms":60000}`, ContentType: "application/json"},
		seen{Method: "DELETE", Path: "/v1/topics/orders/children/au%20dit"},
	)
}

func TestAttachRemote(t *testing.T) {
	c, f := newFake(t, reply{status: 200, body: `{"name":"orders","child":"orders-dr","delay_ms":0,` +
		`"remote":{"url":"http://dr.example:7942","topic":"orders"},"state":"running","warnings":["plaintext"]}`})
	res, err := c.Attach(ctx, "orders", AttachRequest{Child: "orders-dr", Start: StartOldest,
		Remote: &RemoteTarget{URL: "https://dr.example:7942", Topic: "orders", Username: "r", Password: "pw"}})
	if err != nil {
		t.Fatal(err)
	}
	if res.Child != "orders-dr" || res.Remote == nil || res.Remote.URL != "http://dr.example:7942" || res.State != LinkRunning ||
		len(res.Warnings) != 1 {
		t.Errorf("decoded %+v", res)
	}
	f.expect(seen{Method: "POST", Path: "/v1/topics/orders/children", ContentType: "application/json",
		Body: `{"child":"orders-dr","remote":{"url":"https://dr.example:7942","topic":"orders","username":"r","password":"pw"},"start":"oldest"}`})
}

func TestRemoteChildDecodesAndKeepsItsJSON(t *testing.T) {
	entry := `{"name":"orders-dr","delay_ms":0,"attach_epoch":"e","lag_messages":12,"lag_complete":true,"dropped_messages":0,` +
		`"remote":{"url":"https://dr.example:7942","topic":"orders"},"state":"auth_failed","state_reason":"401 from the target",` +
		`"recovery_point":[{"partition":0,"next_offset":98332,"committed_at_ms":1796004226123,"state":"auth_failed"}]}`
	c, _ := newFake(t, reply{status: 200, body: `{"parent":"orders","children":[` + entry + `]}`})
	kids, err := c.Children(ctx, "orders")
	if err != nil || len(kids) != 1 {
		t.Fatalf("%+v %v", kids, err)
	}
	k := kids[0]
	if k.Remote == nil || k.Remote.URL != "https://dr.example:7942" || k.Remote.Topic != "orders" || k.State != LinkAuthFailed || k.StateReason != "401 from the target" ||
		len(k.RecoveryPoint) != 1 || k.RecoveryPoint[0].NextOffset != 98332 || k.RecoveryPoint[0].CommittedAtMs != 1796004226123 {
		t.Errorf("decoded %+v", k)
	}
	if string(k.Raw()) != entry {
		t.Errorf("Raw\n%s\nwant the entry as sent\n%s", k.Raw(), entry)
	}
}

// An envelope goes out on attach and patch and comes back in the answers;
// a patch of the envelope alone leaves the filter out (unchanged), and
// SetEnvelope with none sends null (remove).
func TestAttachWithEnvelopeAndPatchChild(t *testing.T) {
	const env = `{"format":"sns","topic_arn":"arn:aws:sns:us-east-1:000000000000:news"}`
	c, f := newFake(t,
		reply{status: 200, body: `{"name":"orders","child":"q","delay_ms":0,"envelope":` + env + `}`},
		reply{status: 200, body: `{"name":"q","delay_ms":0,"attach_epoch":"e","lag_messages":0,"lag_complete":true,"dropped_messages":0,"filtered":0,"envelope":` + env + `}`},
		reply{status: 200, body: `{"name":"q","delay_ms":0,"attach_epoch":"e","lag_messages":0,"lag_complete":true,"dropped_messages":0,"filtered":0}`},
	)
	want := LinkEnvelope{Format: EnvelopeSNS, TopicARN: "arn:aws:sns:us-east-1:000000000000:news"}
	res, err := c.Attach(ctx, "orders", AttachRequest{Child: "q", Envelope: &want})
	if err != nil || res.Envelope == nil || *res.Envelope != want {
		t.Fatalf("attach: %+v %v", res, err)
	}
	k, err := c.PatchChild(ctx, "orders", "q", ChildPatch{KeepFilter: true, SetEnvelope: true, Envelope: &want})
	if err != nil || k.Envelope == nil || *k.Envelope != want {
		t.Fatalf("patch: %+v %v", k, err)
	}
	if k, err = c.PatchChild(ctx, "orders", "q", ChildPatch{Filter: json.RawMessage(`{"k":["v"]}`), SetEnvelope: true}); err != nil || k.Envelope != nil {
		t.Fatalf("remove: %+v %v", k, err)
	}
	f.expect(
		seen{Method: "POST", Path: "/v1/topics/orders/children", ContentType: "application/json", Body: `{"child":"q","envelope":` + env + `}`},
		seen{Method: "PATCH", Path: "/v1/topics/orders/children/q", ContentType: "application/json", Body: `{"envelope":` + env + `}`},
		seen{Method: "PATCH", Path: "/v1/topics/orders/children/q", ContentType: "application/json", Body: `{"filter":{"k":["v"]},"envelope":null}`},
	)
}

func TestAttachWithFilterAndPatchChild(t *testing.T) {
	c, f := newFake(t,
		reply{status: 200, body: `{"name":"orders","child":"eu","delay_ms":0,"filter":{"region":["eu"]},"filter_scope":"payload"}`},
		reply{status: 200, body: `{"name":"eu","delay_ms":0,"attach_epoch":"e","lag_messages":0,"lag_complete":true,"dropped_messages":0,"filter":{"k":["v"]},"filter_scope":"headers","filtered":7}`},
		reply{status: 200, body: `{"name":"eu","delay_ms":0,"attach_epoch":"e","lag_messages":0,"lag_complete":true,"dropped_messages":0,"filtered":7}`},
	)
	res, err := c.Attach(ctx, "orders", AttachRequest{Child: "eu", Filter: json.RawMessage(`{"region":["eu"]}`), FilterScope: FilterPayload})
	if err != nil || string(res.Filter) != `{"region":["eu"]}` || res.FilterScope != FilterPayload {
		t.Fatalf("attach: %+v %v", res, err)
	}
	k, err := c.PatchChild(ctx, "orders", "eu", ChildPatch{Filter: json.RawMessage(`{"k":["v"]}`)})
	if err != nil || string(k.Filter) != `{"k":["v"]}` || k.FilterScope != FilterHeaders || k.Filtered != 7 {
		t.Fatalf("patch: %+v %v", k, err)
	}
	if k, err = c.PatchChild(ctx, "orders", "eu", ChildPatch{}); err != nil || k.Filter != nil {
		t.Fatalf("remove: %+v %v", k, err)
	}
	if _, err := c.PatchChild(ctx, "orders", "", ChildPatch{}); err == nil {
		t.Fatal("a patch without a child name was sent")
	}
	f.expect(
		seen{Method: "POST", Path: "/v1/topics/orders/children", ContentType: "application/json",
			Body: `{"child":"eu","filter":{"region":["eu"]},"filter_scope":"payload"}`},
		seen{Method: "PATCH", Path: "/v1/topics/orders/children/eu", ContentType: "application/json", Body: `{"filter":{"k":["v"]}}`},
		seen{Method: "PATCH", Path: "/v1/topics/orders/children/eu", ContentType: "application/json", Body: `{"filter":null}`},
	)
}
