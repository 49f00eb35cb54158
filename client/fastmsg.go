package client

import (
	"bytes"
	"strconv"
	"unicode/utf8"
)

// The consume answer is most of a consumer's CPU: encoding/json walked it
// about five times (the RawMessage copy, the list, then every message
// again through Message.UnmarshalJSON's Unmarshal and its validity scan),
// 62% of narad bench's consume loop with max=100 — more CPU than the
// server spent serving it. fastMessages reads the shape the server writes
// (no whitespace between tokens, known field names, strings without
// escapes) in one pass over a body encoding/json has validated already;
// anything else it declines, and the caller decodes with encoding/json.
// What it accepts decodes exactly as encoding/json would (fuzzed).

// fastMessages decodes a consume answer, a {"messages":[...]} list or one
// message object. body must be valid JSON. ok is false when the body is
// not in the server's plain shape.
func fastMessages(body []byte) (msgs []Message, ok bool) {
	body = bytes.TrimRight(body, " \t\r\n")
	const list = `{"messages":[`
	if !bytes.HasPrefix(body, []byte(list)) {
		m, n, ok := fastMessage(body)
		if !ok || n != len(body) {
			return nil, false
		}
		return []Message{m}, true
	}
	i := len(list)
	msgs = make([]Message, 0, bytes.Count(body, []byte(`{"topic":`)))
	if i < len(body) && body[i] == ']' {
		i++
	} else {
		for {
			m, n, ok := fastMessage(body[i:])
			if !ok {
				return nil, false
			}
			msgs = append(msgs, m)
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
	return msgs, true
}

// fastMessage decodes the message object at the start of b and says how
// many bytes it took.
func fastMessage(b []byte) (m Message, n int, ok bool) {
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
			m.Topic, used, ok = fastString(b[i:])
		case "key":
			var s string
			if s, used, ok = fastString(b[i:]); ok {
				m.Key = &s
			}
		case "key_base64":
			m.KeyBase64, used, ok = fastString(b[i:])
		case "payload_encoding":
			m.PayloadEncoding, used, ok = fastString(b[i:])
		case "receipt_handle":
			m.ReceiptHandle, used, ok = fastString(b[i:])
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
		case "offset":
			used = digits(b[i:])
			var err error
			m.Offset, err = strconv.ParseUint(string(b[i:i+used]), 10, 64)
			ok = used > 0 && err == nil
		case "headers":
			m.Headers, used, ok = fastHeaders(b[i:])
		case "payload":
			if used = skipValue(b[i:]); used > 0 && b[i] != 'n' {
				m.Payload = bytes.Clone(b[i : i+used])
				ok = true
			} else {
				ok = false
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
	if len(b) == 0 || b[0] != '"' {
		return "", 0, false
	}
	end := bytes.IndexByte(b[1:], '"')
	if end < 0 {
		return "", 0, false
	}
	s := b[1 : 1+end]
	if bytes.IndexByte(s, '\\') >= 0 || !utf8.Valid(s) {
		return "", 0, false
	}
	return string(s), end + 2, true
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

func digits(b []byte) int {
	n := 0
	for n < len(b) && b[n] >= '0' && b[n] <= '9' {
		n++
	}
	if n < len(b) && (b[n] == '.' || b[n] == 'e' || b[n] == 'E') {
		return 0 // a fraction or an exponent: not an integer
	}
	return n
}

// skipValue is the length of the JSON value at the start of b, which is
// valid JSON (the body was validated): strings honour escapes, objects
// and arrays nest.
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
				return i + 1
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
