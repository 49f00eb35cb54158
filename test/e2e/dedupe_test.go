package e2e

import (
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/narad-io/narad/client"
)

// storedAll is every record of topic by replay, as "payload" strings.
func storedAll(t *testing.T, n *node, topic string) []string {
	t.Helper()
	ctx := ctxT(t)
	var out []string
	for p := range 3 {
		var from uint64
		for {
			part, off := p, from
			ms, err := n.c.Consume(ctx, topic, client.ConsumeOptions{Partition: &part, Offset: &off, Max: 100})
			if err != nil || len(ms) == 0 {
				break
			}
			for _, m := range ms {
				out = append(out, strings.Trim(string(m.Payload), `"`))
				from = m.Offset + 1
			}
		}
	}
	return out
}

// Idempotent produce with a real process: the same msg_id produced three
// times, single and in batches (JSON, NDJSON and binary), then again
// after a restart, is stored once; every produce answers 202.
func TestDedupeAcrossRestart(t *testing.T) {
	n := startNode(t)
	ctx := ctxT(t)
	for _, body := range []string{`{"name":"dd","dedupe_window_ms":999}`, `{"name":"dd","dedupe_window_ms":86400001}`} {
		if code, b, _ := n.do("POST", "/v1/topics", "application/json", []byte(body)); code != 400 || !strings.Contains(string(b), "dedupe_window_ms") {
			t.Fatalf("create with %s: %d %s", body, code, b)
		}
	}
	if _, err := n.c.CreateTopic(ctx, client.CreateTopicRequest{Name: "dd", Partitions: 3, DedupeWindowMs: 600_000}); err != nil {
		t.Fatal(err)
	}
	// Bad ids: 400, nothing stored.
	req, _ := http.NewRequest("POST", n.url("/v1/topics/dd/produce"), strings.NewReader("x"))
	req.Header.Set("Narad-Msg-Id", "tab\there")
	if resp, err := http.DefaultClient.Do(req); err != nil || resp.StatusCode != 400 {
		t.Fatalf("bad Narad-Msg-Id: %v %v", resp, err)
	}
	if code, b, _ := n.do("POST", "/v1/topics/dd/produce/batch", "application/json",
		[]byte(`{"records":[{"payload":1,"msg_id":"ok"},{"payload":2,"msg_id":"`+strings.Repeat("x", 129)+`"}]}`)); code != 400 || !strings.Contains(string(b), "record 1") {
		t.Fatalf("batch with a 129-byte msg_id: %d %s", code, b)
	}
	// A binary (version 2) body: record 0 text "a", record 1 text "a"
	// with flag 0x20 and the msg_id "\t".
	bin := []byte("NRDB\x02\x04\x00\x00\x00\x01a\x24\x00\x01\t\x00\x00\x00\x01a")
	if code, b, _ := n.do("POST", "/v1/topics/dd/produce/batch", "application/x-narad-batch", bin); code != 400 ||
		!strings.Contains(string(b), `"index":1`) || !strings.Contains(string(b), "record 1: invalid header: msg_id has byte 0x09") {
		t.Fatalf("binary batch with a bad msg_id: %d %s", code, b)
	}

	produce := func(round string) {
		for i := range 3 {
			if err := n.c.Produce(ctx, "dd", []byte(fmt.Sprintf("a-%s-%d", round, i)), client.ProduceOptions{MsgID: "order-a"}); err != nil {
				t.Fatal(err)
			}
			recs := []client.BatchRecord{
				{Payload: []byte(fmt.Sprintf(`"b-%s-%d"`, round, i)), MsgID: "order-b"},
				{Payload: []byte(fmt.Sprintf(`"b2-%s-%d"`, round, i)), MsgID: "order-b"},
				{Payload: []byte(fmt.Sprintf(`"a2-%s-%d"`, round, i)), MsgID: "order-a"},
			}
			format := []client.BatchFormat{client.BatchJSON, client.BatchNDJSON, client.BatchBinary}[i]
			if _, err := n.c.ProduceBatchAs(ctx, "dd", recs, format); err != nil {
				t.Fatal(err)
			}
		}
	}
	produce("r1")
	want := []string{"a-r1-0", "b-r1-0"}
	eventually(t, 20*time.Second, "both ids stored, the 10 copies deduplicated", func() bool {
		return n.metric(`narad_deduplicated_records_total{topic="dd"}`) == 10
	})
	if got := storedAll(t, n, "dd"); len(got) != 2 || !sameSet(got, want) {
		t.Fatalf("stored %v, want %v", got, want)
	}
	n.stop()
	n.start()
	produce("r2")
	eventually(t, 20*time.Second, "the 12 copies after the restart deduplicated", func() bool {
		return n.metric(`narad_deduplicated_records_total{topic="dd"}`) == 12
	})
	if got := storedAll(t, n, "dd"); !sameSet(got, want) || len(got) != 2 {
		t.Fatalf("after a restart: stored %v, want %v", got, want)
	}
}

func sameSet(got, want []string) bool {
	m := map[string]bool{}
	for _, g := range got {
		m[g] = true
	}
	for _, w := range want {
		if !m[w] {
			return false
		}
	}
	return true
}
