package httpapi

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"unicode/utf8"

	"github.com/narad-io/narad/internal/broker"
)

// messageJSON is a delivered record as the API shows it.
type messageJSON struct {
	Topic           string          `json:"topic"`
	Partition       int             `json:"partition"`
	Offset          uint64          `json:"offset"`
	Key             *string         `json:"key,omitempty"`
	Payload         json.RawMessage `json:"payload"`
	PayloadEncoding string          `json:"payload_encoding,omitempty"`
	Timestamp       int64           `json:"timestamp"`
	ReceiptHandle   string          `json:"receipt_handle,omitempty"`
	DeliveryCount   int             `json:"delivery_count,omitempty"`
}

// encodePayload applies the payload rules of 02-http-api.md: a body that is
// valid JSON comes back verbatim as JSON; valid UTF-8 text that is not JSON
// comes back as a JSON string; anything else is base64, flagged.
func encodePayload(p []byte) (json.RawMessage, string) {
	if json.Valid(p) {
		return json.RawMessage(p), ""
	}
	if utf8.Valid(p) {
		s, _ := json.Marshal(string(p))
		return s, ""
	}
	s, _ := json.Marshal(base64.StdEncoding.EncodeToString(p))
	return s, "base64"
}

func toJSON(m broker.Message) messageJSON {
	out := messageJSON{Topic: m.Topic, Partition: m.Partition, Offset: m.Offset,
		Timestamp: m.CommittedAt / 1000, ReceiptHandle: m.ReceiptHandle, DeliveryCount: m.DeliveryCount}
	if len(m.Key) > 0 {
		k := string(m.Key)
		out.Key = &k
	}
	out.Payload, out.PayloadEncoding = encodePayload(m.Payload)
	return out
}

// batchRecordJSON is one record of a batch produce body.
type batchRecordJSON struct {
	Key           *string         `json:"key"`
	Partition     *int            `json:"partition"`
	Payload       json.RawMessage `json:"payload"`
	PayloadBase64 *string         `json:"payload_base64"`
}

// payloadBytes turns a batch record's payload into stored bytes: a JSON
// string is stored as its text, any other JSON value as its JSON text,
// payload_base64 as the decoded bytes.
func (r *batchRecordJSON) payloadBytes() ([]byte, string) {
	switch {
	case r.Payload != nil && r.PayloadBase64 != nil:
		return nil, "give payload or payload_base64, not both"
	case r.PayloadBase64 != nil:
		b, err := base64.StdEncoding.DecodeString(*r.PayloadBase64)
		if err != nil {
			return nil, "payload_base64 is not valid base64"
		}
		return b, ""
	case r.Payload != nil:
		raw := bytes.TrimSpace(r.Payload)
		if len(raw) > 1 && raw[0] == '"' && bytes.IndexByte(raw, '\\') < 0 {
			// No escapes: the decoder validated the string, so its text is
			// the bytes between the quotes (the hot path of text batches).
			return raw[1 : len(raw)-1], ""
		}
		if len(raw) > 0 && raw[0] == '"' {
			var s string
			if err := json.Unmarshal(raw, &s); err != nil {
				return nil, "payload is not a valid JSON string"
			}
			return []byte(s), ""
		}
		return raw, ""
	}
	return nil, "payload or payload_base64 is required"
}
