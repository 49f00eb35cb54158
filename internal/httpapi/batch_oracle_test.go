package httpapi

import (
	"bufio"
	"bytes"
	"encoding/base64"
	"encoding/json"
	"mime"
	"net/http"
	"net/http/httptest"
	"reflect"

	"github.com/narad-io/narad/internal/apierr"
	"github.com/narad-io/narad/internal/broker"
	"github.com/narad-io/narad/internal/header"
)

// The encoding/json batch decoder as it was before the one-pass scanner
// (batch_json.go, batch_ndjson.go): kept only as the oracle of the
// differential fuzz test. oracleBatch answers what the handler decided
// from a body: the records, or the refusal (and, for a record's, the
// records before it, which the handler gives the broker to judge first).
func oracleBatch(ndjson bool, body []byte) ([]broker.ProduceRecord, error) {
	r := httptest.NewRequest(http.MethodPost, "/v1/topics/t/produce/batch", bytes.NewReader(body))
	if ndjson {
		r.Header.Set("Content-Type", "application/x-ndjson")
	}
	recs, err := decodeBatch(r, body)
	if err != nil {
		return nil, err
	}
	if len(recs) > broker.MaxBatchRecords {
		return nil, apierr.TooLarge("batch of %d records is over the cap of %d", len(recs), broker.MaxBatchRecords)
	}
	if recs != nil && !ndjson && decodeStrict(body, &batchEnvelope{}) != nil {
		// A bug of the old one-pass path, fixed by the scanner: it took
		// a body with a "]" or "}" after the object (Decoder.More is
		// false before those), which its own slow path refused as
		// trailing data. The oracle answers as the slow path did.
		recs = nil
	}
	if recs == nil {
		return decodeBatchSlowly(r, body)
	}
	return recs, nil
}

// decodeBatchRecord decodes record i of a batch body.
func decodeBatchRecord(i int, raw json.RawMessage) (broker.ProduceRecord, error) {
	var br batchRecordJSON
	if err := decodeStrict(raw, &br); err != nil {
		return broker.ProduceRecord{}, apierr.BadRequest("record %d: %v", i, err).AtIndex(i)
	}
	if br.Partition != nil && *br.Partition < 0 {
		return broker.ProduceRecord{}, apierr.BadRequest("record %d: partition %d is negative", i, *br.Partition).AtIndex(i)
	}
	p, why := br.payloadBytes()
	if why != "" {
		return broker.ProduceRecord{}, apierr.BadRequest("record %d: %s", i, why).AtIndex(i)
	}
	if len(p) > broker.MaxPayloadBytes {
		return broker.ProduceRecord{}, apierr.TooLarge("record %d: payload of %d bytes is over the 1 MiB cap", i, len(p)).AtIndex(i)
	}
	key, why := br.keyBytes()
	if why != "" {
		return broker.ProduceRecord{}, apierr.BadRequest("record %d: %s", i, why).AtIndex(i)
	}
	rec := broker.ProduceRecord{Key: key, Partition: br.Partition, Payload: p, Headers: br.headerList()}
	rec.MsgID, rec.HasMsgID = br.msgID()
	if err := scheduleFields(&rec, br.Delay, br.DeliverAt); err != nil {
		return broker.ProduceRecord{}, apierr.BadRequest("record %d: %v", i, err).AtIndex(i)
	}
	return rec, nil
}

// decodeBatch decodes a batch body in one pass (the hot path). It returns
// nil records, and no error, when the body has a problem that the slower
// record-by-record decode must name precisely.
func decodeBatch(r *http.Request, body []byte) ([]broker.ProduceRecord, error) {
	if isNDJSON(r) {
		return nil, nil
	}
	var env struct {
		Records []batchRecordJSON `json:"records"`
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.DisallowUnknownFields()
	if dec.Decode(&env) != nil || dec.More() || len(env.Records) == 0 || len(env.Records) > broker.MaxBatchRecords {
		return nil, nil
	}
	if checkKeys(body, reflect.TypeOf(&env)) != nil {
		return nil, nil
	}
	recs := make([]broker.ProduceRecord, len(env.Records))
	for i := range env.Records {
		br := &env.Records[i]
		p, why := br.payloadBytes()
		key, keyWhy := br.keyBytes()
		if why != "" || keyWhy != "" || len(p) > broker.MaxPayloadBytes || (br.Partition != nil && *br.Partition < 0) {
			return nil, nil
		}
		recs[i] = broker.ProduceRecord{Key: key, Partition: br.Partition, Payload: p, Headers: br.headerList()}
		recs[i].MsgID, recs[i].HasMsgID = br.msgID()
		if scheduleFields(&recs[i], br.Delay, br.DeliverAt) != nil {
			return nil, nil
		}
	}
	return recs, nil
}

// batchEnvelope is a batch body split into its records, each checked on
// its own (decodeBatchRecord) so that a refusal names its index.
type batchEnvelope struct {
	Records []json.RawMessage `json:"records" strict:"opaque"`
}

func isNDJSON(r *http.Request) bool {
	ct, _, _ := mime.ParseMediaType(r.Header.Get("Content-Type"))
	return ct == "application/x-ndjson"
}

// decodeBatchSlowly splits the body into records (JSON envelope or NDJSON
// lines) and decodes them one by one, refusing at the first failing index.
func decodeBatchSlowly(r *http.Request, body []byte) ([]broker.ProduceRecord, error) {
	var raws []json.RawMessage
	if isNDJSON(r) {
		sc := bufio.NewScanner(bytes.NewReader(body))
		sc.Buffer(make([]byte, 0, 64<<10), broker.MaxBatchBodySize)
		for sc.Scan() {
			if line := bytes.TrimSpace(sc.Bytes()); len(line) > 0 {
				raws = append(raws, json.RawMessage(bytes.Clone(line)))
			}
		}
		if len(raws) == 0 {
			return nil, apierr.BadRequest("the NDJSON body holds no record")
		}
	} else {
		var env batchEnvelope
		if err := decodeStrict(body, &env); err != nil {
			return nil, err
		}
		if len(env.Records) == 0 {
			return nil, apierr.BadRequest("records is empty")
		}
		raws = env.Records
	}
	if len(raws) > broker.MaxBatchRecords {
		return nil, apierr.TooLarge("batch of %d records is over the cap of %d", len(raws), broker.MaxBatchRecords)
	}
	recs := make([]broker.ProduceRecord, 0, len(raws))
	for i, raw := range raws {
		rec, err := decodeBatchRecord(i, raw)
		if err != nil {
			return recs, err // the handler let the broker judge recs first
		}
		recs = append(recs, rec)
	}
	return recs, nil
}

// batchRecordJSON is one record of a batch produce body.
type batchRecordJSON struct {
	Key           *string           `json:"key"`
	KeyBase64     *string           `json:"key_base64"` // a key that is not UTF-8, as consume shows it
	Partition     *int              `json:"partition"`
	Payload       json.RawMessage   `json:"payload" strict:"opaque"` // the client's data: its keys are its own
	PayloadBase64 *string           `json:"payload_base64"`
	MsgID         *string           `json:"msg_id"`
	Headers       map[string]string `json:"headers"`
	Delay         json.RawMessage   `json:"delay" strict:"opaque"`
	DeliverAt     json.RawMessage   `json:"deliver_at" strict:"opaque"`
}

// msgID is the record's producer id, and whether it has one.
func (r *batchRecordJSON) msgID() (string, bool) {
	if r.MsgID == nil {
		return "", false
	}
	return *r.MsgID, true
}

// headerList is the record's headers in no particular order (the broker
// sorts them); nil when none.
func (r *batchRecordJSON) headerList() []header.Header {
	if len(r.Headers) == 0 {
		return nil
	}
	out := make([]header.Header, 0, len(r.Headers))
	for k, v := range r.Headers {
		out = append(out, header.Header{Name: k, Value: v})
	}
	return out
}

// keyBytes is the record's key (nil: keyless), or why it is refused.
func (r *batchRecordJSON) keyBytes() ([]byte, string) {
	switch {
	case r.Key != nil && r.KeyBase64 != nil:
		return nil, "give key or key_base64, not both"
	case r.KeyBase64 != nil:
		b, err := base64.StdEncoding.DecodeString(*r.KeyBase64)
		if err != nil {
			return nil, "key_base64 is not valid base64"
		}
		return b, ""
	case r.Key != nil:
		return []byte(*r.Key), ""
	}
	return nil, ""
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
		if string(raw) == "null" {
			// Most likely a client's unset field; storing the text "null"
			// would turn it into a record.
			return nil, "payload is null: give a JSON value, or payload_base64"
		}
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
