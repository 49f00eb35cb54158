package httpapi

import (
	"strings"
	"testing"
)

// tags and aws_attributes go through the JSON API: read at create and
// PATCH ({} kept apart from absent, so it can clear), shown in the answer,
// refused as 400 before anything is asked when over a limit or unknown,
// and a PATCH of tags needs what any PATCH needs (owner or admin).
func TestTopicTagsAndAttributesThroughTheAPI(t *testing.T) {
	e := newEnv(t)
	w := e.do(request{method: "POST", target: "/v1/topics",
		body: `{"name":"q","tags":{"team":"pay"},"aws_attributes":{"DisplayName":"Q"}}`})
	var v struct {
		Tags          map[string]string `json:"tags"`
		AWSAttributes map[string]string `json:"aws_attributes"`
	}
	if decode(t, w, &v); w.Code != 201 || v.Tags["team"] != "pay" || v.AWSAttributes["DisplayName"] != "Q" {
		t.Fatalf("create: %d %q", w.Code, w.Body.String())
	}
	if got := e.rec.last("CreateTopic"); got != "CreateTopic q partitions=0 owner= tags=map[team:pay] aws_attributes=map[DisplayName:Q]" {
		t.Fatalf("create saw %q", got)
	}
	for body, want := range map[string]string{
		`{"tags":{}}`:                            "AlterTopic q tags={}",
		`{"tags":{"a":"1","b":""}}`:              "AlterTopic q tags=map[a:1 b:]",
		`{"aws_attributes":{},"retention_ms":0}`: "AlterTopic q retention_ms=0 aws_attributes={}",
		`{"retention_ms":0}`:                     "AlterTopic q retention_ms=0",
	} {
		if w := e.do(request{method: "PATCH", target: "/v1/topics/q", body: body}); w.Code != 200 {
			t.Fatalf("PATCH %s: %d %q", body, w.Code, w.Body.String())
		}
		if got := e.rec.last("AlterTopic"); got != want {
			t.Fatalf("PATCH %s: saw %q, want %q", body, got, want)
		}
	}

	calls := len(e.rec.calls)
	for _, c := range []struct{ method, target, body, says string }{
		{"PATCH", "/v1/topics/q", `{"tags":{"aws:x":"1"}}`, "reserved"},
		{"PATCH", "/v1/topics/q", `{"tags":{"` + strings.Repeat("k", 129) + `":"1"}}`, "1..128 bytes"},
		{"PATCH", "/v1/topics/q", `{"aws_attributes":{"VisibilityTimeout":"3"}}`, "allowed: ArchivePolicy"},
		{"PATCH", "/v1/topics/q", `{"aws_attributes":{"Policy":"` + strings.Repeat("p", 10<<10+1) + `"}}`, "at most 10240 bytes"},
		{"PATCH", "/v1/topics/q", `{"tags":{"a":"1","a":"2"}}`, `"tags.a" is given twice`},
		{"PATCH", "/v1/topics/q", `{"tags":["a"]}`, "tags"},
		{"PATCH", "/v1/topics/q", `{"tags":{"a":1}}`, "tags"},
		{"POST", "/v1/topics", `{"name":"x","tags":{"aws:x":"1"}}`, "reserved"},
		{"POST", "/v1/topics", `{"name":"x","aws_attributes":{"Nope":""}}`, "unknown key"},
		{"POST", "/v1/topics", `{"name":"x","Tags":{}}`, "Tags"},
	} {
		w := e.do(request{method: c.method, target: c.target, body: c.body})
		if body := errorBody(t, w); w.Code != 400 || !strings.Contains(body, c.says) {
			t.Errorf("%s %.60s: %d %q, want 400 saying %q", c.method, c.body, w.Code, body, c.says)
		}
	}
	for _, call := range e.rec.calls[calls:] {
		if strings.HasPrefix(call, "AlterTopic") || strings.HasPrefix(call, "CreateTopic") {
			t.Fatalf("a refused request reached the plane: %q", call)
		}
	}

	s := newEnv(t, secured)
	if w := s.do(request{method: "PATCH", target: "/v1/topics/mine", body: `{"tags":{"a":"1"}}`, user: "bob"}); w.Code != 403 {
		t.Fatalf("bob tags alice's topic: %d %q", w.Code, w.Body.String())
	}
	for _, user := range []string{"alice", "root"} {
		if w := s.do(request{method: "PATCH", target: "/v1/topics/mine", body: `{"tags":{"a":"1"}}`, user: user}); w.Code != 200 {
			t.Fatalf("%s tags mine: %d %q", user, w.Code, w.Body.String())
		}
	}
}
