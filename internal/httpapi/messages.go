package httpapi

import (
	"bufio"
	"bytes"
	"encoding/json"
	"mime"
	"net/http"
	"reflect"
	"strconv"

	"github.com/narad-io/narad/internal/apierr"
	"github.com/narad-io/narad/internal/broker"
	"github.com/narad-io/narad/internal/lease"
	"github.com/narad-io/narad/internal/meta"
)

func (s *Server) produce(w http.ResponseWriter, r *http.Request, _ string) error {
	topic, err := s.messageTopic(r, meta.ActionProduce, "key", "partition")
	if err != nil {
		return err
	}
	q := r.URL.Query()
	part, err := optInt(q, "partition")
	if err != nil {
		return err
	}
	body, err := readBody(r, broker.MaxPayloadBytes, "payload")
	if err != nil {
		return err
	}
	rec := broker.ProduceRecord{Key: []byte(q.Get("key")), Partition: part, Payload: body}
	if err := s.b.Produce(r.Context(), topic, rec); err != nil {
		return err
	}
	w.WriteHeader(http.StatusAccepted)
	return nil
}

func (s *Server) produceBatch(w http.ResponseWriter, r *http.Request, _ string) error {
	n, err := s.acceptBatch(r)
	if err != nil {
		s.refuseBatch(w, r, err)
		return nil
	}
	writeJSON(w, http.StatusAccepted, map[string]int{"accepted": n})
	return nil
}

// refuseBatch writes every refusal of a batch produce (past
// authentication): the one place its error body is built.
func (s *Server) refuseBatch(w http.ResponseWriter, r *http.Request, err error) {
	s.writeError(w, r, err)
}

// acceptBatch validates, decodes and produces a batch, and says how many
// records it accepted.
func (s *Server) acceptBatch(r *http.Request) (int, error) {
	topic, err := s.messageTopic(r, meta.ActionProduce)
	if err != nil {
		return 0, err
	}
	body, err := readBody(r, broker.MaxBatchBodySize, "batch body")
	if err != nil {
		return 0, err
	}
	recs, err := decodeBatch(r, body)
	if err != nil {
		return 0, err
	}
	if len(recs) > broker.MaxBatchRecords {
		return 0, apierr.TooLarge("batch of %d records is over the cap of %d", len(recs), broker.MaxBatchRecords)
	}
	if recs == nil {
		// The one-pass decode refused the body: decode record by record so
		// the refusal names the first failing index.
		if recs, err = s.decodeBatchSlowly(r, topic, body); err != nil {
			return 0, err
		}
	}
	if err := s.b.ProduceBatch(r.Context(), topic, recs); err != nil {
		return 0, err
	}
	return len(recs), nil
}

// waitCappedHeader names the longest wait a consume got when it asked for
// more than the server grants (02-http-api.md: "capped by the server").
const waitCappedHeader = "Narad-Wait-Capped"

func (s *Server) consume(w http.ResponseWriter, r *http.Request, user string) error {
	q := r.URL.Query()
	topic, err := s.messageTopicQuery(r, q, meta.ActionConsume, "wait", "partition", "offset", "max")
	if err != nil {
		return err
	}
	req := broker.ConsumeRequest{Topic: topic}
	if req.Partition, err = optInt(q, "partition"); err != nil {
		return err
	}
	if req.Offset, err = optUint(q, "offset"); err != nil {
		return err
	}
	if req.Wait, err = parseWait(q); err != nil {
		return err
	}
	batch := q.Has("max")
	if batch {
		n, err := optRange(q, "max", 1, broker.MaxConsumeBatch)
		if err != nil {
			return err
		}
		req.Max = *n
	}
	if granted := s.b.ConsumeWait(req.Wait); granted < req.Wait {
		// Capped, not refused (a client asking for a minute gets the
		// longest there is), and told so: it may poll again at once.
		w.Header().Set(waitCappedHeader, granted.String())
	}
	if req.Partition != nil {
		if done, err := s.toOwner(w, r, user, topic, *req.Partition, req.Wait); done {
			return err
		}
	} else if _, fwd := forwardedUser(r); s.cluster != nil && !fwd {
		return s.consumeAnywhere(w, r, user, req, batch)
	}
	msgs, err := s.b.Consume(r.Context(), req)
	if err != nil {
		return err
	}
	return writeMessages(w, msgs, batch)
}

// writeMessages answers a consume: 204 for nothing, one message object, or
// {"messages": [...]} when max was given.
func writeMessages(w http.ResponseWriter, msgs []broker.Message, batch bool) error {
	if len(msgs) == 0 {
		w.WriteHeader(http.StatusNoContent)
		return nil
	}
	if !batch {
		msgs = msgs[:1]
	}
	size := 64
	for _, m := range msgs {
		size += 200 + len(m.Key)*2 + len(m.Payload)*4/3
	}
	b := make([]byte, 0, size)
	if batch {
		b = append(b, `{"messages":[`...)
	}
	for i, m := range msgs {
		if i > 0 {
			b = append(b, ',')
		}
		b = appendMessage(b, m)
	}
	if batch {
		b = append(b, "]}"...)
	}
	b = append(b, '\n')
	// A known length spares net/http the chunked framing of an answer
	// past its 2 KiB buffer (every max=100 one).
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Content-Length", strconv.Itoa(len(b)))
	w.WriteHeader(http.StatusOK)
	w.Write(b)
	return nil
}

func (s *Server) ack(w http.ResponseWriter, r *http.Request, user string) error {
	q := r.URL.Query()
	topic, err := s.messageTopicQuery(r, q, meta.ActionConsume, "receipt_handle", "extend")
	if err != nil {
		return err
	}
	if !q.Has("receipt_handle") {
		return s.ackBatch(w, r, topic, user)
	}
	op := broker.Settle
	if q.Has("extend") {
		switch v := q.Get("extend"); v {
		case "true":
			op = broker.Extend
		case "0":
			op = broker.Nack
		default:
			return badParam("extend", v, `want "true" (extend) or "0" (nack)`)
		}
	}
	handle := q.Get("receipt_handle")
	if p, _, _, err := lease.ParseHandle(handle); err == nil {
		if done, err := s.toOwner(w, r, user, topic, p, 0); done {
			return err
		}
	}
	if err := s.b.Ack(r.Context(), topic, handle, op); err != nil {
		return err
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}

func (s *Server) ackBatch(w http.ResponseWriter, r *http.Request, topic, user string) error {
	body, err := readBody(r, 4<<20, "ack body")
	if err != nil {
		return err
	}
	if len(body) == 0 {
		return apierr.BadRequest("receipt_handle is required (or a JSON body with receipt_handles)")
	}
	handles, ok := ackHandlesFast(body)
	if !ok {
		var req struct {
			ReceiptHandles []string `json:"receipt_handles"`
		}
		if err := decodeStrict(body, &req); err != nil {
			return err
		}
		handles = req.ReceiptHandles
	}
	res, err := s.ackEverywhere(r, topic, user, handles)
	if err != nil {
		return err
	}
	writeAckResults(w, res)
	return nil
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
	return broker.ProduceRecord{Key: key, Partition: br.Partition, Payload: p}, nil
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
		recs[i] = broker.ProduceRecord{Key: key, Partition: br.Partition, Payload: p}
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
func (s *Server) decodeBatchSlowly(r *http.Request, topic string, body []byte) ([]broker.ProduceRecord, error) {
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
			// Name the first failing index: an earlier record may fail a
			// check that only the broker makes.
			if berr := s.b.CheckBatch(topic, recs); berr != nil {
				return nil, berr
			}
			return nil, err
		}
		recs = append(recs, rec)
	}
	return recs, nil
}

// messageTopic is the front of every message route: only the given query
// parameters, a valid topic name in the path, and the grant for action
// on it — in that order, so a malformed request is 400 whoever sends it.
func (s *Server) messageTopic(r *http.Request, action string, params ...string) (string, error) {
	if err := onlyParams(r.URL.Query(), params...); err != nil {
		return "", err
	}
	topic := r.PathValue("topic")
	if err := broker.ValidateTopicName(topic); err != nil {
		return "", err
	}
	return topic, s.allow(r, action, topic)
}
