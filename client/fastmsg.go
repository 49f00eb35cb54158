package client

import (
	"bytes"
	"encoding/json"
	"strconv"
	"unicode/utf8"
)

// The consume answer is most of a consumer's CPU: encoding/json walked it
// about five times (the RawMessage copy, the list, then every message
// again through Message.UnmarshalJSON's Unmarshal and its validity scan),
// 62% of narad bench's consume loop with max=100 — more CPU than the
// server spent serving it. fastMessages reads the shape the server writes
// (no whitespace between tokens, known field names, strings without
// escapes) in one pass; anything else it declines, and the caller
// validates and decodes with encoding/json. It checks the JSON grammar of
// everything it accepts as it goes (strings without control characters
// and in UTF-8, integers without leading zeros, a payload that is not a
// plain string checked by json.Valid on its own bytes), so an accepted
// body needs no separate validity pass: that pass (json.Valid over the
// whole body) was 20% of narad bench's client CPU in a batch consume.
// What it accepts is valid JSON and decodes exactly as encoding/json
// would (fuzzed, invalid bodies included).

// fastMessages decodes a consume answer, a {"messages":[...]} list or one
// message object. ok is false when the body is not in the server's plain
// shape or not valid JSON; when ok, the body was valid JSON.
func fastMessages(body []byte) (msgs []Message, ok bool) {
	body = bytes.TrimRight(body, " \t\r\n")
	const list = `{"messages":[`
	if !bytes.HasPrefix(body, []byte(list)) {
		m, n, ok := fastMessage(body, "")
		if !ok || n != len(body) {
			return nil, false
		}
		return []Message{m}, true
	}
	prev := ""
	return fastList(body, list, bytes.Count(body, []byte(`{"topic":`)), func(b []byte) (Message, int, bool) {
		m, n, ok := fastMessage(b, prev)
		prev = m.Topic
		return m, n, ok
	})
}

// fastList reads the answer body = prefix + items + "]}" (prefix opens
// the list: `{"name":[`), each item read by item, which says how many
// bytes it took. ok is false when body is not exactly that.
func fastList[T any](body []byte, prefix string, capHint int, item func([]byte) (T, int, bool)) (list []T, ok bool) {
	if !bytes.HasPrefix(body, []byte(prefix)) {
		return nil, false
	}
	i := len(prefix)
	list = make([]T, 0, capHint)
	if i < len(body) && body[i] == ']' {
		i++
	} else {
		for {
			v, n, ok := item(body[i:])
			if !ok {
				return nil, false
			}
			list = append(list, v)
			i += n
			if i < len(body) && body[i] == ',' {
				i++
				continue
			}
			if i < len(body) && body[i] == ']' {
				i++
				break
			}
			return nil, false
		}
	}
	if i+1 != len(body) || body[i] != '}' {
		return nil, false
	}
	return list, true
}

// fastMessage decodes the message object at the start of b and says how
// many bytes it took. A topic equal to prevTopic (every message of one
// answer names the same topic) and the payload encodings reuse strings
// already made: two allocations fewer per message.
func fastMessage(b []byte, prevTopic string) (m Message, n int, ok bool) {
	if len(b) < 2 || b[0] != '{' || b[1] == '}' {
		return m, 0, false
	}
	i := 1
	for {
		if i >= len(b) || b[i] != '"' {
			return m, 0, false
		}
		end := bytes.IndexByte(b[i+1:], '"')
		if end < 0 {
			return m, 0, false
		}
		name := b[i+1 : i+1+end]
		i += end + 2
		if i >= len(b) || b[i] != ':' {
			return m, 0, false
		}
		i++
		var used int
		switch string(name) {
		case "topic":
			m.Topic, used, ok = fastStringAs(b[i:], prevTopic)
		case "key":
			var s string
			if s, used, ok = fastString(b[i:]); ok {
				m.Key = &s
			}
		case "key_base64":
			m.KeyBase64, used, ok = fastString(b[i:])
		case "payload_encoding":
			m.PayloadEncoding, used, ok = fastStringAs(b[i:], "text", "base64")
		case "receipt_handle":
			m.ReceiptHandle, used, ok = fastString(b[i:])
		case "id":
			m.ID, used, ok = fastString(b[i:])
		case "partition":
			var v int64
			v, used, ok = fastInt(b[i:])
			m.Partition = int(v)
		case "delivery_count":
			var v int64
			v, used, ok = fastInt(b[i:])
			m.DeliveryCount = int(v)
		case "timestamp":
			m.Timestamp, used, ok = fastInt(b[i:])
		case "timestamp_ms":
			m.TimestampMs, used, ok = fastInt(b[i:])
		case "deliver_at":
			m.DeliverAt, used, ok = fastInt(b[i:])
		case "offset":
			used = digits(b[i:])
			var err error
			m.Offset, err = strconv.ParseUint(string(b[i:i+used]), 10, 64)
			ok = used > 0 && err == nil
		case "headers":
			m.Headers, used, ok = fastHeaders(b[i:])
		case "payload":
			used, ok = payloadLen(b[i:])
			if ok {
				m.Payload = bytes.Clone(b[i : i+used])
			}
		default:
			ok = false // a field this reader does not know: encoding/json decides
		}
		if !ok {
			return m, 0, false
		}
		i += used
		if i < len(b) && b[i] == ',' {
			i++
			continue
		}
		if i < len(b) && b[i] == '}' {
			m.raw = bytes.Clone(b[:i+1])
			return m, i + 1, true
		}
		return m, 0, false
	}
}

// fastHeaders reads a "headers" object of plain strings (the last of a
// name given twice wins, as in encoding/json's map).
func fastHeaders(b []byte) (map[string]string, int, bool) {
	if len(b) < 2 || b[0] != '{' {
		return nil, 0, false
	}
	hs := make(map[string]string, 4)
	i := 1
	if b[i] == '}' {
		return hs, 2, true
	}
	for {
		name, n, ok := fastString(b[i:])
		if !ok {
			return nil, 0, false
		}
		i += n
		if i >= len(b) || b[i] != ':' {
			return nil, 0, false
		}
		i++
		value, n, ok := fastString(b[i:])
		if !ok {
			return nil, 0, false
		}
		i += n
		hs[name] = value
		if i < len(b) && b[i] == ',' {
			i++
			continue
		}
		if i < len(b) && b[i] == '}' {
			return hs, i + 1, true
		}
		return nil, 0, false
	}
}

// fastString reads a JSON string without escapes that is valid UTF-8
// (encoding/json would replace invalid bytes: that is its to do).
func fastString(b []byte) (string, int, bool) {
	n, ok := plainStringLen(b)
	if !ok {
		return "", 0, false
	}
	return string(b[1 : n-1]), n, true
}

// fastStringAs is fastString, returning the one of known that the string
// equals, if any, instead of a new copy.
func fastStringAs(b []byte, known ...string) (string, int, bool) {
	n, ok := plainStringLen(b)
	if !ok {
		return "", 0, false
	}
	s := b[1 : n-1]
	for _, k := range known {
		if string(s) == k { // compared without a copy
			return k, n, true
		}
	}
	return string(s), n, true
}

// plainStringLen is the length, quotes included, of the JSON string at
// the start of b when its content is taken as it is: no escape, no
// control character (JSON forbids them raw), valid UTF-8.
func plainStringLen(b []byte) (int, bool) {
	if len(b) == 0 || b[0] != '"' {
		return 0, false
	}
	end := bytes.IndexByte(b[1:], '"')
	if end < 0 {
		return 0, false
	}
	s := b[1 : 1+end]
	var high byte
	for _, c := range s {
		if c < 0x20 || c == '\\' {
			return 0, false
		}
		high |= c
	}
	if high >= utf8.RuneSelf && !utf8.Valid(s) {
		return 0, false
	}
	return end + 2, true
}

// payloadLen is the length of the payload value at the start of b: a plain
// string, or any other JSON value but null that json.Valid accepts on its
// own (a payload with escapes, an object, a number).
func payloadLen(b []byte) (int, bool) {
	if n, ok := plainStringLen(b); ok {
		return n, true
	}
	n := skipValue(b)
	if n == 0 || b[0] == 'n' || !json.Valid(b[:n]) {
		return 0, false
	}
	return n, true
}

// fastInt reads an optionally negative run of digits as an int64 (no
// fraction, no exponent: encoding/json refuses those for an int too).
func fastInt(b []byte) (int64, int, bool) {
	n := 0
	if len(b) > 0 && b[0] == '-' {
		n = 1
	}
	d := digits(b[n:])
	if d == 0 {
		return 0, 0, false
	}
	v, err := strconv.ParseInt(string(b[:n+d]), 10, 64)
	return v, n + d, err == nil && v == int64(int(v))
}

// digits is the length of the JSON integer's digits at the start of b, or
// 0 when there are none or they are not an integer JSON allows.
func digits(b []byte) int {
	n := 0
	for n < len(b) && b[n] >= '0' && b[n] <= '9' {
		n++
	}
	if n < len(b) && (b[n] == '.' || b[n] == 'e' || b[n] == 'E') {
		return 0 // a fraction or an exponent: not an integer
	}
	if n > 1 && b[0] == '0' {
		return 0 // a leading zero: not JSON
	}
	return n
}

// skipValue is the length of the JSON value at the start of b, if b is
// valid JSON there (payloadLen checks what it picked out): strings honour
// escapes, objects and arrays nest.
func skipValue(b []byte) int {
	depth := 0
	for i := 0; i < len(b); i++ {
		switch c := b[i]; c {
		case '"':
			i++
			for i < len(b) && b[i] != '"' {
				if b[i] == '\\' {
					i++
				}
				i++
			}
			if depth == 0 {
				return min(i+1, len(b)) // unterminated: json.Valid refuses it
			}
		case '{', '[':
			depth++
		case '}', ']':
			depth--
			if depth == 0 {
				return i + 1
			}
			if depth < 0 {
				return i
			}
		case ',':
			if depth == 0 {
				return i
			}
		case ' ', '\t', '\n', '\r':
			if depth == 0 {
				return i
			}
		}
	}
	return len(b)
}
