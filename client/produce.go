package client

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"time"
	"unicode/utf8"
)

// ProduceOptions route one produced message. Nil fields are not sent: the
// server then hashes the key, or spreads keyless messages.
type ProduceOptions struct {
	// Set them with new (Go 1.26): ProduceOptions{Key: new("c42")},
	// Partition: new(0) (a pointer, since 0 is a partition).
	Key       *string
	Partition *int
	// Headers become the record's headers, each sent as the request
	// header Narad-Header-<name> (names: lower-case [a-z0-9._-]; names
	// beginning "narad-" are the broker's and refused).
	Headers map[string]string
	// MsgID is the producer's id for the record (header Narad-Msg-Id,
	// 1..128 printable ASCII): in a topic with a dedupe window, a retry
	// with the same id is stored once. Empty: none.
	MsgID string
	// Delay schedules the record that long after the node accepts it
	// (header Narad-Delay): queue consumers see it no earlier
	// (docs/concepts.md, "Scheduled delivery"). new(time.Duration(0)) is
	// due at once even on a topic with a delivery_delay; nil: the topic's.
	Delay *time.Duration
	// DeliverAt schedules the record for that time (header
	// Narad-Deliver-At; one past means now). Zero: none. Set Delay or
	// DeliverAt, not both (the node refuses both).
	DeliverAt time.Time
}

// Produced is what the node answered for one produced record: its message
// id (docs/concepts.md, "Message ids"; at most 40 characters, the ID of
// the Message that consume and replay return for it) and its partition.
// ID is empty from a node that predates message ids, and for a replicated
// topic's record its leader dropped as a duplicate.
type Produced struct {
	ID        string `json:"id"`
	Partition int    `json:"partition"`
}

// Produce sends one message with payload as the raw request body:
// POST /v1/topics/{t}/produce?key=&partition=, 202. ProduceWithID also
// returns what the node answered.
//
// The Content-Type says what the bytes look like (JSON, UTF-8 text, or
// binary) so a server that validates schemas or renders payloads does not
// have to guess; the bytes themselves are sent untouched.
func (c *Client) Produce(ctx context.Context, topic string, payload []byte, opts ProduceOptions) error {
	_, err := c.ProduceWithID(ctx, topic, payload, opts)
	return err
}

// ProduceWithID is Produce that returns the record's message id and
// partition: 202 {"id": "…", "partition": P}.
func (c *Client) ProduceWithID(ctx context.Context, topic string, payload []byte, opts ProduceOptions) (Produced, error) {
	if topic == "" {
		return Produced{}, errEmptyName
	}
	q := url.Values{}
	if opts.Key != nil {
		q.Set("key", *opts.Key)
	}
	if opts.Partition != nil {
		q.Set("partition", strconv.Itoa(*opts.Partition))
	}
	if payload == nil {
		payload = []byte{} // an empty message still has a (zero-length) body
	}
	req := request{
		method:      http.MethodPost,
		path:        topicPath(topic, "produce"),
		query:       q,
		body:        payload,
		contentType: ContentTypeOf(payload),
	}
	if len(opts.Headers) > 0 || opts.MsgID != "" || opts.scheduled() {
		req.header = make(http.Header, len(opts.Headers)+1)
		for name, value := range opts.Headers {
			// Set directly, not through Header.Set: the name is sent as
			// given, and the server lower-cases what follows the prefix.
			req.header["Narad-Header-"+name] = []string{value}
		}
		if opts.MsgID != "" {
			req.header["Narad-Msg-Id"] = []string{opts.MsgID}
		}
		opts.setSchedule(req.header)
	}
	resp, err := c.do(ctx, req)
	if err != nil {
		return Produced{}, err
	}
	var out Produced
	if len(bytes.TrimSpace(resp.body)) > 0 { // an older node answers an empty body
		if err := json.Unmarshal(resp.body, &out); err != nil {
			return Produced{}, fmt.Errorf("POST %s: decoding response: %w", req.path, err)
		}
	}
	return out, nil
}

// ContentTypeOf names what payload looks like: JSON, UTF-8 text or bytes.
func ContentTypeOf(payload []byte) string {
	switch {
	case len(payload) > 0 && json.Valid(payload):
		return "application/json"
	case utf8.Valid(payload):
		return "text/plain; charset=utf-8"
	default:
		return "application/octet-stream"
	}
}

// BatchRecord is one record of a batch produce. Set exactly one of Payload
// (any JSON value; a JSON string carries text) and PayloadBase64 (bytes).
type BatchRecord struct {
	// Key is a UTF-8 key; KeyBase64 a key of any bytes (base64). Set at
	// most one (WithKey picks).
	Key           *string         `json:"key,omitempty"`
	KeyBase64     string          `json:"key_base64,omitempty"`
	Partition     *int            `json:"partition,omitempty"`
	Payload       json.RawMessage `json:"payload,omitempty"`
	PayloadBase64 string          `json:"payload_base64,omitempty"`
	// Headers are the record's headers (the rules of ProduceOptions.Headers).
	Headers map[string]string `json:"headers,omitempty"`
	// MsgID is the producer's id for the record (see ProduceOptions.MsgID);
	// "" is none. A binary batch body with one is version 2.
	MsgID string `json:"msg_id,omitempty"`
	// Delay schedules the record (docs/concepts.md, "Scheduled
	// delivery"): a duration the node reads ("90s", "15m", "7d"; "0s" is
	// due at once even on a topic with a delivery_delay), "" none.
	// DeliverAt schedules it for a time in Unix milliseconds, 0 none.
	// Set at most one (WithDelay and WithDeliverAt do). The binary body
	// cannot carry either: ProduceBatchAs refuses them there.
	Delay     string `json:"delay,omitempty"`
	DeliverAt int64  `json:"deliver_at,omitempty"`
}

// WithKey returns r keyed by key: as Key when it is UTF-8, else as
// KeyBase64, so that any key arrives byte for byte.
func (r BatchRecord) WithKey(key []byte) BatchRecord {
	r.Key, r.KeyBase64 = nil, ""
	if utf8.Valid(key) {
		k := string(key)
		r.Key = &k
	} else {
		r.KeyBase64 = encodeBase64(key)
	}
	return r
}

// RecordFromBytes picks the encoding that round-trips b exactly: JSON that
// is not a string and is compact is sent as itself; other UTF-8 — text, a
// JSON string (the server stores a string payload as its text), JSON with
// whitespace that encoding/json would compact on the way — as a JSON
// string of b; anything else as base64. What is stored is b, and
// Message.Bytes gives b back.
func RecordFromBytes(b []byte) BatchRecord {
	switch {
	case len(b) > 0 && b[0] != '"' && json.Valid(b) && isCompact(b):
		return BatchRecord{Payload: json.RawMessage(b)}
	case utf8.Valid(b):
		s, _ := json.Marshal(string(b)) // cannot fail for a string
		return BatchRecord{Payload: s}
	default:
		return BatchRecord{PayloadBase64: encodeBase64(b)}
	}
}

func isCompact(b []byte) bool {
	var c bytes.Buffer
	return json.Compact(&c, b) == nil && bytes.Equal(c.Bytes(), b)
}

// ProduceBatch sends records in one request:
// POST /v1/topics/{t}/produce/batch, 202 {"accepted": N, "ids": [...]}
// (ProduceBatchWithIDs returns the ids). Every record is
// durable when it returns; on a refusal none is stored, and RefusedIndex
// names the record refused. A JSON Payload is sent byte for byte, so it
// comes back from consume exactly as given.
func (c *Client) ProduceBatch(ctx context.Context, topic string, records []BatchRecord) (int, error) {
	return c.ProduceBatchAs(ctx, topic, records, BatchJSON)
}

// BatchProduced is what the node answered for a batch: how many records
// it accepted and their message ids in request order (IDs is nil from a
// node that predates message ids; an id is empty for a replicated topic's
// record its leader dropped as a duplicate).
type BatchProduced struct {
	Accepted int      `json:"accepted"`
	IDs      []string `json:"ids"`
}

// ProduceBatchWithIDs is ProduceBatchAs that returns the records' ids.
func (c *Client) ProduceBatchWithIDs(ctx context.Context, topic string, records []BatchRecord, format BatchFormat) (BatchProduced, error) {
	if topic == "" {
		return BatchProduced{}, errEmptyName
	}
	var body []byte
	var err error
	contentType := "application/json"
	switch format {
	case BatchNDJSON:
		contentType = "application/x-ndjson"
		body, err = ndjsonBody(records)
	case BatchBinary:
		contentType = "application/x-narad-batch"
		body, err = binaryBody(records)
	default:
		body, err = batchBody(records)
	}
	if err != nil {
		return BatchProduced{}, err
	}
	path := topicPath(topic, "produce", "batch")
	resp, err := c.do(ctx, request{method: http.MethodPost, path: path, body: body, contentType: contentType})
	if err != nil {
		return BatchProduced{}, err
	}
	var out BatchProduced
	if err := json.Unmarshal(resp.body, &out); err != nil {
		return BatchProduced{}, fmt.Errorf("POST %s: decoding response: %w", path, err)
	}
	return out, nil
}

// batchBody is {"records": [...]} with each JSON payload's bytes as they
// are: json.Marshal compacts a json.RawMessage (and a Marshaler's output),
// which would change what the node stores and returns. A record whose
// fields are all plain (appendPlain) is written by hand, the same bytes
// encoding/json would write (a differential test holds them equal): the
// reflective encoder and json.Valid were most of a batch producer's CPU.
func batchBody(records []BatchRecord) ([]byte, error) {
	size := len(`{"records":[]}`)
	for i := range records {
		size += len(records[i].Payload) + len(records[i].PayloadBase64) + 32
	}
	out := make([]byte, 0, size)
	out = append(out, `{"records":[`...)
	var buf bytes.Buffer // the fallback's
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	for i := range records {
		if i > 0 {
			out = append(out, ',')
		}
		r := &records[i]
		if !encodeAll && plain(r) {
			out = appendPlain(out, r)
			continue
		}
		one := *r
		payload := one.Payload
		if len(payload) > 0 && !json.Valid(payload) {
			return nil, fmt.Errorf("batch record %d: payload is not valid JSON (use PayloadBase64 or RecordFromBytes for other bytes)", i)
		}
		one.Payload = nil
		buf.Reset()
		if err := enc.Encode(one); err != nil {
			return nil, fmt.Errorf("batch record %d: %w", i, err)
		}
		enc1 := bytes.TrimSuffix(buf.Bytes(), []byte("\n"))
		if len(payload) == 0 {
			out = append(out, enc1...)
			continue
		}
		out = append(out, enc1[:len(enc1)-1]...) // without the closing brace
		if len(enc1) > 2 {
			out = append(out, ',')
		}
		out = append(out, `"payload":`...)
		out = append(out, payload...)
		out = append(out, '}')
	}
	return append(out, "]}"...), nil
}

// encodeAll turns appendPlain off: the differential test's reference.
var encodeAll = false

// plain reports whether appendPlain can write r: no headers, every
// string field plain ASCII (plainASCII), and a payload that is empty or
// a JSON string of plain ASCII — so no escaping, no map and no JSON to
// check.
func plain(r *BatchRecord) bool {
	if r.Headers != nil || (r.Key != nil && !plainASCII(*r.Key)) || !plainASCII(r.KeyBase64) ||
		!plainASCII(r.PayloadBase64) || !plainASCII(r.MsgID) || !plainASCII(r.Delay) {
		return false
	}
	p := r.Payload
	return len(p) == 0 || (len(p) >= 2 && p[0] == '"' && p[len(p)-1] == '"' && plainASCII(p[1:len(p)-1]))
}

// appendPlain appends a plain r (plain) as batchBody's encoder would:
// the struct's fields in order, empty ones left out, the payload last.
func appendPlain(b []byte, r *BatchRecord) []byte {
	sep := byte('{')
	if r.Key != nil {
		b = appendField(b, sep, "key", *r.Key)
		sep = ','
	}
	if r.KeyBase64 != "" {
		b = appendField(b, sep, "key_base64", r.KeyBase64)
		sep = ','
	}
	if r.Partition != nil {
		b = append(b, sep)
		b = append(b, `"partition":`...)
		b = strconv.AppendInt(b, int64(*r.Partition), 10)
		sep = ','
	}
	if r.PayloadBase64 != "" {
		b = appendField(b, sep, "payload_base64", r.PayloadBase64)
		sep = ','
	}
	if r.MsgID != "" {
		b = appendField(b, sep, "msg_id", r.MsgID)
		sep = ','
	}
	if r.Delay != "" {
		b = appendField(b, sep, "delay", r.Delay)
		sep = ','
	}
	if r.DeliverAt != 0 {
		b = append(b, sep)
		b = append(b, `"deliver_at":`...)
		b = strconv.AppendInt(b, r.DeliverAt, 10)
		sep = ','
	}
	if len(r.Payload) > 0 {
		b = append(b, sep)
		b = append(b, `"payload":`...)
		b = append(b, r.Payload...)
		sep = ','
	}
	if sep == '{' {
		b = append(b, '{')
	}
	return append(b, '}')
}

// appendField appends sep"name":"v".
func appendField(b []byte, sep byte, name, v string) []byte {
	b = append(b, sep, '"')
	b = append(b, name...)
	b = append(b, '"', ':', '"')
	b = append(b, v...)
	return append(b, '"')
}

// plainASCII reports whether s is written into a JSON string as it is:
// printable ASCII without '"' or '\\' (and, as the encoder escapes them
// only with HTML escaping on, '<', '>' and '&' are plain here).
func plainASCII[S ~string | ~[]byte](s S) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c >= 0x7f || c == '"' || c == '\\' {
			return false
		}
	}
	return true
}
