package httpapi

import (
	"net/http"
	"slices"
	"strconv"
	"strings"

	"github.com/narad-io/narad/internal/apierr"
	"github.com/narad-io/narad/internal/broker"
	"github.com/narad-io/narad/internal/jsonenc"
	"github.com/narad-io/narad/internal/lease"
	"github.com/narad-io/narad/internal/meta"
)

// msgIDHeader carries a single produce's producer id (docs/concepts.md,
// "Producer ids and deduplication"), in canonical form for the header map.
const msgIDHeader = "Narad-Msg-Id"

func (s *Server) produce(w http.ResponseWriter, r *http.Request, _ string) error {
	topic, err := s.messageTopic(r, meta.ActionProduce, "key", "partition")
	if err != nil {
		return err
	}
	q := queryOf(r)
	part, err := optInt(q, "partition")
	if err != nil {
		return err
	}
	if err := s.mayProduce(r); err != nil {
		return err
	}
	hs, err := requestHeaders(r)
	if err != nil {
		return err
	}
	body, err := readPooled(r, broker.MaxPayloadBytes, "payload")
	if err != nil {
		return err
	}
	// The data plane copies the record before it returns (the WAL stages
	// its own encoding: DataPlane.Produce), so the buffer goes back to
	// the pool once it has answered.
	defer body.release()
	rec := broker.ProduceRecord{Key: []byte(q.Get("key")), Partition: part, Payload: body.b, Headers: hs}
	if ids, ok := r.Header[msgIDHeader]; ok {
		// Its rules are the broker's. Fields given twice are one
		// comma-separated value (RFC 9110, 5.3).
		rec.MsgID, rec.HasMsgID = strings.Join(ids, ","), true
	}
	if err := scheduleHeaders(r, &rec); err != nil {
		return err
	}
	if err := s.takeProduce(r, 1, recordBytes(rec)); err != nil {
		return err
	}
	acc, err := s.b.ProduceWithID(r.Context(), topic, rec)
	if err != nil {
		return err
	}
	// The record's message id and partition (docs/http-api.md); its
	// offset is not known yet. Written into the body's buffer, which the
	// data plane no longer needs: the hot path allocates no answer.
	body.b = appendAccepted(body.b[:0], acc)
	w.Header()["Content-Type"] = jsonContentType
	w.WriteHeader(http.StatusAccepted)
	w.Write(body.b)
	return nil
}

// messageIDLen is the length of most message ids (package messageid's
// WAL ids), for sizing an answer's buffer.
const messageIDLen = 27

// appendAccepted appends a single produce's answer, {"id":…,"partition":P}
// and a newline, as writeJSON would (no id when produce could not name
// it: appendBatchAnswer).
func appendAccepted(b []byte, acc broker.Accepted) []byte {
	b = append(b, '{')
	if acc.ID != "" {
		b = append(b, `"id":`...)
		b = jsonenc.AppendString(b, acc.ID)
		b = append(b, ',')
	}
	b = append(b, `"partition":`...)
	b = strconv.AppendInt(b, int64(acc.Partition), 10)
	return append(b, "}\n"...)
}

func (s *Server) produceBatch(w http.ResponseWriter, r *http.Request, _ string) error {
	acc, err := s.acceptBatch(r)
	if err != nil {
		s.refuseBatch(w, r, err)
		return nil
	}
	if sink := edgeOf(r.Context()).accepted; sink != nil {
		*sink = acc
		w.WriteHeader(http.StatusAccepted)
		return nil
	}
	w.Header()["Content-Type"] = jsonContentType
	w.WriteHeader(http.StatusAccepted)
	w.Write(appendBatchAnswer(make([]byte, 0, 16+len(acc)*(messageIDLen+3)), acc))
	return nil
}

// appendBatchAnswer appends a batch produce's answer: how many records it
// accepted and their message ids in request order, {"accepted":N,
// "ids":[…]} and a newline (docs/http-api.md), written by hand as
// appendAccepted is. A record produce could not name (a replicated
// topic's duplicate, which the leader left out) is null; ids is left out
// when it names none (a node of a version that could not).
func appendBatchAnswer(b []byte, acc []broker.Accepted) []byte {
	b = append(b, `{"accepted":`...)
	b = strconv.AppendInt(b, int64(len(acc)), 10)
	if slices.ContainsFunc(acc, func(a broker.Accepted) bool { return a.ID != "" }) {
		b = append(b, `,"ids":[`...)
		for i, a := range acc {
			if i > 0 {
				b = append(b, ',')
			}
			if a.ID == "" {
				b = append(b, "null"...)
			} else {
				b = jsonenc.AppendString(b, a.ID)
			}
		}
		b = append(b, ']')
	}
	return append(b, "}\n"...)
}

// refuseBatch writes every refusal of a batch produce (past
// authentication): the one place its error body is built.
func (s *Server) refuseBatch(w http.ResponseWriter, r *http.Request, err error) {
	s.writeError(w, r, err)
}

// acceptBatch validates, decodes and produces a batch, and says what it
// accepted, record by record.
func (s *Server) acceptBatch(r *http.Request) ([]broker.Accepted, error) {
	topic, err := s.messageTopic(r, meta.ActionProduce)
	if err != nil {
		return nil, err
	}
	if recs := edgeOf(r.Context()).records; recs != nil {
		if err := s.mayProduce(r); err != nil {
			return nil, err
		}
		if err := s.takeProduce(r, len(recs), recordBytes(recs...)); err != nil {
			return nil, err
		}
		return s.b.ProduceBatchWithIDs(r.Context(), topic, recs)
	}
	decode, err := batchFormat(r)
	if err != nil {
		return nil, err
	}
	if err := s.mayProduce(r); err != nil {
		return nil, err
	}
	body, err := readBody(r, broker.MaxBatchBodySize, "batch body")
	if err != nil {
		return nil, err
	}
	recs, err := decode(body)
	if err != nil {
		if ae, ok := err.(*apierr.Error); ok && ae.Index != nil {
			// Name the first failing index: an earlier record may fail a
			// check that only the broker makes.
			if berr := s.b.CheckBatch(topic, recs); berr != nil {
				return nil, berr
			}
		}
		return nil, err
	}
	if err := s.takeProduce(r, len(recs), recordBytes(recs...)); err != nil {
		return nil, err
	}
	return s.b.ProduceBatchWithIDs(r.Context(), topic, recs)
}

// waitCappedHeader names the longest wait a consume got when it asked for
// more than the server grants (docs/http-api.md: "capped by the server").
const waitCappedHeader = "Narad-Wait-Capped"

func (s *Server) consume(w http.ResponseWriter, r *http.Request, user string) error {
	q := r.URL.Query()
	topic, err := s.messageTopicQuery(r, q, meta.ActionConsume, "wait", "partition", "offset", "max", "visibility")
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
	if req.Visibility, err = parseVisibility(q); err != nil {
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
	if err := s.takeConsume(r); err != nil {
		return err
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
	return writeMessages(w, r, msgs, batch)
}

// writeMessages answers a consume: 204 for nothing, one message object, or
// {"messages": [...]} when max was given. An in-process consume that
// asked for them (WithMessages) gets the messages themselves and an empty
// 200 instead of their JSON.
func writeMessages(w http.ResponseWriter, r *http.Request, msgs []broker.Message, batch bool) error {
	if len(msgs) == 0 {
		w.WriteHeader(http.StatusNoContent)
		return nil
	}
	if !batch {
		msgs = msgs[:1]
	}
	if sink := edgeOf(r.Context()).messages; sink != nil {
		*sink = msgs
		w.WriteHeader(http.StatusOK)
		return nil
	}
	size := 64
	for _, m := range msgs {
		size += 200 + len(m.Key)*2 + len(m.Payload)*4/3
	}
	p := answerBuf(size)
	b := *p
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
	writeAnswer(w, p, b)
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
	op, d, err := parseExtend(q)
	if err != nil {
		return err
	}
	handle := q.Get("receipt_handle")
	if p, _, _, err := lease.ParseHandle(handle); err == nil {
		// The owner reads the same query again: extend travels with it.
		if done, err := s.toOwner(w, r, user, topic, p, 0); done {
			return err
		}
	}
	if d > 0 {
		err = s.b.ExtendFor(r.Context(), topic, handle, d)
	} else {
		err = s.b.Ack(r.Context(), topic, handle, op)
	}
	if err != nil {
		return err
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}

func (s *Server) ackBatch(w http.ResponseWriter, r *http.Request, topic, user string) error {
	if ec := edgeOf(r.Context()); ec.ackResults != nil {
		res, err := s.ackEverywhere(r, topic, user, ec.ackHandles)
		if err != nil {
			return err
		}
		*ec.ackResults = res
		w.WriteHeader(http.StatusOK)
		return nil
	}
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

// messageTopic is the front of every message route: only the given query
// parameters, a valid topic name in the path, and the grant for action
// on it — in that order, so a malformed request is 400 whoever sends it.
func (s *Server) messageTopic(r *http.Request, action string, params ...string) (string, error) {
	if err := onlyParams(queryOf(r), params...); err != nil {
		return "", err
	}
	topic := r.PathValue("topic")
	if err := broker.ValidateTopicName(topic); err != nil {
		return "", err
	}
	return topic, s.allow(r, action, topic)
}
