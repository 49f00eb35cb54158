package main

import (
	"encoding/json"
	"strings"
	"testing"
)

// TestEveryPrintingCommandTakesOutputFlags: -o and its alias --json are
// on every command that prints data.
func TestEveryPrintingCommandTakesOutputFlags(t *testing.T) {
	root := (&app{}).rootCmd()
	for _, path := range [][]string{
		{"topic", "ls"}, {"topic", "info"}, {"topic", "add"}, {"topic", "edit"}, {"topic", "children"}, {"topic", "attach"},
		{"sub"}, {"replay"}, {"user", "ls"}, {"cluster", "members"}, {"cluster", "moves"}, {"cluster", "decommission"},
		{"ctx", "ls"}, {"server", "report"}, {"version"},
	} {
		cmd, _, err := root.Find(path)
		if err != nil || cmd.Name() != path[len(path)-1] {
			t.Errorf("%v: %v", path, err)
			continue
		}
		if cmd.Flags().Lookup("output") == nil || cmd.Flags().ShorthandLookup("o") == nil || cmd.Flags().Lookup("json") == nil {
			t.Errorf("%v lacks -o/--output or --json", path)
		}
	}
}

// TestJSONIsTheAPIsJSON: -o json (and --json) print what the server sent,
// byte for byte in meaning: timestamps as the server wrote them and
// fields the CLI does not know are kept; a listing is the API's list
// object. A bad -o is refused before anything is sent.
func TestJSONIsTheAPIsJSON(t *testing.T) {
	topic := `{"name":"orders","partitions":1,"retention_ms":0,"created_at":"2026-01-02T03:04:05.123456789+02:00","future_field":{"x":[1,2]}}`
	b := newBroker(t, func(r req) (int, string) {
		if r.Path == "/v1/topics" {
			return 200, `{"topics":[` + topic + `],"next_page_token":""}`
		}
		return 200, topic
	})
	c := against(b)
	for _, args := range [][]string{{"topic", "info", "orders", "-o", "json"}, {"topic", "info", "orders", "--json"}} {
		r := c.run(t, args...)
		mustOK(t, r)
		if !jsonEqual(t, r.stdout, topic) {
			t.Errorf("%v printed\n%s\nwant the server's\n%s", args, r.stdout, topic)
		}
	}
	r := c.run(t, "topic", "ls", "-o", "json")
	mustOK(t, r)
	if !jsonEqual(t, r.stdout, `{"topics":[`+topic+`]}`) {
		t.Errorf("ls -o json printed\n%s", r.stdout)
	}
	r = c.run(t, "topic", "ls", "-o", "wide")
	mustOK(t, r)
	if !strings.Contains(r.stdout, "CREATED") || !strings.Contains(r.stdout, "2026-01-02T01:04:05Z") {
		t.Errorf("ls -o wide:\n%s", r.stdout)
	}
	n := len(b.requests())
	for _, args := range [][]string{{"topic", "ls", "-o", "yaml"}, {"topic", "info", "x", "--json", "-o", "wide"}, {"sub", "x", "--raw", "-o", "json"}} {
		if r := c.run(t, args...); r.code != exitError || !strings.HasPrefix(r.stderr, "narad: ") {
			t.Errorf("%v: exit %d stderr %q", args, r.code, r.stderr)
		}
	}
	if len(b.requests()) != n {
		t.Error("a refused -o sent a request")
	}
}

// TestSubJSONIsOneMessagePerLine: sub -o json prints each message as the
// API's object on one line (for jq and line tools), payload bytes as the
// server sent them, no field added.
func TestSubJSONIsOneMessagePerLine(t *testing.T) {
	b := newBroker(t, func(r req) (int, string) {
		if r.Method == "GET" {
			return 200, `{"messages":[{"partition":0,"offset":7,"payload":{"a": 1,   "b":[1, 2]},"receipt_handle":"h1","delivery_count":1},` +
				`{"partition":0,"offset":8,"payload":"hello","payload_encoding":"text","receipt_handle":"h2","delivery_count":1}]}`
		}
		return 200, `{"results":[{"receipt_handle":"h1","status":204},{"receipt_handle":"h2","status":204}]}`
	})
	r := against(b).run(t, "sub", "orders", "--count", "2", "-o", "json")
	mustOK(t, r)
	lines := strings.Split(strings.TrimSuffix(r.stdout, "\n"), "\n")
	if len(lines) != 2 {
		t.Fatalf("%d lines:\n%s", len(lines), r.stdout)
	}
	var m0, m1 map[string]json.RawMessage
	if err := json.Unmarshal([]byte(lines[0]), &m0); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal([]byte(lines[1]), &m1); err != nil {
		t.Fatal(err)
	}
	if lines[0] != `{"partition":0,"offset":7,"payload":{"a": 1,   "b":[1, 2]},"receipt_handle":"h1","delivery_count":1}` ||
		string(m1["payload"]) != `"hello"` || string(m1["payload_encoding"]) != `"text"` {
		t.Errorf("lines:\n%s", r.stdout)
	}
}

// jsonEqual compares two JSON texts by meaning.
func jsonEqual(t *testing.T, got, want string) bool {
	t.Helper()
	var g, w any
	if err := json.Unmarshal([]byte(got), &g); err != nil {
		t.Errorf("not JSON: %v\n%s", err, got)
		return false
	}
	if err := json.Unmarshal([]byte(want), &w); err != nil {
		t.Fatal(err)
	}
	gb, _ := json.Marshal(g)
	wb, _ := json.Marshal(w)
	return string(gb) == string(wb)
}
