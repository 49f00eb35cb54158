package httpapi

import (
	"bytes"
	"encoding/json"
	"net/http"
	"strconv"
)

// The batch ack's body and answer are its hot path: with max=100 consumes
// every hundred records cost one of each. encoding/json took three passes
// over the body (decode, trailing check, key check, ~1.4 µs per handle)
// and reflection over the results; the shapes below are walked once.

// ackHandlesFast reads the body {"receipt_handles":["h",...]} (JSON
// whitespace allowed) whose handles are plain printable ASCII without
// escapes — every handle the server issues. ok is false for anything
// else: the caller then decodes with decodeStrict, which words the
// refusal. Every body accepted here decodeStrict decodes to the same
// handles: one key, spelled exactly, no trailing data.
func ackHandlesFast(body []byte) (handles []string, ok bool) {
	const key = `"receipt_handles"`
	i := skipSpace(body, 0)
	if i >= len(body) || body[i] != '{' {
		return nil, false
	}
	i = skipSpace(body, i+1)
	if !bytes.HasPrefix(body[i:], []byte(key)) {
		return nil, false
	}
	i = skipSpace(body, i+len(key))
	if i >= len(body) || body[i] != ':' {
		return nil, false
	}
	i = skipSpace(body, i+1)
	if i >= len(body) || body[i] != '[' {
		return nil, false
	}
	i = skipSpace(body, i+1)
	// The handles are substrings of one copy of the body: one allocation
	// for the batch instead of one per handle (100 per max=100 ack).
	all := string(body)
	handles = make([]string, 0, bytes.Count(body[i:], []byte{','})+1)
	if i < len(body) && body[i] == ']' {
		i++
	} else {
		for {
			if i >= len(body) || body[i] != '"' {
				return nil, false
			}
			j := i + 1
			for j < len(body) && body[j] != '"' {
				if c := body[j]; c < 0x20 || c >= 0x7f || c == '\\' {
					return nil, false
				}
				j++
			}
			if j >= len(body) {
				return nil, false
			}
			handles = append(handles, all[i+1:j])
			i = skipSpace(body, j+1)
			if i < len(body) && body[i] == ',' {
				i = skipSpace(body, i+1)
				continue
			}
			if i < len(body) && body[i] == ']' {
				i++
				break
			}
			return nil, false
		}
	}
	i = skipSpace(body, i)
	if i >= len(body) || body[i] != '}' {
		return nil, false
	}
	return handles, skipSpace(body, i+1) == len(body)
}

// skipSpace returns the index of the first byte at or after i that is not
// JSON whitespace.
func skipSpace(b []byte, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\t' || b[i] == '\n' || b[i] == '\r') {
		i++
	}
	return i
}

// writeAckResults answers a batch ack with {"results":[...]}, byte for byte
// what writeJSON writes for map[string]any{"results": res}.
func writeAckResults(w http.ResponseWriter, res []AckResult) {
	p := answerBuf(16 + len(res)*64)
	b := append(*p, `{"results":[`...)
	for i, r := range res {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, `{"receipt_handle":`...)
		b = appendJSONText(b, r.ReceiptHandle)
		b = append(b, `,"status":`...)
		b = strconv.AppendInt(b, int64(r.Status), 10)
		if r.Error != "" {
			b = append(b, `,"error":`...)
			b = appendJSONText(b, r.Error)
		}
		b = append(b, '}')
	}
	b = append(b, "]}\n"...)
	writeAnswer(w, p, b)
}

// appendJSONText appends s as encoding/json (HTML escaping off) writes
// it: printable ASCII without quotes or backslashes as it is, anything
// else through encoding/json itself, so the answer is exactly what
// writeJSON gave (its \b, \f and invalid-UTF-8 rules included).
func appendJSONText(b []byte, s string) []byte {
	plain := true
	for i := 0; i < len(s) && plain; i++ {
		c := s[i]
		plain = c >= 0x20 && c < 0x7f && c != '"' && c != '\\'
	}
	if plain {
		b = append(b, '"')
		b = append(b, s...)
		return append(b, '"')
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	enc.Encode(s) // a string always encodes
	return append(b, bytes.TrimSuffix(buf.Bytes(), []byte{'\n'})...)
}
