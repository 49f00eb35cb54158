package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func accept(r req) (int, string) { return 202, "" }

func produceBodies(b *broker, topic string) []string {
	var out []string
	for _, r := range b.only("POST", "/v1/topics/"+topic+"/produce") {
		out = append(out, r.Body)
	}
	return out
}

func TestPubCountExpandsIndex(t *testing.T) {
	b := newBroker(t, accept)
	r := against(b).run(t, "pub", "orders", `{"n":{i}}`, "--count", "3", "--key", "k1")
	mustOK(t, r)
	got := b.requests()
	if len(got) != 3 {
		t.Fatalf("%d requests, want 3: %+v", len(got), got)
	}
	for i, want := range []string{`{"n":0}`, `{"n":1}`, `{"n":2}`} {
		if got[i].Method != "POST" || got[i].Path != "/v1/topics/orders/produce" || got[i].Body != want ||
			got[i].q("key") != "k1" || got[i].Query.Has("partition") {
			t.Errorf("request %d: %+v, want body %s key=k1", i, got[i], want)
		}
	}
	if r.stdout != "" || r.stderr != "" {
		t.Errorf("not a terminal, yet output: stdout %q stderr %q", r.stdout, r.stderr)
	}
}

func TestPubProgressOnlyOnATerminal(t *testing.T) {
	b := newBroker(t, accept)
	c := against(b)
	c.tty = true
	r := c.run(t, "pub", "orders", "x", "-n", "3")
	mustOK(t, r)
	if !strings.Contains(r.stderr, "published 3 messages to orders") || r.stdout != "" {
		t.Errorf("stdout %q stderr %q", r.stdout, r.stderr)
	}
}

// pub prints each message's id as the broker answered it, a line each;
// -o json the answers, an object a line.
func TestPubPrintsTheIDs(t *testing.T) {
	n := 0
	b := newBroker(t, func(r req) (int, string) {
		n++
		return 202, fmt.Sprintf(`{"id":"w%d","partition":1}`, n)
	})
	r := against(b).run(t, "pub", "orders", "x", "--count", "2")
	mustOK(t, r)
	if r.stdout != "w1\nw2\n" {
		t.Fatalf("stdout %q, want the two ids", r.stdout)
	}
	r = against(b).run(t, "pub", "orders", "x", "-o", "json")
	mustOK(t, r)
	if strings.TrimSpace(r.stdout) != `{"id":"w3","partition":1}` {
		t.Fatalf("-o json: %q", r.stdout)
	}
}

func TestPubSingleMessageIsSentAsTyped(t *testing.T) {
	b := newBroker(t, accept)
	mustOK(t, against(b).run(t, "pub", "orders", "literal {i}", "--partition", "0"))
	got := b.requests()
	if len(got) != 1 || got[0].Body != "literal {i}" || got[0].q("partition") != "0" || got[0].Query.Has("key") {
		t.Fatalf("requests %+v", got)
	}
}

func TestPubSources(t *testing.T) {
	b := newBroker(t, accept)
	c := against(b)

	c.stdin = "\x00\x01binary\xff"
	mustOK(t, c.run(t, "pub", "t"))

	path := filepath.Join(t.TempDir(), "payload.json")
	if err := os.WriteFile(path, []byte(`{"from":"file"}`), 0o600); err != nil {
		t.Fatal(err)
	}
	c.stdin = ""
	mustOK(t, c.run(t, "pub", "t", "--file", path))

	c.stdin = "one\n\ntwo\r\nthree"
	mustOK(t, c.run(t, "pub", "t", "--lines"))

	want := []string{"\x00\x01binary\xff", `{"from":"file"}`, "one", "two", "three"}
	got := produceBodies(b, "t")
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Fatalf("bodies %q, want %q", got, want)
	}

	r := c.run(t, "pub", "t", "msg", "--file", path)
	if r.code != 1 || !strings.Contains(r.stderr, "either MSG or --file") {
		t.Errorf("MSG and --file: exit %d stderr %q", r.code, r.stderr)
	}
	if len(b.requests()) != len(want) {
		t.Error("a refused pub still sent something")
	}
}

func TestPubStopsAtFirstFailure(t *testing.T) {
	n := 0
	b := newBroker(t, func(r req) (int, string) {
		n++
		if n == 2 {
			return 400, `{"error":"payload does not match the topic schema"}`
		}
		return 202, ""
	})
	r := against(b).run(t, "pub", "t", "m{i}", "--count", "5")
	if r.code != 1 || r.stderr != "narad: after 1 of 5 messages: payload does not match the topic schema (HTTP 400)\n" {
		t.Fatalf("exit %d stderr %q", r.code, r.stderr)
	}
	if len(b.requests()) != 2 {
		t.Errorf("%d requests after a failure, want 2", len(b.requests()))
	}
}
