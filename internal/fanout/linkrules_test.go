package fanout

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/narad-io/narad/internal/apierr"
	"github.com/narad-io/narad/internal/broker"
	"github.com/narad-io/narad/internal/topic"
)

// wantStatus checks err reaches a client with status (apierr.From, the
// edge's table) and a sentence that holds says.
func wantStatus(t *testing.T, what string, err error, status int, says string) {
	t.Helper()
	if ae, ok := apierr.From(err); !ok || ae.Status != status || !strings.Contains(ae.Message, says) {
		t.Errorf("%s: %v, want %d saying %q", what, err, status, says)
	}
}

// Invalid combinations are 400, as the reference answers; 409 stays for
// conflicts with another resource's state (docs/http-api.md, "Conventions").
func TestInvalidCombinationsAre400(t *testing.T) {
	n := newNode(t, Config{})
	n.createTopic("hour", 1, 3_600_000) // keeps records 1 h: no delay fits
	n.createTopic("kid", 1, 0)
	n.createTopic("ever", 1, 0)
	n.createTopic("ever-d", 1, 0)
	n.attach("ever", "ever-d", 1000)

	_, err := n.e.Attach(n.ctx(), "kid", AttachRequest{Child: "kid"})
	wantStatus(t, "attach a topic to itself", err, 400, "its own child")
	_, err = n.e.Attach(n.ctx(), "hour", AttachRequest{Child: "kid", DelayMs: 1})
	wantStatus(t, "a delay the parent's retention cannot buffer", err, 400, "delay + 1 h")
	_, err = n.b.AlterTopic(n.ctx(), "ever", broker.AlterTopicRequest{RetentionMs: ptrI64(3_600_000)})
	wantStatus(t, "a retention change below a delay child's floor", err, 400, "ever-d")

	// A topic as its own parent is malformed whether or not the name
	// exists: 400, never the parent's 404 or the name's 409.
	for _, name := range []string{"nosuch", "kid"} {
		_, err = n.e.CreateChild(n.ctx(), topic.CreateRequest{Name: name, Parent: name}, "")
		wantStatus(t, "create "+name+" with itself as parent", err, 400, "its own parent")
	}
	_, err = n.e.CreateChild(n.ctx(), topic.CreateRequest{Name: "x", Parent: "hour", FanoutDelayMs: ptrI64(1)}, "")
	wantStatus(t, "create a delay child the parent cannot buffer", err, 400, "delay + 1 h")

	// Conflicts with another resource's state stay 409.
	_, err = n.e.Attach(n.ctx(), "hour", AttachRequest{Child: "ever-d"})
	wantStatus(t, "a child attached elsewhere", err, 409, "already attached")
	if c, _ := n.meta.Topic("kid"); c.Parent != "" {
		t.Fatalf("a refused attach linked kid: %+v", c)
	}
}

func ptrI64(v int64) *int64 { return &v }

const (
	idSchema   = `{"type":"object","required":["id"],"properties":{"id":{"type":"integer"}}}`
	noteSchema = `{"type":"object","properties":{"note":{"type":"string"}}}`
)

// A child with a schema cannot go under a parent without one: it would
// inherit none and lose its own (409), at attach and at create-as-child.
func TestSchemaGateAtAttach(t *testing.T) {
	n := newNode(t, Config{})
	n.createTopic("bare", 1, 0)
	if _, err := n.b.CreateTopic(n.ctx(), broker.CreateTopicRequest{Name: "typed", Partitions: 1, Schema: json.RawMessage(noteSchema)}, ""); err != nil {
		t.Fatal(err)
	}
	_, err := n.e.Attach(n.ctx(), "bare", AttachRequest{Child: "typed"})
	wantStatus(t, "a schema'd child under a schema-less parent", err, 409, "schema")
	_, err = n.e.CreateChild(n.ctx(), topic.CreateRequest{Name: "typed-c", Parent: "bare", Schema: json.RawMessage(noteSchema)}, "")
	wantStatus(t, "a schema'd child created under a schema-less parent", err, 409, "schema")
	if c, _ := n.meta.Topic("typed"); c.Parent != "" {
		t.Fatalf("the refused attach linked typed: %+v", c)
	}
	if _, ok := n.meta.Topic("typed-c"); ok {
		t.Fatal("the refused create left typed-c")
	}
	// A schema-less child under a schema-less parent is no concern.
	n.createTopic("plainkid", 1, 0)
	n.attach("bare", "plainkid", 0)
}

// An attached child inherits its parent's schema (describe shows it and
// produce is held to it); after a detach it keeps that schema and manages
// it again. Before, the detached child lost it and took invalid bodies.
func TestDetachedChildKeepsTheInheritedSchema(t *testing.T) {
	n := newNode(t, Config{})
	if _, err := n.b.CreateTopic(n.ctx(), broker.CreateTopicRequest{Name: "sp", Partitions: 1, Schema: json.RawMessage(idSchema)}, ""); err != nil {
		t.Fatal(err)
	}
	n.createTopic("k", 1, 0)
	n.attach("sp", "k", 0)
	invalid := []broker.ProduceRecord{{Payload: []byte(`{"note":"no id"}`)}}
	valid := []broker.ProduceRecord{{Payload: []byte(`{"id":7}`)}}
	check := func(when string) {
		t.Helper()
		v, err := n.b.DescribeTopic("k")
		if err != nil || string(v.Schema) != idSchema {
			t.Fatalf("%s: describe shows schema %s (%v), want the parent's", when, v.Schema, err)
		}
		wantStatus(t, when+": an invalid body", n.b.CheckBatch("k", invalid), 400, "schema")
		if err := n.b.CheckBatch("k", valid); err != nil {
			t.Fatalf("%s: a valid body: %v", when, err)
		}
	}
	check("attached")
	if err := n.e.Detach(n.ctx(), "sp", "k"); err != nil {
		t.Fatal(err)
	}
	check("detached")
	// It manages its schema again: an additive evolution is taken, an
	// incompatible one refused as an invalid evolution (400).
	evolved := `{"type":"object","required":["id"],"properties":{"id":{"type":"integer"},"note":{"type":"string"}}}`
	if _, err := n.b.AlterTopic(n.ctx(), "k", broker.AlterTopicRequest{Schema: json.RawMessage(evolved)}); err != nil {
		t.Fatalf("evolving the kept schema: %v", err)
	}
	_, err := n.b.AlterTopic(n.ctx(), "k", broker.AlterTopicRequest{Schema: json.RawMessage(noteSchema)})
	wantStatus(t, "an incompatible evolution of the kept schema", err, 400, "incompatible")

	// A parent's delete leaves its children standalone with its schema too.
	n.createTopic("k2", 1, 0)
	n.attach("sp", "k2", 0)
	if err := n.b.DeleteTopic(n.ctx(), "sp"); err != nil {
		t.Fatal(err)
	}
	if v, err := n.b.DescribeTopic("k2"); err != nil || string(v.Schema) != idSchema || v.Role != topic.RoleStandalone {
		t.Fatalf("child of a deleted parent: %+v %v", v, err)
	}
	wantStatus(t, "child of a deleted parent: an invalid body", n.b.CheckBatch("k2", invalid), 400, "schema")
}
