package e2e

import (
	"bytes"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/narad-io/narad/client"
)

// TestHeadersEndToEnd: record headers through a real node — a single
// produce and batches (JSON and binary) carry them, consume and replay
// return them (absent on a record without), a fan-out child's copies
// have them, a client's narad- header is refused, and after a SIGKILL
// and a restart the log still holds them.
func TestHeadersEndToEnd(t *testing.T) {
	n := startNode(t)
	ctx := ctxT(t)
	for _, topic := range []string{"hdr", "hdr-copy"} {
		if _, err := n.c.CreateTopic(ctx, client.CreateTopicRequest{Name: topic, Partitions: 1}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := n.c.Attach(ctx, "hdr", client.AttachRequest{Child: "hdr-copy"}); err != nil {
		t.Fatal(err)
	}
	single := map[string]string{"trace-id": "t-1", "content.type": "text/plain; a, b"}
	if err := n.c.Produce(ctx, "hdr", []byte("one"), client.ProduceOptions{Headers: single}); err != nil {
		t.Fatal(err)
	}
	batch := []client.BatchRecord{
		{Payload: json.RawMessage(`{"n":2}`), Headers: map[string]string{"tenant": "acme", "note": "é \u2028"}},
		{Payload: json.RawMessage(`{"n":3}`)},
	}
	if _, err := n.c.ProduceBatch(ctx, "hdr", batch); err != nil {
		t.Fatalf("JSON batch: %v", err)
	}
	bin := []client.BatchRecord{client.RecordFromBytes([]byte("\x00four")), client.RecordFromBytes([]byte("five"))}
	bin[0].Headers = map[string]string{"bin": "ü"}
	if _, err := n.c.ProduceBatchAs(ctx, "hdr", bin, client.BatchBinary); err != nil {
		t.Fatalf("binary batch: %v", err)
	}
	// A client's narad- header is the broker's: 400, nothing stored.
	req, _ := http.NewRequest("POST", n.url("/v1/topics/hdr/produce"), strings.NewReader("bad"))
	req.Header.Set("Narad-Header-Narad-Dlq-Topic", "x")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 400 {
		t.Fatalf("a narad- header from a client: %d", resp.StatusCode)
	}
	status, body, _ := n.do("POST", "/v1/topics/hdr/produce/batch", "application/json", []byte(`{"records":[{"payload":1},{"payload":1,"headers":{"Up":"x"}}]}`))
	if status != 400 || !bytes.Contains(body, []byte(`"index":1`)) {
		t.Fatalf("a batch with a bad header name: %d %s", status, body)
	}

	want := []map[string]string{single, batch[0].Headers, nil, bin[0].Headers, nil}
	check := func(what string, msgs []client.Message) {
		t.Helper()
		if len(msgs) != len(want) {
			t.Fatalf("%s: %d messages, want %d", what, len(msgs), len(want))
		}
		for i, m := range msgs {
			if len(m.Headers) != len(want[i]) || (want[i] == nil) != (m.Headers == nil) {
				t.Errorf("%s message %d: headers %v, want %v", what, i, m.Headers, want[i])
				continue
			}
			for k, v := range want[i] {
				if m.Headers[k] != v {
					t.Errorf("%s message %d: header %s = %q, want %q", what, i, k, m.Headers[k], v)
				}
			}
			if want[i] == nil && !strings.Contains(what, "child") && bytes.Contains(m.Raw(), []byte(`"headers"`)) {
				t.Errorf("%s message %d: a record without headers shows the field: %s", what, i, m.Raw())
			}
		}
	}
	replay := func(topic string) []client.Message {
		var msgs []client.Message
		eventually(t, 10*time.Second, topic+" replayable", func() bool {
			var err error
			msgs, err = n.c.Consume(ctx, topic, client.ConsumeOptions{Partition: ptr(0), Offset: new(uint64), Max: 100})
			return err == nil && len(msgs) >= len(want)
		})
		return msgs
	}
	// copies strips what fan-out adds to each copy, the source's message
	// id (narad-source-id), after checking it names the source record.
	copies := func(msgs []client.Message) []client.Message {
		t.Helper()
		src := replay("hdr")
		for i := range msgs {
			if got := msgs[i].Headers["narad-source-id"]; got == "" || i >= len(src) || got != src[i].ID {
				t.Fatalf("copy %d: narad-source-id %q, the source's id %q", i, got, src[min(i, len(src)-1)].ID)
			}
			delete(msgs[i].Headers, "narad-source-id")
			if len(msgs[i].Headers) == 0 {
				msgs[i].Headers = nil
			}
		}
		return msgs
	}
	check("replay", replay("hdr"))
	check("the child's replay", copies(replay("hdr-copy")))
	leased, err := n.c.Consume(ctx, "hdr", client.ConsumeOptions{Max: 100})
	if err != nil {
		t.Fatal(err)
	}
	check("consume", leased)

	n.kill()
	n.restart()
	check("replay after SIGKILL and restart", replay("hdr"))
	check("the child's replay after restart", copies(replay("hdr-copy")))
}
