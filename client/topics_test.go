package client

import (
	"context"
	"encoding/json"
	"errors"
	"net/url"
	"testing"
	"time"
)

var ctx = context.Background()

func TestCreateTopic(t *testing.T) {
	c, f := newFake(t, reply{status: 201, body: `{"name":"orders","partitions":3,"retention_ms":3600000,
		"visibility_timeout_ms":30000,"created_at":"2026-01-02T03:04:05Z","children":["a","b"],
		"schema":{"type":"object"},"role":"parent","owner":"n1"}`})
	got, err := c.CreateTopic(ctx, CreateTopicRequest{Name: "orders", Partitions: 3, RetentionMs: new(int64(3600000)), Schema: json.RawMessage(`{"type":"object"}`)})
	if err != nil {
		t.Fatal(err)
	}
	f.expect(seen{Method: "POST", Path: "/v1/topics", ContentType: "application/json",
		Body: `{"name":"orders","partitions":3,"retention_ms":3600000,"schema":{"type":"object"}}`})
	if got.Name != "orders" || got.Partitions != 3 || got.VisibilityTimeoutMs != 30000 || got.Role != "parent" || got.Owner != "n1" {
		t.Errorf("decoded %+v", got)
	}
	if !got.CreatedAt.Equal(time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)) {
		t.Errorf("created_at %v", got.CreatedAt)
	}
	if len(got.Children) != 2 || got.Children[0] != "a" || got.Children[1] != "b" {
		t.Errorf("children %q", got.Children)
	}
	if string(got.Schema) != `{"type":"object"}` {
		t.Errorf("schema %s", got.Schema)
	}
}

func TestCreateTopicConflict(t *testing.T) {
	c, _ := newFake(t, reply{status: 409, body: `{"error":"topic \"orders\" already exists"}`})
	_, err := c.CreateTopic(ctx, CreateTopicRequest{Name: "orders"})
	var apiErr *APIError
	if !errors.As(err, &apiErr) || apiErr.Status != 409 || apiErr.Message != `topic "orders" already exists` {
		t.Fatalf("got %#v", err)
	}
	if err.Error() != `topic "orders" already exists (HTTP 409)` {
		t.Errorf("Error() = %q", err.Error())
	}
}

func TestListTopics(t *testing.T) {
	c, f := newFake(t,
		reply{status: 200, body: `{"topics":[{"name":"a"},{"name":"b"}],"next_page_token":"tok2"}`},
		reply{status: 200, body: `{"topics":[],"next_page_token":""}`},
	)
	topics, next, err := c.ListTopics(ctx, 2, "tok1")
	if err != nil {
		t.Fatal(err)
	}
	if len(topics) != 2 || topics[1].Name != "b" || next != "tok2" {
		t.Fatalf("got %+v next=%q", topics, next)
	}
	topics, next, err = c.ListTopics(ctx, 0, "")
	if err != nil || len(topics) != 0 || next != "" {
		t.Fatalf("second page: %v %v %q", topics, err, next)
	}
	f.expect(
		seen{Method: "GET", Path: "/v1/topics", Query: url.Values{"limit": {"2"}, "page_token": {"tok1"}}},
		seen{Method: "GET", Path: "/v1/topics"},
	)
}

func TestGetTopicEscapesAndDecodesStats(t *testing.T) {
	c, f := newFake(t, reply{status: 200, body: `{"name":"a b/c","partitions":2,"created_at":1796009157,"partition_stats":[
		{"index":0,"owner_node":"n1","segments":2,"oldest_offset":5,"next_offset":9,"high_watermark":9,
		 "size_bytes":1234,"oldest_segment_at":1767323045000,"consumer_frontier":7,"available":false},
		{"index":1,"owner_node":"n2","next_offset":3,"oldest_segment_at":null}]}`})
	got, err := c.GetTopic(ctx, "a b/c")
	if err != nil {
		t.Fatal(err)
	}
	f.expect(seen{Method: "GET", Path: "/v1/topics/a%20b%2Fc"})
	if got.Name != "a b/c" || len(got.PartitionStats) != 2 {
		t.Fatalf("got %+v", got)
	}
	p0, p1 := got.PartitionStats[0], got.PartitionStats[1]
	if p0.OwnerNode != "n1" || p0.Segments != 2 || p0.OldestOffset != 5 || p0.NextOffset != 9 || p0.HighWatermark != 9 ||
		p0.SizeBytes != 1234 || p0.ConsumerFrontier != 7 || p0.Available == nil || *p0.Available {
		t.Errorf("partition 0: %+v", p0)
	}
	if p0.OldestSegmentAt.UnixMilli() != 1767323045000 {
		t.Errorf("oldest_segment_at from millis: %v", p0.OldestSegmentAt)
	}
	if got.CreatedAt.Unix() != 1796009157 {
		t.Errorf("created_at from seconds: %v", got.CreatedAt)
	}
	if p1.Available != nil || !p1.OldestSegmentAt.IsZero() || p1.Index != 1 {
		t.Errorf("partition 1: %+v", p1)
	}
}

func TestAlterTopicSendsOnlySetFields(t *testing.T) {
	c, f := newFake(t, reply{status: 200, body: `{"name":"orders","retention_ms":0,"max_in_flight_per_partition":8}`})
	zero, eight := int64(0), 8
	got, err := c.AlterTopic(ctx, "orders", AlterTopicRequest{RetentionMs: &zero, MaxInFlightPerPartition: &eight})
	if err != nil {
		t.Fatal(err)
	}
	f.expect(seen{Method: "PATCH", Path: "/v1/topics/orders", ContentType: "application/json",
		Body: `{"retention_ms":0,"max_in_flight_per_partition":8}`})
	if got.MaxInFlightPerPartition != 8 {
		t.Errorf("got %+v", got)
	}
}

func TestDeleteTopic(t *testing.T) {
	c, f := newFake(t, reply{status: 204}, reply{status: 404, body: `{"error":"no such topic"}`})
	if err := c.DeleteTopic(ctx, "orders"); err != nil {
		t.Fatal(err)
	}
	err := c.DeleteTopic(ctx, "gone")
	if StatusOf(err) != 404 {
		t.Fatalf("second delete: %v", err)
	}
	f.expect(seen{Method: "DELETE", Path: "/v1/topics/orders"}, seen{Method: "DELETE", Path: "/v1/topics/gone"})
}

func TestPurge(t *testing.T) {
	c, f := newFake(t, reply{status: 200, body: `{"purged":42}`}, reply{status: 403, body: `{"error":"only the owner"}`})
	if n, err := c.Purge(ctx, "a b"); err != nil || n != 42 {
		t.Fatalf("Purge = %d %v", n, err)
	}
	if _, err := c.Purge(ctx, "theirs"); StatusOf(err) != 403 {
		t.Fatalf("refused purge: %v", err)
	}
	if _, err := c.Purge(ctx, ""); err == nil {
		t.Fatal("Purge with no topic: want error")
	}
	f.expect(seen{Method: "POST", Path: "/v1/topics/a%20b/purge"}, seen{Method: "POST", Path: "/v1/topics/theirs/purge"})
}

func TestEmptyNamesNeverReachTheServer(t *testing.T) {
	c, f := newFake(t)
	if _, err := c.CreateTopic(ctx, CreateTopicRequest{}); err == nil {
		t.Error("CreateTopic with no name: want error")
	}
	if err := c.Produce(ctx, "", nil, ProduceOptions{}); err == nil {
		t.Error("Produce with no topic: want error")
	}
	if err := c.Ack(ctx, "t", ""); err == nil {
		t.Error("Ack with no handle: want error")
	}
	f.expect()
}

// TestCreateTopicSendsRetentionZero: 0 is "keep forever", not "the
// default"; leaving it out made the server apply its 7 days.
func TestCreateTopicSendsRetentionZero(t *testing.T) {
	c, f := newFake(t, reply{status: 201, body: `{"name":"log","retention_ms":0}`}, reply{status: 201, body: `{"name":"d"}`})
	if _, err := c.CreateTopic(ctx, CreateTopicRequest{Name: "log", RetentionMs: new(RetentionForever)}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.CreateTopic(ctx, CreateTopicRequest{Name: "d"}); err != nil {
		t.Fatal(err)
	}
	f.expect(seen{Method: "POST", Path: "/v1/topics", Body: `{"name":"log","retention_ms":0}`},
		seen{Method: "POST", Path: "/v1/topics", Body: `{"name":"d"}`})
}

// TestTopicKeepsTheServersJSON: a describe decodes whole (stats included)
// and Raw is the answer as sent, so printing it shows created_at as the
// server's Unix seconds and fields this client does not know.
func TestTopicKeepsTheServersJSON(t *testing.T) {
	body := `{"name":"orders","partitions":1,"created_at":1796004226,"owner_id":"u-7",` +
		`"partition_stats":[{"index":0,"owner_node":"n1","next_offset":2,"oldest_segment_at":1796004226}]}`
	c, _ := newFake(t, reply{status: 200, body: body}, reply{status: 200, body: `{"topics":[{"name":"a","created_at":1},{"name":"b"}]}`})
	d, err := c.GetTopic(ctx, "orders")
	if err != nil {
		t.Fatal(err)
	}
	if d.Name != "orders" || len(d.PartitionStats) != 1 || d.PartitionStats[0].NextOffset != 2 || d.CreatedAt.Unix() != 1796004226 {
		t.Fatalf("decoded %+v", d)
	}
	if string(d.Raw()) != body {
		t.Errorf("Raw %s", d.Raw())
	}
	list, _, err := c.ListTopics(ctx, 0, "")
	if err != nil || len(list) != 2 || string(list[0].Raw()) != `{"name":"a","created_at":1}` || string(list[1].Raw()) != `{"name":"b"}` {
		t.Errorf("listing %+v %v", list, err)
	}
}
