package client

import (
	"bytes"
	"encoding/json"
)

// A batch ack's request and answer are written and read by hand in their
// plain shape: encoding/json's reflective Marshal and Unmarshal of them
// were 16% of narad bench's client CPU in a batch consume + batch ack
// (more than the server spent settling the handles). Anything outside the
// plain shape goes through encoding/json, and what the fast paths take
// decodes exactly as encoding/json would (fuzzed).

// ackBatchBody is {"receipt_handles":[...]} for handles.
func ackBatchBody(handles []string) ([]byte, error) {
	n := len(`{"receipt_handles":[]}`)
	for _, h := range handles {
		if !plainASCII(h) {
			return json.Marshal(struct {
				ReceiptHandles []string `json:"receipt_handles"`
			}{handles})
		}
		n += len(h) + 3
	}
	b := make([]byte, 0, n)
	b = append(b, `{"receipt_handles":[`...)
	for i, h := range handles {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, '"')
		b = append(b, h...)
		b = append(b, '"')
	}
	return append(b, "]}"...), nil
}

// decodeAckResults reads a batch ack's answer, {"results":[...]}.
func decodeAckResults(body []byte) ([]AckResult, error) {
	if res, ok := fastAckResults(body); ok {
		return res, nil
	}
	var out struct {
		Results []AckResult `json:"results"`
	}
	if err := json.Unmarshal(body, &out); err != nil {
		return nil, err
	}
	return out.Results, nil
}

// fastAckResults reads the answer the server writes (no whitespace
// between tokens, objects of receipt_handle, status and error, strings
// without escapes), checking the grammar as it goes. ok is false for
// anything else.
func fastAckResults(body []byte) (res []AckResult, ok bool) {
	body = bytes.TrimRight(body, " \t\r\n")
	return fastList(body, `{"results":[`, bytes.Count(body, []byte(`"status":`)), fastAckResult)
}

// fastAckResult reads one result object at the start of b and says how
// many bytes it took.
func fastAckResult(b []byte) (r AckResult, n int, ok bool) {
	if len(b) < 2 || b[0] != '{' || b[1] == '}' {
		return r, 0, false
	}
	i := 1
	for {
		name, used, ok := fastStringAs(b[i:], "receipt_handle", "status", "error")
		if !ok {
			return r, 0, false
		}
		i += used
		if i >= len(b) || b[i] != ':' {
			return r, 0, false
		}
		i++
		switch name {
		case "receipt_handle":
			r.ReceiptHandle, used, ok = fastString(b[i:])
		case "status":
			var v int64
			v, used, ok = fastInt(b[i:])
			r.Status = int(v)
		case "error": // not kept: AckResult has no field for it
			used, ok = plainStringLen(b[i:])
		default:
			ok = false
		}
		if !ok {
			return r, 0, false
		}
		i += used
		if i < len(b) && b[i] == ',' {
			i++
			continue
		}
		if i < len(b) && b[i] == '}' {
			return r, i + 1, true
		}
		return r, 0, false
	}
}
