package httpapi

import (
	"bytes"
	"fmt"
	"strings"
	"testing"

	"github.com/narad-io/narad/internal/broker"
)

// BenchmarkDecodeBatch decodes a batch of 100 records of 256-byte payloads
// (keyed, as producers with keys send them) in each format: the
// encoding/json path it replaced (json-old, the oracle), the one-pass
// scanner (json), NDJSON and the binary body; payloads as text (a JSON
// string, what `narad bench` sends) and as a JSON object.
func BenchmarkDecodeBatch(b *testing.B) {
	for _, shape := range []string{"text", "object"} {
		var env, nd bytes.Buffer
		bin := []byte(binaryMagic)
		env.WriteString(`{"records":[`)
		for i := range 100 {
			key := fmt.Sprintf("customer-%d", i)
			payload := `"` + strings.Repeat("x", 256) + `"`
			enc := byte(binEncText)
			if shape == "object" {
				payload = fmt.Sprintf(`{"id":%d,"note":"%s"}`, i, strings.Repeat("n", 256-len(fmt.Sprintf(`{"id":%d,"note":""}`, i))))
				enc = binEncJSON
			}
			rec := fmt.Sprintf(`{"key":%q,"payload":%s}`, key, payload)
			if i > 0 {
				env.WriteByte(',')
			}
			env.WriteString(rec)
			nd.WriteString(rec + "\n")
			raw := []byte(payload)
			if enc == binEncText {
				raw = raw[1 : len(raw)-1]
			}
			bin = appendBinaryRecord(bin, []byte(key), true, nil, enc, raw)
		}
		env.WriteString(`]}`)
		for _, c := range []struct {
			name   string
			body   []byte
			decode func([]byte) ([]broker.ProduceRecord, error)
		}{
			{"json-old", env.Bytes(), func(body []byte) ([]broker.ProduceRecord, error) { return oracleBatch(false, body) }},
			{"json", env.Bytes(), decodeJSONBatch},
			{"ndjson", nd.Bytes(), decodeNDJSONBatch},
			{"binary", bin, decodeBinaryBatch},
		} {
			b.Run(shape+"/"+c.name, func(b *testing.B) {
				b.SetBytes(int64(len(c.body)))
				b.ReportAllocs()
				for b.Loop() {
					recs, err := c.decode(c.body)
					if err != nil || len(recs) != 100 || len(recs[99].Payload) != 256 {
						b.Fatalf("%d records, %v", len(recs), err)
					}
				}
			})
		}
	}
}
