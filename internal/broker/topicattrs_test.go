package broker

import (
	"fmt"
	"maps"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/narad-io/narad/internal/refusal"
)

// Tags and aws_attributes are set at create and replaced whole by a
// PATCH ({} clears); limits are refused as invalid before the metastore
// is asked anything; modified_at is created_at at create, moves with
// every PATCH and not with a refused one.
func TestTopicTagsAttributesModifiedAt(t *testing.T) {
	t.Parallel()
	var now atomic.Int64
	now.Store(1_000)
	b := newTestBroker(t, Config{Now: func() time.Time { return time.Unix(now.Load(), 0) }})
	ctx := testCtx(t)

	tags := map[string]string{"team": "pay", "cost-centre": ""}
	attrs := map[string]string{"Policy": `{"Version":"2012-10-17"}`, "ReceiveMessageWaitTimeSeconds": "20"}
	v, err := b.CreateTopic(ctx, CreateTopicRequest{Name: "q", Partitions: 1, Tags: tags, AWSAttributes: attrs}, "alice")
	if err != nil {
		t.Fatal(err)
	}
	if !maps.Equal(v.Tags, tags) || !maps.Equal(v.AWSAttributes, attrs) || v.CreatedAt != 1_000 || v.ModifiedAt != 1_000 {
		t.Fatalf("created: %+v", v.Topic)
	}
	// An empty map at create is no map.
	if v, err = b.CreateTopic(ctx, CreateTopicRequest{Name: "plain", Partitions: 1, Tags: map[string]string{}}, ""); err != nil || v.Tags != nil {
		t.Fatalf("create with {}: %+v, %v", v.Topic, err)
	}

	now.Store(2_000)
	newTags := map[string]string{"team": "ops"}
	if v, err = b.AlterTopic(ctx, "q", AlterTopicRequest{Tags: newTags}); err != nil {
		t.Fatal(err)
	}
	if !maps.Equal(v.Tags, newTags) || !maps.Equal(v.AWSAttributes, attrs) || v.ModifiedAt != 2_000 || v.CreatedAt != 1_000 {
		t.Fatalf("tags replaced: %+v", v.Topic)
	}

	// Refusals: 400, invalid, and nothing changes (not even modified_at).
	now.Store(3_000)
	many := map[string]string{}
	for i := range 51 {
		many[fmt.Sprintf("k%d", i)] = "v"
	}
	before := b.meta.TopicsVersion()
	for _, c := range []struct {
		name string
		req  AlterTopicRequest
		says string
	}{
		{"51 tags", AlterTopicRequest{Tags: many}, "at most 50, got 51"},
		{"key of 129 bytes", AlterTopicRequest{Tags: map[string]string{strings.Repeat("k", 129): "v"}}, "1..128 bytes, got 129"},
		{"aws: key", AlterTopicRequest{Tags: map[string]string{"aws:createdBy": "me"}}, `prefix "aws:" is reserved`},
		{"value of 257 bytes", AlterTopicRequest{Tags: map[string]string{"k": strings.Repeat("v", 257)}}, "at most 256 bytes"},
		{"unknown attribute", AlterTopicRequest{AWSAttributes: map[string]string{"VisibilityTimeout": "30"}}, "unknown key \"VisibilityTimeout\"; allowed: ArchivePolicy"},
		{"attribute over 10 KiB", AlterTopicRequest{AWSAttributes: map[string]string{"Policy": strings.Repeat("p", 10<<10+1)}}, "Policy must be at most 10240 bytes"},
		// A valid change beside a bad one: all or nothing.
		{"good tags, bad attribute", AlterTopicRequest{Tags: map[string]string{}, AWSAttributes: map[string]string{"Nope": ""}}, "unknown key"},
	} {
		_, err := b.AlterTopic(ctx, "q", c.req)
		refused(t, "alter: "+c.name, err, 400, refusal.ErrInvalid, c.says)
		_, err = b.CreateTopic(ctx, CreateTopicRequest{Name: "x", Tags: c.req.Tags, AWSAttributes: c.req.AWSAttributes}, "")
		refused(t, "create: "+c.name, err, 400, refusal.ErrInvalid, c.says)
	}
	if after := b.meta.TopicsVersion(); after != before {
		t.Fatalf("refusals changed the metastore: topics version %d -> %d", before, after)
	}
	if got, _ := b.meta.Topic("q"); got.ModifiedAt != 2_000 || !maps.Equal(got.Tags, newTags) {
		t.Fatalf("after refused alters: %+v", got)
	}
	if _, ok := b.meta.Topic("x"); ok {
		t.Fatal("a refused create made a topic")
	}

	// {} clears; an attribute change alone is a change; modified_at moves.
	now.Store(4_000)
	if v, err = b.AlterTopic(ctx, "q", AlterTopicRequest{Tags: map[string]string{}, AWSAttributes: map[string]string{"DisplayName": "Q"}}); err != nil {
		t.Fatal(err)
	}
	if v.Tags != nil || !maps.Equal(v.AWSAttributes, map[string]string{"DisplayName": "Q"}) || v.ModifiedAt != 4_000 {
		t.Fatalf("cleared: %+v", v.Topic)
	}
	// Any other field moves it too, and describe and list show it.
	now.Store(5_000)
	if _, err = b.AlterTopic(ctx, "q", AlterTopicRequest{RetentionMs: i64(0)}); err != nil {
		t.Fatal(err)
	}
	d, err := b.DescribeTopic("q")
	if err != nil || d.ModifiedAt != 5_000 || d.AWSAttributes["DisplayName"] != "Q" {
		t.Fatalf("describe: %+v, %v", d.Topic, err)
	}
	page, _, err := b.ListTopics(0, "")
	if err != nil || len(page) != 2 || page[1].Name != "q" || page[1].ModifiedAt != 5_000 || page[0].ModifiedAt != 1_000 {
		t.Fatalf("list: %+v, %v", page, err)
	}
}
