package client

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"time"
)

// Message is one delivered record.
type Message struct {
	Topic     string `json:"topic"`
	Partition int    `json:"partition"`
	Offset    uint64 `json:"offset"`
	// ID is the record's message id (docs/concepts.md, "Message ids"):
	// the one its produce answered (Produced.ID), the same on every
	// consume and replay; empty from a node that predates message ids.
	ID string `json:"id,omitempty"`
	// Key is the record's key when it is UTF-8; KeyBase64 holds a key that
	// is not (base64). Both are empty for a keyless record; KeyBytes gives
	// the key's bytes either way.
	Key       *string `json:"key,omitempty"`
	KeyBase64 string  `json:"key_base64,omitempty"`
	// Payload is the record as the server embedded it: a JSON payload
	// with the very bytes it was produced with, text or base64 as a JSON
	// string (PayloadEncoding "text" or "base64"). Bytes gives the bytes
	// that were produced.
	Payload         json.RawMessage `json:"payload"`
	PayloadEncoding string          `json:"payload_encoding,omitempty"`
	// Timestamp is when the record was committed, as the server sent it
	// (Unix seconds today); Time interprets it.
	Timestamp int64 `json:"timestamp"`
	// TimestampMs is the commit time in Unix milliseconds (0 from a
	// server that does not send it): the order of a replay by time.
	TimestampMs int64 `json:"timestamp_ms,omitempty"`
	// DeliverAt is a scheduled record's due time in Unix milliseconds
	// (docs/concepts.md, "Scheduled delivery"): queue consume offered it
	// no earlier; replay returns it at once. 0 for a record due at once.
	// DueTime interprets it.
	DeliverAt int64 `json:"deliver_at,omitempty"`
	// ReceiptHandle acknowledges this delivery; empty for replays by offset.
	ReceiptHandle string `json:"receipt_handle,omitempty"`
	DeliveryCount int    `json:"delivery_count"`
	// Headers are the record's headers (docs/concepts.md, "Records"); nil
	// when it has none. Names beginning "narad-" were set by the broker (a
	// dead-lettered record's narad-dlq-*, for one).
	Headers map[string]string `json:"headers,omitempty"`

	raw json.RawMessage
}

// Raw is the message object exactly as the server sent it (payload bytes,
// fields this client does not know and all), so a tool printing JSON
// prints the API's JSON. It is nil for a Message not decoded from an
// answer.
func (m Message) Raw() json.RawMessage { return m.raw }

// UnmarshalJSON decodes a message and keeps its bytes for Raw.
func (m *Message) UnmarshalJSON(b []byte) error {
	type plain Message // without this method, so the decode does not recurse
	if err := json.Unmarshal(b, (*plain)(m)); err != nil {
		return err
	}
	m.raw = bytes.Clone(b)
	return nil
}

// Bytes returns the payload as produced: with payload_encoding "base64"
// the decoded bytes, with "text" the string's text, and without one (a
// JSON payload) the JSON exactly as it was produced — a JSON string
// included, quotes and escapes as sent: the text hello and the JSON
// string "hello" are two different payloads. (JSON whitespace around
// the value is the one thing a JSON decoder does not hand over.)
func (m Message) Bytes() ([]byte, error) {
	p := bytes.TrimSpace(m.Payload)
	switch m.PayloadEncoding {
	case "base64":
		b, err := decodeBase64String(p)
		if err != nil {
			return nil, fmt.Errorf("offset %d: base64 payload: %w", m.Offset, err)
		}
		return b, nil
	case "text":
		var s string
		if err := json.Unmarshal(p, &s); err != nil {
			return nil, fmt.Errorf("offset %d: text payload is not a JSON string: %w", m.Offset, err)
		}
		return []byte(s), nil
	case "":
		return bytes.Clone(p), nil
	}
	return nil, fmt.Errorf("offset %d: unknown payload_encoding %q (a newer server?)", m.Offset, m.PayloadEncoding)
}

// KeyBytes returns the record's key as produced; nil for a keyless record.
func (m Message) KeyBytes() ([]byte, error) {
	switch {
	case m.KeyBase64 != "":
		b, err := base64.StdEncoding.DecodeString(m.KeyBase64)
		if err != nil {
			return nil, fmt.Errorf("offset %d: bad key_base64: %w", m.Offset, err)
		}
		return b, nil
	case m.Key != nil:
		return []byte(*m.Key), nil
	}
	return nil, nil
}

// decodeBase64String decodes a JSON string of base64 (padded, or not:
// some encoders drop the padding).
func decodeBase64String(p []byte) ([]byte, error) {
	var s string
	if err := json.Unmarshal(p, &s); err != nil {
		return nil, fmt.Errorf("not a JSON string: %w", err)
	}
	b, err := base64.StdEncoding.DecodeString(s)
	if err != nil {
		if b2, err2 := base64.RawStdEncoding.DecodeString(s); err2 == nil {
			return b2, nil
		}
		return nil, err
	}
	return b, nil
}

// Time is the commit time: TimestampMs when the server sent it, else
// Timestamp; zero when the server sent neither.
func (m Message) Time() time.Time {
	if m.TimestampMs != 0 {
		return time.UnixMilli(m.TimestampMs).UTC()
	}
	return UnixTime(m.Timestamp)
}

func encodeBase64(b []byte) string { return base64.StdEncoding.EncodeToString(b) }
