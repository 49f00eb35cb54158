package httpapi

import (
	"encoding/base64"
	"encoding/json"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/narad-io/narad/internal/broker"
	"github.com/narad-io/narad/internal/header"
	"github.com/narad-io/narad/internal/jsonenc"
)

// A delivered record as the API shows it (docs/http-api.md, and
// docs/concepts.md, "Records"):
//
//	{"topic": "orders", "partition": 2, "offset": 0, "key": "c42",
//	 "payload": {"order_id": 1}, "timestamp": 1783615560,
//	 "receipt_handle": "2:0:861651", "delivery_count": 1,
//	 "headers": {"trace-id": "t1"}}
//
// "headers" is absent when the record has none, so a client of the
// reference sees the objects it always saw.
//
// The answer is written by hand, not by encoding/json: json.RawMessage is
// compacted on the way out, and a JSON payload must come back with the
// very bytes it was produced with, whitespace included.

// Payload encodings: a JSON payload has none (it is embedded as it is).
const (
	encodingText   = "text"   // UTF-8 text that is not JSON, as a JSON string
	encodingBase64 = "base64" // any other bytes, as a JSON string of base64
)

// payloadEncoding says how p is shown: "" when it is JSON (valid UTF-8
// too: the answer must be), text or base64.
func payloadEncoding(p []byte) string {
	switch {
	case !utf8.Valid(p):
		return encodingBase64
	case mayBeJSON(p) && json.Valid(p):
		return ""
	}
	return encodingText
}

// mayBeJSON is false when p cannot start a JSON value: json.Valid then
// needs no scan, and its refusal is not built (a *SyntaxError, three
// allocations per text record delivered: 300 per max=100 answer).
func mayBeJSON(p []byte) bool {
	for _, c := range p {
		switch c {
		case ' ', '\t', '\n', '\r':
			continue
		case '{', '[', '"', '-', 't', 'f', 'n', '0', '1', '2', '3', '4', '5', '6', '7', '8', '9':
			return true
		}
		return false
	}
	return false // empty or blank: not JSON either
}

// appendMessage appends m as one JSON object.
func appendMessage(b []byte, m broker.Message) []byte {
	b = append(b, `{"topic":`...)
	b = jsonenc.AppendString(b, m.Topic)
	b = append(b, `,"partition":`...)
	b = strconv.AppendInt(b, int64(m.Partition), 10)
	b = append(b, `,"offset":`...)
	b = strconv.AppendUint(b, m.Offset, 10)
	if m.ID != "" { // the broker sets it on every message it answers
		b = append(b, `,"id":`...)
		b = jsonenc.AppendString(b, m.ID)
	}
	switch {
	case len(m.Key) == 0: // keyless: no key field
	case utf8.Valid(m.Key):
		b = append(b, `,"key":`...)
		b = jsonenc.AppendString(b, m.Key)
	default:
		b = append(b, `,"key_base64":`...)
		b = jsonenc.AppendString(b, base64.StdEncoding.EncodeToString(m.Key))
	}
	b = append(b, `,"payload":`...)
	switch enc := payloadEncoding(m.Payload); enc {
	case "":
		b = append(b, m.Payload...)
	case encodingText:
		b = jsonenc.AppendString(b, m.Payload)
		b = append(b, `,"payload_encoding":"text"`...)
	default:
		b = jsonenc.AppendString(b, base64.StdEncoding.EncodeToString(m.Payload))
		b = append(b, `,"payload_encoding":"base64"`...)
	}
	b = append(b, `,"timestamp":`...)
	b = strconv.AppendInt(b, m.CommittedAt/1000, 10)
	b = append(b, `,"timestamp_ms":`...)
	b = strconv.AppendInt(b, m.CommittedAt, 10)
	if m.ReceiptHandle != "" {
		b = append(b, `,"receipt_handle":`...)
		b = jsonenc.AppendString(b, m.ReceiptHandle)
	}
	if m.DeliveryCount != 0 {
		b = append(b, `,"delivery_count":`...)
		b = strconv.AppendInt(b, int64(m.DeliveryCount), 10)
	}
	if due, ok := header.DeliverAtOf(m.Headers); ok {
		b = append(b, `,"deliver_at":`...)
		b = strconv.AppendInt(b, due, 10)
	}
	if len(m.Headers) > 0 {
		b = appendHeaders(b, m.Headers)
	}
	return append(b, '}')
}

// appendHeaders appends ,"headers":{...} in the stored order (by name).
// Values were checked as UTF-8 when produced; one that is not (a log
// damaged past its CRC is not read, so only a bug) is shown with U+FFFD
// rather than making the answer invalid JSON.
func appendHeaders(b []byte, hs []header.Header) []byte {
	b = append(b, `,"headers":{`...)
	for i, h := range hs {
		if i > 0 {
			b = append(b, ',')
		}
		b = jsonenc.AppendString(b, validUTF8(h.Name))
		b = append(b, ':')
		b = jsonenc.AppendString(b, validUTF8(h.Value))
	}
	return append(b, '}')
}

func validUTF8(s string) string {
	if utf8.ValidString(s) {
		return s
	}
	return strings.ToValidUTF8(s, "\uFFFD")
}
