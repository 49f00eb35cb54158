package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestRetentionZeroKeepsForever: --retention 0 is sent (not dropped as
// "unset", which made a 7-day topic) and 0 is shown as "forever".
func TestRetentionZeroKeepsForever(t *testing.T) {
	topic := `{"name":"audit","partitions":1,"retention_ms":0,"visibility_timeout_ms":30000}`
	b := newBroker(t, func(r req) (int, string) {
		switch {
		case r.Method == "POST":
			return 201, topic
		case r.Path == "/v1/topics":
			return 200, `{"topics":[` + topic + `]}`
		}
		return 200, topic
	})
	c := against(b)
	r := c.run(t, "topic", "add", "audit", "--retention", "0", "--partitions", "1")
	mustOK(t, r)
	if body := b.requests()[0].Body; body != `{"name":"audit","partitions":1,"retention_ms":0}` {
		t.Errorf("body %s", body)
	}
	if r.stdout != "created topic audit: 1 partition, retention forever, visibility 30s\n" {
		t.Errorf("add: %q", r.stdout)
	}
	if r := c.run(t, "topic", "ls"); !strings.Contains(r.stdout, "audit  1           forever") {
		t.Errorf("ls:\n%s", r.stdout)
	}
	if r := c.run(t, "topic", "info", "audit"); !strings.Contains(r.stdout, "retention:           forever\n") {
		t.Errorf("info:\n%s", r.stdout)
	}
	mustOK(t, c.run(t, "topic", "edit", "audit", "--retention", "0"))
	if got := b.only("PATCH", "/v1/topics/audit"); len(got) != 1 || got[0].Body != `{"retention_ms":0}` {
		t.Errorf("edit: %+v", got)
	}
}

// TestReplicationFactorIsSent: --replication-factor reaches the create
// and the edit bodies, and "topic info" shows the factor.
func TestReplicationFactorIsSent(t *testing.T) {
	topic := `{"name":"r","partitions":1,"retention_ms":0,"visibility_timeout_ms":30000,"replication_factor":3}`
	b := newBroker(t, func(r req) (int, string) {
		if r.Method == "POST" {
			return 201, topic
		}
		return 200, topic
	})
	c := against(b)
	mustOK(t, c.run(t, "topic", "add", "r", "--replication-factor", "3"))
	if body := b.requests()[0].Body; body != `{"name":"r","replication_factor":3}` {
		t.Errorf("add body %s", body)
	}
	mustOK(t, c.run(t, "topic", "edit", "r", "--replication-factor", "2"))
	if got := b.only("PATCH", "/v1/topics/r"); len(got) != 1 || got[0].Body != `{"replication_factor":2}` {
		t.Errorf("edit: %+v", got)
	}
	if r := c.run(t, "topic", "info", "r"); !strings.Contains(r.stdout, "replication factor:  3\n") {
		t.Errorf("info:\n%s", r.stdout)
	}
}

// TestFlagErrorsNameTheFlag: a refused value is named by the flag and the
// value as typed, never by the API's field, whether the CLI or the server
// refuses it.
func TestFlagErrorsNameTheFlag(t *testing.T) {
	b := newBroker(t, func(r req) (int, string) {
		return 400, `{"error":"partitions must be 1..108, got 200"}`
	})
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"topic", "add", "t", "--visibility", "13h"}, "narad: --visibility 13h: must be at most 12h\n"},
		{[]string{"topic", "edit", "t", "--visibility", "0"}, "narad: --visibility 0: must be at least 1s\n"},
		{[]string{"topic", "add", "t", "--retention", "30m"}, "narad: --retention 30m: must be 0 (keep forever) or at least 1h\n"},
		{[]string{"topic", "add", "t", "--partitions", "0"}, "narad: --partitions 0: must be at least 1\n"},
		{[]string{"topic", "add", "t", "--max-in-flight", "0"}, "narad: --max-in-flight 0: must be 1..1000000\n"},
		{[]string{"topic", "add", "t", "--replication-factor", "0"}, "narad: --replication-factor 0: must be 1..5\n"},
		{[]string{"topic", "edit", "t", "--replication-factor", "6"}, "narad: --replication-factor 6: must be 1..5\n"},
		{[]string{"sub", "t", "--count", "-1"}, "narad: --count -1: must not be negative\n"},
		{[]string{"pub", "t", "x", "--count", "0"}, "narad: --count 0: must be at least 1\n"},
	} {
		if r := against(b).run(t, tc.args...); r.code != exitError || r.stderr != tc.want {
			t.Errorf("%v: exit %d stderr %q, want %q", tc.args, r.code, r.stderr, tc.want)
		}
	}
	if n := len(b.requests()); n != 0 {
		t.Fatalf("%d requests sent for values the CLI can check", n)
	}
	// The partition maximum is the server's setting: its refusal is
	// retold in the flag's terms, and still exits as an error.
	r := against(b).run(t, "topic", "add", "t", "--partitions", "200")
	if r.code != exitError || r.stderr != "narad: --partitions 200: must be 1..108\n" {
		t.Errorf("server refusal: exit %d stderr %q", r.code, r.stderr)
	}
}

// TestTopicSchemaFile: --schema-file sends the schema on add and edit,
// "-" reads it from standard input, --no-schema removes it, and a file
// that is not JSON is refused before anything is sent.
func TestTopicSchemaFile(t *testing.T) {
	b := newBroker(t, func(r req) (int, string) {
		return 200, `{"name":"orders","partitions":3,"retention_ms":3600000,"visibility_timeout_ms":30000,"schema":{"type":"object"}}`
	})
	dir := t.TempDir()
	file := filepath.Join(dir, "order.schema.json")
	if err := os.WriteFile(file, []byte(`{"type": "object", "required": ["id"]}`), 0o600); err != nil {
		t.Fatal(err)
	}
	c := against(b)
	r := c.run(t, "topic", "add", "orders", "--schema-file", file)
	mustOK(t, r)
	if !strings.HasSuffix(r.stdout, ", with a schema\n") {
		t.Errorf("stdout %q", r.stdout)
	}
	stdin := c
	stdin.stdin = `{"type":"string"}`
	mustOK(t, stdin.run(t, "topic", "edit", "orders", "--schema-file", "-"))
	mustOK(t, c.run(t, "topic", "edit", "orders", "--no-schema"))
	got := b.requests()
	if len(got) != 3 || got[0].Body != `{"name":"orders","schema":{"type":"object","required":["id"]}}` ||
		got[1].Body != `{"schema":{"type":"string"}}` || got[2].Body != `{"schema":null}` {
		t.Fatalf("requests %+v", got)
	}

	bad := filepath.Join(dir, "bad.json")
	os.WriteFile(bad, []byte("{type: object}"), 0o600)
	for _, args := range [][]string{
		{"topic", "add", "x", "--schema-file", bad},
		{"topic", "add", "x", "--schema-file", filepath.Join(dir, "missing.json")},
		{"topic", "edit", "x", "--schema-file", file, "--no-schema"},
	} {
		if r := c.run(t, args...); r.code != exitError || !strings.HasPrefix(r.stderr, "narad: --schema-file") {
			t.Errorf("%v: exit %d stderr %q", args[3:], r.code, r.stderr)
		}
	}
	if n := len(b.requests()); n != 3 {
		t.Errorf("%d requests, want none for the refused files", n-3)
	}
}
