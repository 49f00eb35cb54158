package e2e

import (
	"bytes"
	"fmt"
	"testing"
	"time"

	"github.com/narad-io/narad/client"
)

// TestBatchFormatsComeBackByteForByte: one batch in each body format
// (JSON, NDJSON, binary) produced to the real node, then replayed by
// offset: every record's payload and key come back with the bytes that
// were produced, and as the same encoding (JSON, text, base64) whichever
// format carried it.
func TestBatchFormatsComeBackByteForByte(t *testing.T) {
	n := startNode(t)
	ctx := ctxT(t)
	formats := []client.BatchFormat{client.BatchJSON, client.BatchNDJSON, client.BatchBinary}
	payloads := [][]byte{
		[]byte(`{"a": 1,   "b":[1, 2]}`), // JSON with its own whitespace
		[]byte("plain text, \"quoted\"\n\u00e9 \U0001F600"),
		[]byte("\xff\x00\x01 bytes"),
		[]byte(`"a JSON string"`),
		[]byte(`12.50`),
		bytes.Repeat([]byte("x"), 256),
	}
	keys := [][]byte{[]byte("c42"), nil, []byte("\xc3\x28"), []byte(""), []byte("café"), []byte("k")}
	for _, f := range formats {
		topic := "fmt-" + f.String()
		if _, err := n.c.CreateTopic(ctx, client.CreateTopicRequest{Name: topic, Partitions: 1}); err != nil {
			t.Fatal(err)
		}
		recs := make([]client.BatchRecord, len(payloads))
		for i, p := range payloads {
			recs[i] = client.RecordFromBytes(p)
			if keys[i] != nil {
				recs[i] = recs[i].WithKey(keys[i])
			}
		}
		accepted, err := n.c.ProduceBatchAs(ctx, topic, recs, f)
		if err != nil || accepted != len(recs) {
			t.Fatalf("%s: accepted %d of %d: %v", f, accepted, len(recs), err)
		}
	}
	var shown [][]string // per format, each record's payload_encoding and key encoding
	for _, f := range formats {
		topic := "fmt-" + f.String()
		var msgs []client.Message
		eventually(t, 10*time.Second, topic+" replayable", func() bool {
			var err error
			msgs, err = n.c.Consume(ctx, topic, client.ConsumeOptions{Partition: ptr(0), Offset: new(uint64), Max: 100})
			return err == nil && len(msgs) == len(payloads)
		})
		var encs []string
		for i, m := range msgs {
			p, err := m.Bytes()
			if err != nil || !bytes.Equal(p, payloads[i]) {
				t.Errorf("%s record %d: payload %q (%v), want %q", f, i, p, err, payloads[i])
			}
			k, err := m.KeyBytes()
			if err != nil || !bytes.Equal(k, keys[i]) {
				t.Errorf("%s record %d: key %q (%v), want %q", f, i, k, err, keys[i])
			}
			encs = append(encs, fmt.Sprintf("%q key=%v key_base64=%q", m.PayloadEncoding, m.Key != nil, m.KeyBase64))
		}
		shown = append(shown, encs)
	}
	for i := 1; i < len(shown); i++ {
		if fmt.Sprint(shown[i]) != fmt.Sprint(shown[0]) {
			t.Errorf("%s shows its records as %v; %s as %v", formats[i], shown[i], formats[0], shown[0])
		}
	}
}
