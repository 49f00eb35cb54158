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
	// Key is the record's key; nil when it has none, or when the key is
	// not valid UTF-8 and comes as KeyBase64 instead (see KeyBytes).
	Key       *string `json:"key,omitempty"`
	KeyBase64 *string `json:"key_base64,omitempty"`
	// Payload is the record as JSON; see Bytes for the original bytes.
	Payload json.RawMessage `json:"payload"`
	// PayloadEncoding says how Payload carries the bytes: "" (the JSON
	// itself), "text" (a JSON string of the text) or "base64".
	PayloadEncoding string `json:"payload_encoding,omitempty"`
	// Timestamp is when the record was committed, as the server sent it
	// (Unix seconds today); Time interprets it.
	Timestamp int64 `json:"timestamp"`
	// ReceiptHandle acknowledges this delivery; empty for replays by offset.
	ReceiptHandle string `json:"receipt_handle,omitempty"`
	DeliveryCount int    `json:"delivery_count"`

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

// Bytes returns the payload as produced: with payload_encoding "base64" the
// payload is a JSON string of base64, with "text" a JSON string of the
// text; otherwise a JSON string stands for its text (servers from before
// "text" flag text that way), and any other JSON value for its own JSON
// text.
func (m Message) Bytes() ([]byte, error) {
	p := bytes.TrimSpace(m.Payload)
	if m.PayloadEncoding == "base64" {
		var s string
		if err := json.Unmarshal(p, &s); err != nil {
			return nil, fmt.Errorf("offset %d: base64 payload is not a JSON string: %w", m.Offset, err)
		}
		b, err := base64.StdEncoding.DecodeString(s)
		if err != nil {
			// Some encoders drop the padding; accept that too.
			if b2, err2 := base64.RawStdEncoding.DecodeString(s); err2 == nil {
				return b2, nil
			}
			return nil, fmt.Errorf("offset %d: bad base64 payload: %w", m.Offset, err)
		}
		return b, nil
	}
	if len(p) > 0 && p[0] == '"' {
		var s string
		if err := json.Unmarshal(p, &s); err != nil {
			return nil, fmt.Errorf("offset %d: bad string payload: %w", m.Offset, err)
		}
		return []byte(s), nil
	}
	return bytes.Clone(p), nil
}

// KeyBytes returns the record's key as produced, whether it came as Key or
// (not valid UTF-8) as KeyBase64; nil when the record has no key.
func (m Message) KeyBytes() ([]byte, error) {
	switch {
	case m.KeyBase64 != nil:
		b, err := base64.StdEncoding.DecodeString(*m.KeyBase64)
		if err != nil {
			return nil, fmt.Errorf("offset %d: bad key_base64: %w", m.Offset, err)
		}
		return b, nil
	case m.Key != nil:
		return []byte(*m.Key), nil
	}
	return nil, nil
}

// Time is Timestamp as a time; zero when the server sent none.
func (m Message) Time() time.Time { return UnixTime(m.Timestamp) }

func encodeBase64(b []byte) string { return base64.StdEncoding.EncodeToString(b) }
