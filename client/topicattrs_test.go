package client

import (
	"maps"
	"testing"
	"time"
)

// Tags and aws_attributes are sent at create when set; a PATCH sends a
// nil map not at all and an empty one as {} (which clears); answers
// decode them and modified_at.
func TestTopicTagsAndAttributes(t *testing.T) {
	c, f := newFake(t,
		reply{status: 201, body: `{"name":"q","created_at":1796323045,"modified_at":1796323045,"tags":{"team":"pay"},"aws_attributes":{"DisplayName":"Q"}}`},
		reply{status: 200, body: `{"name":"q","created_at":1796323045,"modified_at":1796323999,"aws_attributes":{"DisplayName":"Q"}}`},
		reply{status: 200, body: `{"name":"q","created_at":1796323045,"modified_at":1796324000}`},
	)
	got, err := c.CreateTopic(ctx, CreateTopicRequest{Name: "q", Tags: map[string]string{"team": "pay"}, AWSAttributes: map[string]string{"DisplayName": "Q"}})
	if err != nil {
		t.Fatal(err)
	}
	if got.Tags["team"] != "pay" || got.AWSAttributes["DisplayName"] != "Q" || !got.ModifiedAt.Equal(time.Unix(1796323045, 0)) {
		t.Fatalf("created: %+v", got)
	}

	got, err = c.AlterTopic(ctx, "q", AlterTopicRequest{Tags: map[string]string{}})
	if err != nil {
		t.Fatal(err)
	}
	if got.Tags != nil || !maps.Equal(got.AWSAttributes, map[string]string{"DisplayName": "Q"}) || !got.ModifiedAt.Equal(time.Unix(1796323999, 0)) {
		t.Fatalf("cleared: %+v", got)
	}

	zero := int64(0)
	if _, err = c.AlterTopic(ctx, "q", AlterTopicRequest{RetentionMs: &zero}); err != nil {
		t.Fatal(err)
	}
	f.expect(
		seen{Method: "POST", Path: "/v1/topics", ContentType: "application/json",
			Body: `{"name":"q","tags":{"team":"pay"},"aws_attributes":{"DisplayName":"Q"}}`},
		seen{Method: "PATCH", Path: "/v1/topics/q", ContentType: "application/json", Body: `{"tags":{}}`},
		seen{Method: "PATCH", Path: "/v1/topics/q", ContentType: "application/json", Body: `{"retention_ms":0}`},
	)
}
