package client

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"fmt"
)

// BatchFormat is the body a batch produce is sent as. The records, the
// caps and the refusals (with the refused index) are the same in each;
// what differs is the server's cost of reading them.
type BatchFormat int

const (
	// BatchJSON is {"records": [...]} (application/json), ProduceBatch's.
	BatchJSON BatchFormat = iota
	// BatchNDJSON is one record object per line (application/x-ndjson).
	BatchNDJSON
	// BatchBinary is the length-prefixed binary body
	// (application/x-narad-batch, described in the server's OpenAPI
	// document): keys and payloads as raw bytes, no escaping or base64.
	BatchBinary
)

// String is the format's name, as ParseBatchFormat and narad bench --batch-format read it.
func (f BatchFormat) String() string {
	switch f {
	case BatchNDJSON:
		return "ndjson"
	case BatchBinary:
		return "binary"
	}
	return "json"
}

// ParseBatchFormat reads "json", "ndjson" or "binary".
func ParseBatchFormat(s string) (BatchFormat, error) {
	for _, f := range []BatchFormat{BatchJSON, BatchNDJSON, BatchBinary} {
		if f.String() == s {
			return f, nil
		}
	}
	return 0, fmt.Errorf("batch format %q: want json, ndjson or binary", s)
}

// ProduceBatchAs is ProduceBatch with the body sent in format. The node
// stores the same bytes whichever format carries them: a record's Payload
// (JSON; a JSON string is stored as its text) or PayloadBase64 (bytes),
// its Key or KeyBase64.
func (c *Client) ProduceBatchAs(ctx context.Context, topic string, records []BatchRecord, format BatchFormat) (int, error) {
	out, err := c.ProduceBatchWithIDs(ctx, topic, records, format)
	return out.Accepted, err
}

// ndjsonBody is each record of batchBody's envelope on its own line.
func ndjsonBody(records []BatchRecord) ([]byte, error) {
	var buf bytes.Buffer
	for i, r := range records {
		one, err := batchBody([]BatchRecord{r})
		if err != nil {
			return nil, fmt.Errorf("batch record %d: %w", i, err)
		}
		one = bytes.TrimSuffix(bytes.TrimPrefix(one, []byte(`{"records":[`)), []byte("]}"))
		buf.Write(one)
		buf.WriteByte('\n')
	}
	return buf.Bytes(), nil
}

// The binary body (the server's OpenAPI document has the format): magic
// "NRDB" 1, then per record a flags byte (0x01 key, 0x02 partition,
// (flags>>2)&3 the payload's encoding: 0 bytes, 1 text, 2 JSON), the
// partition, the key's length and bytes, the payload's length and bytes —
// integers 4 bytes, unsigned, big-endian. A body with headers is version
// 2 ("NRDB" 2): flag 0x10, and after the key a 2-byte count and per
// header a 2-byte name length, the name, a 2-byte value length, the
// value. A record with a MsgID (version 2 too) has flag 0x20 and, after
// the headers, the id's 2-byte length and its bytes. A body without
// headers or ids stays version 1, which servers from before them read.
const (
	binMagic    = "NRDB\x01"
	binMagicV2  = "NRDB\x02"
	binKey      = 0x01
	binPart     = 0x02
	binEncBytes = 0 << 2
	binEncJSON  = 2 << 2
	binHeaders  = 0x10
	binMsgID    = 0x20
)

func binaryBody(records []BatchRecord) ([]byte, error) {
	size := len(binMagic)
	magic := binMagic
	for i, r := range records {
		if r.Delay != "" || r.DeliverAt != 0 {
			return nil, fmt.Errorf("batch record %d: the binary body cannot carry delay or deliver_at: send the batch as JSON or NDJSON", i)
		}
		if r.MsgID != "" {
			if len(r.MsgID) > 0xffff {
				return nil, fmt.Errorf("batch record %d: msg_id of %d bytes is over 64 KiB", i, len(r.MsgID))
			}
			magic = binMagicV2
			size += 2 + len(r.MsgID)
		}
		size += 13 + len(r.Payload) + len(r.PayloadBase64) + len(r.KeyBase64)
		if r.Key != nil {
			size += len(*r.Key)
		}
		if len(r.Headers) > 0 {
			magic = binMagicV2
			size += 2
			for k, v := range r.Headers {
				size += 4 + len(k) + len(v)
			}
		}
	}
	b := make([]byte, 0, size)
	b = append(b, magic...)
	for i, r := range records {
		var key []byte
		hasKey := true
		switch {
		case r.Key != nil && r.KeyBase64 != "":
			return nil, fmt.Errorf("batch record %d: give Key or KeyBase64, not both", i)
		case r.Key != nil:
			key = []byte(*r.Key)
		case r.KeyBase64 != "":
			k, err := base64.StdEncoding.DecodeString(r.KeyBase64)
			if err != nil {
				return nil, fmt.Errorf("batch record %d: KeyBase64: %w", i, err)
			}
			key = k
		default:
			hasKey = false
		}
		var payload []byte
		var flags byte
		switch {
		case len(r.Payload) > 0 && r.PayloadBase64 != "":
			return nil, fmt.Errorf("batch record %d: give Payload or PayloadBase64, not both", i)
		case len(r.Payload) > 0:
			if !json.Valid(r.Payload) {
				return nil, fmt.Errorf("batch record %d: payload is not valid JSON (use PayloadBase64 or RecordFromBytes for other bytes)", i)
			}
			payload, flags = r.Payload, binEncJSON
		default:
			p, err := base64.StdEncoding.DecodeString(r.PayloadBase64)
			if err != nil {
				return nil, fmt.Errorf("batch record %d: PayloadBase64: %w", i, err)
			}
			payload, flags = p, binEncBytes
		}
		if hasKey {
			flags |= binKey
		}
		if r.Partition != nil {
			if *r.Partition < 0 {
				return nil, fmt.Errorf("batch record %d: partition %d is negative", i, *r.Partition)
			}
			flags |= binPart
		}
		if len(r.Headers) > 0 {
			flags |= binHeaders
		}
		if r.MsgID != "" {
			flags |= binMsgID
		}
		b = append(b, flags)
		if r.Partition != nil {
			b = binary.BigEndian.AppendUint32(b, uint32(*r.Partition))
		}
		if hasKey {
			b = binary.BigEndian.AppendUint32(b, uint32(len(key)))
			b = append(b, key...)
		}
		if len(r.Headers) > 0 {
			if len(r.Headers) > 0xffff {
				return nil, fmt.Errorf("batch record %d: %d headers", i, len(r.Headers))
			}
			b = binary.BigEndian.AppendUint16(b, uint16(len(r.Headers)))
			for k, v := range r.Headers {
				if len(k) > 0xffff || len(v) > 0xffff {
					return nil, fmt.Errorf("batch record %d: header %.32q is over 64 KiB", i, k)
				}
				b = binary.BigEndian.AppendUint16(b, uint16(len(k)))
				b = append(b, k...)
				b = binary.BigEndian.AppendUint16(b, uint16(len(v)))
				b = append(b, v...)
			}
		}
		if r.MsgID != "" {
			b = binary.BigEndian.AppendUint16(b, uint16(len(r.MsgID)))
			b = append(b, r.MsgID...)
		}
		b = binary.BigEndian.AppendUint32(b, uint32(len(payload)))
		b = append(b, payload...)
	}
	return b, nil
}
