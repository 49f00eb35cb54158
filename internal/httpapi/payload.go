package httpapi

import (
	"encoding/base64"
	"encoding/json"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/narad-io/narad/internal/broker"
	"github.com/narad-io/narad/internal/header"
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
	b = appendString(b, m.Topic)
	b = append(b, `,"partition":`...)
	b = strconv.AppendInt(b, int64(m.Partition), 10)
	b = append(b, `,"offset":`...)
	b = strconv.AppendUint(b, m.Offset, 10)
	if m.ID != "" { // the broker sets it on every message it answers
		b = append(b, `,"id":`...)
		b = appendString(b, m.ID)
	}
	switch {
	case len(m.Key) == 0: // keyless: no key field
	case utf8.Valid(m.Key):
		b = append(b, `,"key":`...)
		b = appendString(b, m.Key)
	default:
		b = append(b, `,"key_base64":`...)
		b = appendString(b, base64.StdEncoding.EncodeToString(m.Key))
	}
	b = append(b, `,"payload":`...)
	switch enc := payloadEncoding(m.Payload); enc {
	case "":
		b = append(b, m.Payload...)
	case encodingText:
		b = appendString(b, m.Payload)
		b = append(b, `,"payload_encoding":"text"`...)
	default:
		b = appendString(b, base64.StdEncoding.EncodeToString(m.Payload))
		b = append(b, `,"payload_encoding":"base64"`...)
	}
	b = append(b, `,"timestamp":`...)
	b = strconv.AppendInt(b, m.CommittedAt/1000, 10)
	b = append(b, `,"timestamp_ms":`...)
	b = strconv.AppendInt(b, m.CommittedAt, 10)
	if m.ReceiptHandle != "" {
		b = append(b, `,"receipt_handle":`...)
		b = appendString(b, m.ReceiptHandle)
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
		b = appendString(b, validUTF8(h.Name))
		b = append(b, ':')
		b = appendString(b, validUTF8(h.Value))
	}
	return append(b, '}')
}

func validUTF8(s string) string {
	if utf8.ValidString(s) {
		return s
	}
	return strings.ToValidUTF8(s, "\uFFFD")
}

// appendString appends s (valid UTF-8) as a JSON string, escaping what
// JSON requires and, as encoding/json does, U+2028 and U+2029 (JavaScript
// line terminators); not <, > and & (the API's answers are not HTML).
// It takes the record's bytes as they are: a string(...) copy of every
// payload was 5% of a batch consume's CPU.
func appendString[T ~string | ~[]byte](b []byte, s T) []byte {
	const hex = "0123456789abcdef"
	b = append(b, '"')
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c >= 0x20 && c != '"' && c != '\\' && c < 0x80 {
			i++
			// Eight bytes at a time while none needs a look: the byte loop
			// was 12% of a batch consume's server CPU (256-byte text
			// payloads); see BenchmarkAppendString.
			for i+8 <= len(s) && plain8(load8(s, i)) {
				i += 8
			}
			continue
		}
		if c >= 0x80 {
			r, size := decodeRune(s[i:])
			if r != '\u2028' && r != '\u2029' {
				i += size
				continue
			}
			b = append(b, s[start:i]...)
			b = append(b, '\\', 'u', '2', '0', '2', hex[r&0xf])
			i += size
			start = i
			continue
		}
		b = append(b, s[start:i]...)
		switch c {
		case '"', '\\':
			b = append(b, '\\', c)
		case '\n':
			b = append(b, '\\', 'n')
		case '\r':
			b = append(b, '\\', 'r')
		case '\t':
			b = append(b, '\\', 't')
		default:
			b = append(b, '\\', 'u', '0', '0', hex[c>>4], hex[c&0xf])
		}
		i++
		start = i
	}
	b = append(b, s[start:]...)
	return append(b, '"')
}

// decodeRune is utf8.DecodeRune for either form of appendString's input.
func decodeRune[T ~string | ~[]byte](s T) (rune, int) {
	switch v := any(s).(type) {
	case string:
		return utf8.DecodeRuneInString(v)
	case []byte:
		return utf8.DecodeRune(v)
	}
	return utf8.DecodeRuneInString(string(s))
}

// load8 reads s[i:i+8] as a little-endian word (the compiler merges the
// byte loads into one for both string and []byte).
func load8[T ~string | ~[]byte](s T, i int) uint64 {
	_ = s[i+7]
	return uint64(s[i]) | uint64(s[i+1])<<8 | uint64(s[i+2])<<16 | uint64(s[i+3])<<24 |
		uint64(s[i+4])<<32 | uint64(s[i+5])<<40 | uint64(s[i+6])<<48 | uint64(s[i+7])<<56
}

// plain8 reports whether none of the eight bytes of v needs appendString's
// attention: all are ASCII (below 0x80), none is a control byte (below
// 0x20), a quote or a backslash. The zero-byte tests are the classic
// exact ones: (x - 0x01…) & ^x & 0x80… is non-zero iff some byte of x is
// zero (a borrow only ever spreads above a zero byte), and with 0x20…
// subtracted instead iff some byte is below 0x20 (for bytes below 0x80,
// which the first test has ensured).
func plain8(v uint64) bool {
	const (
		lo   = 0x0101010101010101
		hi   = 0x8080808080808080
		ctl  = 0x20 * lo
		quot = '"' * lo
		bsl  = '\\' * lo
	)
	zero := func(x uint64) uint64 { return (x - lo) &^ x & hi }
	return (v&hi)|((v-ctl)&^v&hi)|zero(v^quot)|zero(v^bsl) == 0
}
