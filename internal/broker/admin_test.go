package broker

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/narad-io/narad/internal/meta"
	"github.com/narad-io/narad/internal/refusal"
)

func i64(v int64) *int64 { return &v }
func ip(v int) *int      { return &v }

// Topic administration validates every field (docs/http-api.md) before the
// metastore is asked anything: each refusal leaves the metastore exactly
// as it was, and the ones about a missing topic are typed.
func topicAdminRefusals(t *testing.T, b *Broker, disk *fakeDisk) {
	ctx := testCtx(t)
	createTestTopic(t, b, "orders", 3)
	typed := `{"type":"object","properties":{"id":{"type":"integer"},"note":{"type":"string"}}}`
	if _, err := b.CreateTopic(ctx, CreateTopicRequest{Name: "evolving", Partitions: 1, Schema: json.RawMessage(typed)}, ""); err != nil {
		t.Fatal(err)
	}
	long := strings.Repeat("n", MaxTopicNameLen+1)

	creates := []struct {
		name   string
		req    CreateTopicRequest
		status int
		says   string
	}{
		{"empty name", CreateTopicRequest{}, 400, "1..249 characters, got 0"},
		{"long name", CreateTopicRequest{Name: long}, 400, "got 250"},
		{"dot", CreateTopicRequest{Name: "."}, 400, "reserved"},
		{"dot-dot", CreateTopicRequest{Name: ".."}, 400, "reserved"},
		{"separator", CreateTopicRequest{Name: "a/b"}, 400, "outside [A-Za-z0-9._-] at position 1"},
		{"partitions over 108", CreateTopicRequest{Name: "x", Partitions: 109}, 400, "partitions must be 1..108, got 109"},
		{"negative partitions", CreateTopicRequest{Name: "x", Partitions: -1}, 400, "got -1"},
		{"retention below an hour", CreateTopicRequest{Name: "x", RetentionMs: i64(3_599_999)}, 400, "retention_ms must be 0 (keep forever) or at least 3600000"},
		{"visibility below 1 s", CreateTopicRequest{Name: "x", VisibilityTimeoutMs: i64(999)}, 400, "visibility_timeout_ms must be 1000..43200000"},
		{"visibility over 12 h", CreateTopicRequest{Name: "x", VisibilityTimeoutMs: i64(43_200_001)}, 400, "got 43200001"},
		{"in-flight 0", CreateTopicRequest{Name: "x", MaxInFlight: ip(0)}, 400, "max_in_flight_per_partition must be 1..1000000"},
		{"acked-ahead over the cap", CreateTopicRequest{Name: "x", MaxAckedAhead: ip(1_000_001)}, 400, "max_acked_ahead_per_partition must be 1..1000000"},
		{"schema not a schema", CreateTopicRequest{Name: "x", Schema: json.RawMessage(`{"type": 12}`)}, 400, "schema"},
		{"delay without parent", CreateTopicRequest{Name: "x", FanoutDelayMs: i64(1000)}, 400, "fanout_delay_ms needs parent"},
		{"parent without fan-out", CreateTopicRequest{Name: "x", Parent: "orders"}, 400, "needs the fan-out engine"},
		{"replication factor 0", CreateTopicRequest{Name: "x", ReplicationFactor: ip(0)}, 400, "replication_factor must be 1..5, got 0"},
		{"replication factor 6", CreateTopicRequest{Name: "x", ReplicationFactor: ip(6)}, 400, "replication_factor must be 1..5, got 6"},
		// One node here: a second copy has no node of its own.
		{"more copies than live nodes", CreateTopicRequest{Name: "x", ReplicationFactor: ip(2)}, 400, "replication_factor 2 is more than the 1 live nodes"},
		{"exists", CreateTopicRequest{Name: "orders"}, 409, `topic "orders" already exists`},
	}
	before := b.meta.TopicsVersion()
	for _, c := range creates {
		_, err := b.CreateTopic(ctx, c.req, "alice")
		refused(t, "create: "+c.name, err, c.status, "", c.says)
	}

	// A full data disk refuses creates (typed: the room is kept for
	// deletes), and the create gate refuses them until the startup
	// reconcile is done.
	disk.full.Store(true)
	_, err := b.CreateTopic(ctx, CreateTopicRequest{Name: "x"}, "")
	refused(t, "create on a full disk", err, 503, refusal.ErrDiskFull, "disk is full")
	disk.full.Store(false)
	b.createOpen.Store(false)
	_, err = b.CreateTopic(ctx, CreateTopicRequest{Name: "x"}, "")
	refused(t, "create before the startup reconcile", err, 503, "", "still starting")
	b.createOpen.Store(true)

	alters := []struct {
		name, topic string
		req         AlterTopicRequest
		status      int
		kind        refusal.Kind
		says        string
	}{
		{"unknown topic", "nope", AlterTopicRequest{RetentionMs: i64(0)}, 404, refusal.ErrTopicNotFound, `topic "nope" does not exist`},
		{"bad name", "a b", AlterTopicRequest{RetentionMs: i64(0)}, 400, "", "outside"},
		{"nothing to change", "orders", AlterTopicRequest{}, 400, "", "nothing to change"},
		{"shrink", "orders", AlterTopicRequest{Partitions: ip(2)}, 400, "", "partitions may only grow: \"orders\" has 3, asked for 2"},
		// The count it has changes nothing: 400 like {}, as the reference answers.
		{"same partition count", "orders", AlterTopicRequest{Partitions: ip(3)}, 400, "", "nothing to change: \"orders\" already has 3 partitions"},
		// An incompatible evolution is an invalid request, not a conflict.
		{"schema drops a property", "evolving", AlterTopicRequest{Schema: json.RawMessage(`{"type":"object","properties":{"id":{"type":"integer"}}}`)}, 400, "", "incompatible schema change"},
		{"schema changes a type", "evolving", AlterTopicRequest{Schema: json.RawMessage(`{"type":"object","properties":{"id":{"type":"string"},"note":{"type":"string"}}}`)}, 400, "", "incompatible schema change"},
		{"grow past 108", "orders", AlterTopicRequest{Partitions: ip(109)}, 400, "", "1..108"},
		{"retention", "orders", AlterTopicRequest{RetentionMs: i64(5)}, 400, "", "retention_ms"},
		{"visibility", "orders", AlterTopicRequest{VisibilityTimeoutMs: i64(0)}, 400, "", "visibility_timeout_ms"},
		{"in-flight", "orders", AlterTopicRequest{MaxInFlight: ip(-3)}, 400, "", "max_in_flight_per_partition"},
		{"acked-ahead", "orders", AlterTopicRequest{MaxAckedAhead: ip(0)}, 400, "", "max_acked_ahead_per_partition"},
		{"schema", "orders", AlterTopicRequest{Schema: json.RawMessage(`{"type": "nothing"}`)}, 400, "", "schema"},
		{"replication factor 0", "orders", AlterTopicRequest{ReplicationFactor: ip(0)}, 400, "", "replication_factor must be 1..5, got 0"},
		{"replication factor 6", "orders", AlterTopicRequest{ReplicationFactor: ip(6)}, 400, "", "replication_factor must be 1..5, got 6"},
		{"more copies than live nodes", "orders", AlterTopicRequest{ReplicationFactor: ip(3)}, 400, "", "replication_factor 3 is more than the 1 live nodes"},
		// the valid change first, then an invalid one: all or nothing
		{"one bad field spoils the rest", "orders", AlterTopicRequest{RetentionMs: i64(0), MaxInFlight: ip(0)}, 400, "", "max_in_flight_per_partition"},
	}
	for _, c := range alters {
		_, err := b.AlterTopic(ctx, c.topic, c.req)
		refused(t, "alter: "+c.name, err, c.status, c.kind, c.says)
	}

	err = b.DeleteTopic(ctx, "nope")
	refused(t, "delete an unknown topic", err, 404, refusal.ErrTopicNotFound, `topic "nope" does not exist`)
	refused(t, "delete a bad name", b.DeleteTopic(ctx, ".."), 400, "", "reserved")
	_, err = b.DescribeTopic("nope")
	refused(t, "describe an unknown topic", err, 404, refusal.ErrTopicNotFound, "does not exist")
	_, _, err = b.ListTopics(-1, "")
	refused(t, "list -1", err, 400, "", "limit must be 1..1000, got -1")
	// Above the largest page is served capped, as the reference does.
	if page, _, err := b.ListTopics(MaxListLimit+1, ""); err != nil || len(page) == 0 || len(page) > MaxListLimit {
		t.Errorf("list %d: %d topics, %v; want a capped page", MaxListLimit+1, len(page), err)
	}
	_, _, err = b.ListTopics(10, "not/a/name")
	refused(t, "list from a forged token", err, 400, "", "page_token is not one this server issued")

	if after := b.meta.TopicsVersion(); after != before {
		t.Fatalf("refusals changed the metastore: topics version %d -> %d", before, after)
	}
	if got, _ := b.meta.Topic("orders"); got.Partitions != 3 || got.MaxInFlight != 1024 || got.RetentionMs != 7*24*3600*1000 {
		t.Fatalf("orders after refused alters: %+v", got)
	}

	// What the refusals guard still works: defaults applied, growth
	// assigned at once, delete on a full disk.
	v, err := b.CreateTopic(ctx, CreateTopicRequest{Name: "fresh"}, "alice")
	if err != nil || v.Partitions != 3 || v.VisibilityTimeoutMs != 30_000 || v.Owner != "alice" || v.Role != "standalone" || v.ReplicationFactor != 1 {
		t.Fatalf("create with defaults: %+v, %v", v, err)
	}
	// Within the live nodes, the factor is taken and stored (the
	// controller brings the replicas to it).
	b.cfg.LiveNodes = func() int { return 3 }
	if v, err = b.AlterTopic(ctx, "fresh", AlterTopicRequest{ReplicationFactor: ip(3)}); err != nil || v.ReplicationFactor != 3 {
		t.Fatalf("replication factor 3 over 3 live nodes: %+v, %v", v, err)
	}
	if got, _ := b.meta.Topic("fresh"); got.ReplicationFactor != 3 {
		t.Fatalf("stored factor %d", got.ReplicationFactor)
	}
	_, err = b.AlterTopic(ctx, "fresh", AlterTopicRequest{ReplicationFactor: ip(4)})
	refused(t, "alter: 4 copies over 3 live nodes", err, 400, "", "replication_factor 4 is more than the 3 live nodes")
	b.cfg.LiveNodes = nil
	if v, err = b.AlterTopic(ctx, "fresh", AlterTopicRequest{Partitions: ip(5)}); err != nil || v.Partitions != 5 {
		t.Fatalf("grow: %+v, %v", v, err)
	}
	// The count it has, with a real change beside it, is no refusal.
	if v, err = b.AlterTopic(ctx, "fresh", AlterTopicRequest{Partitions: ip(5), MaxInFlight: ip(7)}); err != nil || v.MaxInFlight != 7 {
		t.Fatalf("same count with another change: %+v, %v", v, err)
	}
	if o, ok := b.meta.Owner("fresh", 4); !ok || o != "n1" {
		t.Fatalf("new partition 4 owned by %q (%v), want this node at once", o, ok)
	}
	disk.full.Store(true)
	if err := b.DeleteTopic(ctx, "fresh"); err != nil {
		t.Fatalf("delete on a full disk: %v", err)
	}
	disk.full.Store(false)
	if _, ok := b.meta.Topic("fresh"); ok {
		t.Fatal("deleted topic still there")
	}
}

// A topic is refused as not found here when it is a remote child (its
// partitions live on another cluster), whatever the operation.
func remoteChildIsNotATopicHere(t *testing.T, b *Broker) {
	ctx := testCtx(t)
	createTestTopic(t, b, "rc-parent", 1)
	rc := meta.Topic{Name: "orders-dr", Parent: "rc-parent",
		Remote: &meta.RemoteTarget{URL: "https://dr.example:7942", Topic: "orders"}}
	if err := b.meta.CreateTopic(ctx, rc, nil, &meta.AttachSpec{Parent: "rc-parent", Epoch: "e1"}); err != nil {
		t.Fatal(err)
	}
	_, err := b.DescribeTopic("orders-dr")
	refused(t, "describe", err, 404, refusal.ErrTopicNotFound, `a remote child of "rc-parent"`)
	refused(t, "produce", b.Produce(ctx, "orders-dr", ProduceRecord{Payload: []byte("x")}), 404, refusal.ErrTopicNotFound, "remote child")
	refused(t, "commit", commitLocal(b, context.Background(), "orders-dr", 0, nil), 404, refusal.ErrTopicNotFound, "remote child")
}
