package fanout

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"time"

	"github.com/narad-io/narad/internal/awsattr"
	"github.com/narad-io/narad/internal/header"
	"github.com/narad-io/narad/internal/jsonenc"
	"github.com/narad-io/narad/internal/messageid"
	"github.com/narad-io/narad/internal/meta"
	"github.com/narad-io/narad/internal/refusal"
	"github.com/narad-io/narad/internal/storage"
)

// Enveloped links (rule: enveloped links): a child link may wrap each copy
// in an envelope (meta.LinkEnvelope). The one format, "sns", is Amazon
// SNS's notification JSON as SNS delivers it to an SQS queue without
// RawMessageDelivery: the source payload becomes its Message, the source
// record's message attributes (package awsattr) its MessageAttributes, and
// the copy keeps none of the source's client headers. Filters match the
// source record, before it is wrapped; a copy whose envelope would not fit
// a record goes raw, counted. The envelope is built from the source record
// alone, so a slab copied again after a crash is copied byte for byte.

// maxEnvelopeBytes is the largest envelope a copy carries: the payload cap
// of a produce (broker.MaxPayloadBytes, which this package cannot import).
const maxEnvelopeBytes = 1 << 20

// CheckEnvelope reads a link's envelope as an attach, a patch or a create
// gives it: nil for none (absent or null), else a checked envelope. A
// malformed one is 400, decided from the body alone.
func CheckEnvelope(raw json.RawMessage) (*meta.LinkEnvelope, error) {
	if len(raw) == 0 || string(raw) == "null" {
		return nil, nil
	}
	var env meta.LinkEnvelope
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&env); err != nil {
		return nil, refusal.New(refusal.ErrInvalid, 0, `envelope: want {"format": %q, "topic_arn": "arn:..."}: %v`, meta.EnvelopeSNS, err)
	}
	if err := meta.CheckEnvelope(env); err != nil {
		return nil, refusal.New(refusal.ErrInvalid, 0, "%v", err)
	}
	return &env, nil
}

// withEnvelopes is withSourceIDs for a link with an envelope: each copy's
// payload is its source record's notification, and its headers only the
// broker's it would carry raw (narad-deliver-at, narad-msg-id) and
// narad-source-id. A record whose notification would exceed
// maxEnvelopeBytes is copied as withSourceIDs copies it; raw counts them.
func withEnvelopes(recs []storage.Record, parent meta.Topic, p int, env *meta.LinkEnvelope) (out []storage.Record, raw int) {
	out = make([]storage.Record, len(recs))
	for i, r := range recs {
		id := messageid.Of(parent.Name, parent.Incarnation, p, r.Offset, r.Origin, r.Seq)
		payload := notification(env, parent.Name, id, &r)
		if len(payload) > maxEnvelopeBytes {
			raw++
			out[i] = storage.Record{Offset: r.Offset, CommittedAt: r.CommittedAt, Key: r.Key, Payload: r.Payload,
				Headers: header.WithSourceID(r.Headers, id)}
			continue
		}
		hs := make([]header.Header, 0, 3) // sorted: deliver-at, msg-id, source-id
		if v, ok := header.Get(r.Headers, header.DeliverAt); ok {
			hs = append(hs, header.Header{Name: header.DeliverAt, Value: v})
		}
		if v, ok := header.MsgIDOf(r.Headers); ok {
			hs = append(hs, header.Header{Name: header.MsgID, Value: v})
		}
		hs = append(hs, header.Header{Name: header.SourceID, Value: id})
		out[i] = storage.Record{Offset: r.Offset, CommittedAt: r.CommittedAt, Key: r.Key, Payload: payload, Headers: hs}
	}
	return out, raw
}

// notification is r, of message id sourceID in topic, as the SNS
// notification env names, its fields in the order SNS writes them.
func notification(env *meta.LinkEnvelope, topic, sourceID string, r *storage.Record) []byte {
	producerID, _ := header.MsgIDOf(r.Headers)
	attrs, m := awsattr.Decode(r.Headers)
	b := make([]byte, 0, 320+len(env.TopicARN)+len(m.Subject)+len(r.Payload)+len(r.Payload)/16+header.Bytes(r.Headers))
	b = append(b, `{"Type":"Notification","MessageId":`...)
	b = jsonenc.AppendString(b, awsattr.MessageID(topic, sourceID, producerID))
	b = append(b, `,"TopicArn":`...)
	b = jsonenc.AppendString(b, env.TopicARN)
	if m.Subject != "" {
		b = append(b, `,"Subject":`...)
		b = jsonenc.AppendString(b, m.Subject)
	}
	b = append(b, `,"Message":`...)
	b = jsonenc.AppendString(b, r.Payload)
	b = append(b, `,"Timestamp":"`...)
	b = time.UnixMilli(r.CommittedAt).UTC().AppendFormat(b, "2006-01-02T15:04:05.000Z07:00")
	b = append(b, `","SignatureVersion":"1","Signature":"","SigningCertURL":"","UnsubscribeURL":""`...)
	if len(attrs) > 0 {
		b = append(b, `,"MessageAttributes":{`...)
		for i, a := range attrs {
			if i > 0 {
				b = append(b, ',')
			}
			b = jsonenc.AppendString(b, a.Name)
			b = append(b, `:{"Type":`...)
			b = jsonenc.AppendString(b, a.DataType)
			b = append(b, `,"Value":`...)
			if awsattr.Kind(a.DataType) == "Binary" {
				b = append(b, '"')
				b = base64.StdEncoding.AppendEncode(b, a.BinaryValue)
				b = append(b, '"')
			} else {
				b = jsonenc.AppendString(b, a.StringValue)
			}
			b = append(b, '}')
		}
		b = append(b, '}')
	}
	return append(b, '}')
}
