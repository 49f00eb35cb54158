package awsapi

import (
	"github.com/narad-io/narad/internal/jsonenc"
)

// object is an answer object built as a struct rather than as a map: the
// entries of the busiest answers (a message sent, a message received),
// of which a batch has ten. In a profile of the node under a batch send
// (bench --api sqs --batch 10), building a map per entry and then sorting
// and writing its keys took a sixth of the edge's own CPU; a received
// body was also copied into a string for its map. The JSON protocol
// writes an object by appendJSON; the Query protocol's XML reads it
// through asMap, so both protocols answer the same fields
// (TestObjectsAnswerAsTheirMaps).
type object interface {
	// appendJSON appends the object as appendValue writes asMap().
	appendJSON(b []byte) []byte
	asMap() map[string]any
}

// fields appends an object's fields in the order given, which must be
// sorted by name as appendValue sorts a map's keys.
type fields struct {
	b []byte
	n int
}

func (f *fields) name(name string) {
	if f.n > 0 {
		f.b = append(f.b, ',')
	}
	f.n++
	f.b = jsonenc.AppendString(f.b, name)
	f.b = append(f.b, ':')
}

// str appends a string field; an empty one is left out when omitEmpty.
func (f *fields) str(name, v string, omitEmpty bool) {
	if v == "" && omitEmpty {
		return
	}
	f.name(name)
	f.b = jsonenc.AppendString(f.b, v)
}

// value appends a field of any other shape; nil is left out.
func (f *fields) value(name string, v any, isNil bool) {
	if isNil {
		return
	}
	f.name(name)
	f.b = appendValue(f.b, v)
}

// sendResult is the answer for one message sent: SendMessage's output,
// or a SendMessageBatch's SendMessageBatchResultEntry (entryID set).
type sendResult struct {
	entryID, messageID, md5Body, md5Attrs, md5Sys string
}

func (r *sendResult) appendJSON(b []byte) []byte {
	f := fields{b: append(b, '{')}
	f.str("Id", r.entryID, true)
	f.str("MD5OfMessageAttributes", r.md5Attrs, true)
	f.str("MD5OfMessageBody", r.md5Body, false)
	f.str("MD5OfMessageSystemAttributes", r.md5Sys, true)
	f.str("MessageId", r.messageID, false)
	return append(f.b, '}')
}

func (r *sendResult) asMap() map[string]any {
	m := map[string]any{"MessageId": r.messageID, "MD5OfMessageBody": r.md5Body}
	for k, v := range map[string]string{"Id": r.entryID, "MD5OfMessageAttributes": r.md5Attrs, "MD5OfMessageSystemAttributes": r.md5Sys} {
		if v != "" {
			m[k] = v
		}
	}
	return m
}

// receivedMessage is one message of a ReceiveMessage answer. Its body is
// the record's payload as served, valid UTF-8, not copied.
type receivedMessage struct {
	messageID, receiptHandle, md5Body string
	body                              []byte
	attrs                             map[string]any    // MessageAttributes; nil: none asked for or none
	md5Attrs                          string            // with attrs
	sys                               map[string]string // Attributes (the system ones); nil: none
}

func (r *receivedMessage) appendJSON(b []byte) []byte {
	f := fields{b: append(b, '{')}
	f.value("Attributes", r.sys, r.sys == nil)
	f.name("Body")
	f.b = jsonenc.AppendString(f.b, r.body)
	f.str("MD5OfBody", r.md5Body, false)
	f.str("MD5OfMessageAttributes", r.md5Attrs, true)
	f.value("MessageAttributes", r.attrs, r.attrs == nil)
	f.str("MessageId", r.messageID, false)
	f.str("ReceiptHandle", r.receiptHandle, false)
	return append(f.b, '}')
}

func (r *receivedMessage) asMap() map[string]any {
	m := map[string]any{"MessageId": r.messageID, "ReceiptHandle": r.receiptHandle, "Body": string(r.body), "MD5OfBody": r.md5Body}
	if r.attrs != nil {
		m["MessageAttributes"] = r.attrs
		m["MD5OfMessageAttributes"] = r.md5Attrs
	}
	if r.sys != nil {
		m["Attributes"] = r.sys
	}
	return m
}
