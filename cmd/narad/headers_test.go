package main

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/narad-io/narad/client"
)

// pub --header NAME=VALUE (repeatable) sends each as Narad-Header-NAME
// on every message; a flag without "=" or a name given twice is refused
// before anything is sent.
func TestPubSendsHeaders(t *testing.T) {
	b := newBroker(t, accept)
	mustOK(t, against(b).run(t, "pub", "orders", "x", "-n", "2", "--header", "trace-id=t1", "--header", "note=a=b, c", "--header", "empty="))
	got := b.only("POST", "/v1/topics/orders/produce")
	if len(got) != 2 {
		t.Fatalf("%d produces", len(got))
	}
	for _, r := range got {
		if r.Header.Get("Narad-Header-Trace-Id") != "t1" || r.Header.Get("Narad-Header-Note") != "a=b, c" || len(r.Header.Values("Narad-Header-Empty")) != 1 {
			t.Errorf("request headers %v", r.Header)
		}
	}
	for _, bad := range [][]string{{"--header", "novalue"}, {"--header", "=v"}, {"--header", "a=1", "--header", "a=2"}} {
		b := newBroker(t, accept)
		r := against(b).run(t, append([]string{"pub", "orders", "x"}, bad...)...)
		if r.code == 0 || len(b.requests()) != 0 || !strings.Contains(r.stderr, "--header") {
			t.Errorf("%v: exit %d, %d requests, stderr %q", bad, r.code, len(b.requests()), r.stderr)
		}
	}
}

// TestPubRefusesHeadersTheAPIRefuses: --header is held to the broker's
// rules as typed, so "BadName" is refused as the API refuses it (it was
// lower-cased and stored as "badname"), and so are the broker's own
// names, a value that is not UTF-8 and a name given twice; nothing is
// sent.
func TestPubRefusesHeadersTheAPIRefuses(t *testing.T) {
	for _, tt := range []struct {
		flags []string
		says  string
	}{
		{[]string{"BadName=1"}, `--header: invalid header "BadName": names are lower-case [a-z0-9._-]`},
		{[]string{"trace id=1"}, `--header: invalid header "trace id": names are lower-case [a-z0-9._-]`},
		{[]string{"narad-dlq-reason=x"}, `--header: invalid header "narad-dlq-reason": names beginning "narad-" are reserved for the broker`},
		{[]string{"v=\xff"}, `--header: invalid header "v": value is not valid UTF-8`},
		{[]string{"a=1", "a=2"}, `--header: invalid header "a": given twice`},
		{[]string{"big=" + strings.Repeat("x", 4097)}, `--header: invalid header "big": value of 4097 bytes, at most 4096`},
	} {
		b := newBroker(t, accept)
		args := []string{"pub", "orders", "x"}
		for _, f := range tt.flags {
			args = append(args, "--header", f)
		}
		r := against(b).run(t, args...)
		if r.code != 1 || !strings.Contains(r.stderr, tt.says) {
			t.Errorf("%.60q: exit %d stderr %.200q, want it to say %q", tt.flags, r.code, r.stderr, tt.says)
		}
		if n := len(b.requests()); n != 0 {
			t.Errorf("%.60q: %d requests sent", tt.flags, n)
		}
	}
}

// sub and replay show a record's headers under its header line, sorted,
// a value that is not plain text quoted; -o json has them in the object.
func TestMessagesShowHeaders(t *testing.T) {
	var m client.Message
	if err := json.Unmarshal([]byte(`{"topic":"t","partition":0,"offset":3,"payload":"x","payload_encoding":"text","timestamp":0,"headers":{"z":"last","a":"esc\u001b[31m","narad-dlq-reason":"nacked"}}`), &m); err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := (messagePrinter{w: &buf}).print(m); err != nil {
		t.Fatal(err)
	}
	want := "# p0@3\n#   a: \"esc\\x1b[31m\"\n#   narad-dlq-reason: nacked\n#   z: last\nx\n"
	if buf.String() != want {
		t.Errorf("got\n%q\nwant\n%q", buf.String(), want)
	}
	buf.Reset()
	if err := (messagePrinter{w: &buf, format: formatJSON}).print(m); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(buf.String(), `"headers":{"z":"last"`) {
		t.Errorf("-o json: %s", buf.String())
	}

	b := newBroker(t, func(r req) (int, string) {
		return 200, `{"messages":[{"partition":1,"offset":0,"payload":"m","payload_encoding":"text","headers":{"k":"v"}}]}`
	})
	r := against(b).run(t, "replay", "orders", "--partition", "1", "--from", "0", "--to", "0")
	mustOK(t, r)
	if !strings.Contains(r.stdout, "# p1@0\n#   k: v\nm\n") {
		t.Errorf("replay printed %q", r.stdout)
	}
}

// pub --msg-id ID sends Narad-Msg-Id on its one message; with several
// messages (--count, --lines) or an empty id it is refused before
// anything is sent.
func TestPubSendsMsgID(t *testing.T) {
	b := newBroker(t, accept)
	mustOK(t, against(b).run(t, "pub", "orders", "x", "--msg-id", "order-17"))
	got := b.only("POST", "/v1/topics/orders/produce")
	if len(got) != 1 || got[0].Header.Get("Narad-Msg-Id") != "order-17" || got[0].Query.Has("key") {
		t.Fatalf("produces %+v", got)
	}
	b = newBroker(t, accept)
	mustOK(t, against(b).run(t, "pub", "orders", "x"))
	if got := b.only("POST", "/v1/topics/orders/produce"); len(got) != 1 || len(got[0].Header.Values("Narad-Msg-Id")) != 0 {
		t.Fatalf("without --msg-id: %+v", got)
	}
	c := against(newBroker(t, accept))
	c.stdin = "one\n"
	mustOK(t, c.run(t, "pub", "orders", "--lines", "--msg-id", "only-line"))

	for _, tc := range []struct {
		stdin string
		args  []string
	}{
		{"", []string{"x", "--count", "2", "--msg-id", "m"}},
		{"one\ntwo\n", []string{"--lines", "--msg-id", "m"}},
		{"", []string{"x", "--msg-id", ""}},
	} {
		b := newBroker(t, accept)
		c := against(b)
		c.stdin = tc.stdin
		r := c.run(t, append([]string{"pub", "orders"}, tc.args...)...)
		if r.code == 0 || len(b.requests()) != 0 || !strings.Contains(r.stderr, "--msg-id") {
			t.Errorf("%v: exit %d, %d requests, stderr %q", tc.args, r.code, len(b.requests()), r.stderr)
		}
	}
}
