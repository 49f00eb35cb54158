package awsapi

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/narad-io/narad/internal/awsattr"
	"github.com/narad-io/narad/internal/broker"
	"github.com/narad-io/narad/internal/header"
)

// v1Message is a message of a /v1 consume answer.
type v1Message struct {
	Partition       int               `json:"partition"`
	Offset          uint64            `json:"offset"`
	ID              string            `json:"id"`
	Key             *string           `json:"key"`
	KeyBase64       *string           `json:"key_base64"`
	Payload         json.RawMessage   `json:"payload"`
	PayloadEncoding string            `json:"payload_encoding"`
	TimestampMs     int64             `json:"timestamp_ms"`
	ReceiptHandle   string            `json:"receipt_handle"`
	DeliveryCount   int               `json:"delivery_count"`
	Headers         map[string]string `json:"headers"`

	// raw and hdrs are the payload and headers of a message this node
	// served in-process (httpapi.WithMessages), which came as values,
	// not JSON: when set they stand for Payload and Headers.
	raw  []byte
	hdrs []header.Header
}

// fromBroker is a message served in-process as a value.
func fromBroker(m broker.Message) v1Message {
	v := v1Message{Partition: m.Partition, Offset: m.Offset, ID: m.ID, TimestampMs: m.CommittedAt,
		ReceiptHandle: m.ReceiptHandle, DeliveryCount: m.DeliveryCount, raw: m.Payload, hdrs: m.Headers}
	if v.raw == nil {
		v.raw = []byte{}
	}
	if len(m.Key) > 0 {
		k := string(m.Key)
		v.Key = &k
	}
	return v
}

// body is the message's payload bytes as they were produced.
func (m *v1Message) body() []byte {
	if m.raw != nil {
		return m.raw
	}
	switch m.PayloadEncoding {
	case "text":
		var s string
		if json.Unmarshal(m.Payload, &s) == nil {
			return []byte(s)
		}
	case "base64":
		var s string
		if json.Unmarshal(m.Payload, &s) == nil {
			if b, err := base64.StdEncoding.DecodeString(s); err == nil {
				return b
			}
		}
	}
	return m.Payload
}

func (m *v1Message) key() string {
	if m.Key != nil {
		return *m.Key
	}
	if m.KeyBase64 != nil {
		return *m.KeyBase64
	}
	return ""
}

// headerList is the message's headers as a sorted list.
func (m *v1Message) headerList() []header.Header {
	if m.hdrs != nil {
		return m.hdrs
	}
	hs := make([]header.Header, 0, len(m.Headers))
	for _, k := range sortedKeys(m.Headers) {
		hs = append(hs, header.Header{Name: k, Value: m.Headers[k]})
	}
	return hs
}

// messageID is awsattr.MessageID: SQS's and SNS's MessageId of a record.
func messageID(topic, narad, producerID string) string {
	return awsattr.MessageID(topic, narad, producerID)
}

// sequenceNumber is a FIFO message's SequenceNumber: its position, which
// strictly increases within its group (a group lives in one partition).
func sequenceNumber(partition int, offset uint64) string {
	return fmt.Sprintf("%d%020d", partition+1, offset)
}

// selectAttributes keeps the attributes names asks for: "All", ".*",
// a prefix ending ".*", or exact names.
func selectAttributes(attrs []awsattr.Attribute, names []string) []awsattr.Attribute {
	if len(names) == 0 {
		return nil
	}
	var out []awsattr.Attribute
	for _, a := range attrs {
		for _, n := range names {
			if n == "All" || n == ".*" || a.Name == n || (strings.HasSuffix(n, ".*") && strings.HasPrefix(a.Name, strings.TrimSuffix(n, "*"))) {
				out = append(out, a)
				break
			}
		}
	}
	return out
}

// attributeValues is attrs in the JSON protocol's MessageAttributes shape.
func attributeValues(attrs []awsattr.Attribute) map[string]any {
	out := make(map[string]any, len(attrs))
	for _, a := range attrs {
		v := map[string]any{"DataType": a.DataType}
		if awsattr.Kind(a.DataType) == "Binary" {
			v["BinaryValue"] = a.BinaryValue
		} else {
			v["StringValue"] = a.StringValue
		}
		out[a.Name] = v
	}
	return out
}
