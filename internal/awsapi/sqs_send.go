package awsapi

import (
	"crypto/sha256"
	"encoding/hex"
	"net/http"
	"time"

	"github.com/narad-io/narad/internal/awsattr"
	"github.com/narad-io/narad/internal/broker"
	"github.com/narad-io/narad/internal/header"
	"github.com/narad-io/narad/internal/httpapi"
)

// Sending: SendMessage and SendMessageBatch produce records through the
// /v1 batch produce, answered once the records are durable, as any
// produce is.

// outgoing is one message to send, checked.
type outgoing struct {
	rec   broker.ProduceRecord
	md5   string // MD5OfMessageBody
	attrs string // MD5OfMessageAttributes
	sys   string // MD5OfMessageSystemAttributes
	size  int
}

// readMessage reads and checks one message of queue (a SendMessage's
// parameters or a batch entry's).
func (e *Edge) readMessage(c *call, p params, queue string, qi queueInfo) (*outgoing, error) {
	body, err := p.str("MessageBody")
	if err != nil {
		return nil, err
	}
	if !p.has("MessageBody") {
		return nil, errMissingParameter.f("The request must contain the parameter MessageBody.")
	}
	if body == "" {
		return nil, errInvalidParameter.f("The message body must be at least one character long.")
	}
	if !awsattr.ValidText(body) {
		return nil, errInvalidMessageContents.f("Invalid binary character in the message body: SQS allows #x9 | #xA | #xD | #x20 to #xD7FF | #xE000 to #xFFFD | #x10000 to #x10FFFF.")
	}
	attrs, err := p.attributes("MessageAttributes")
	if err != nil {
		return nil, err
	}
	sys, err := p.attributes("MessageSystemAttributes")
	if err != nil {
		return nil, err
	}
	meta := awsattr.Meta{Sender: c.principal.Name}
	for _, a := range sys {
		if a.Name != "AWSTraceHeader" || a.DataType != "String" {
			return nil, errInvalidParameter.f("Message system attribute %s of type %s is not supported: only AWSTraceHeader, a String.", a.Name, a.DataType)
		}
		meta.Trace = a.StringValue
	}
	size := len(body) + awsattr.Size(attrs)
	if size > qi.maxSize {
		return nil, errInvalidParameter.f("One or more parameters are invalid. Reason: Message must be shorter than %d bytes.", qi.maxSize)
	}
	hs, aws, err := awsattr.Encode(attrs, meta)
	if err != nil {
		if ae, ok := err.(*awsattr.Error); ok {
			return nil, errInvalidParameter.f("%s", ae.Message)
		}
		return nil, err
	}
	o := &outgoing{rec: broker.ProduceRecord{Payload: []byte(body), Headers: hs, AWS: aws},
		md5: awsattr.MD5OfBody([]byte(body)), attrs: awsattr.MD5OfAttributes(attrs), sys: awsattr.MD5OfAttributes(sys), size: size}
	if err := e.readOrdering(p, queue, qi, o); err != nil {
		return nil, err
	}
	return o, nil
}

// readOrdering reads the group, deduplication and delay of a message.
func (e *Edge) readOrdering(p params, queue string, qi queueInfo, o *outgoing) error {
	group, err := p.str("MessageGroupId")
	if err != nil {
		return err
	}
	dedup, err := p.str("MessageDeduplicationId")
	if err != nil {
		return err
	}
	fifo := isFIFO(queue)
	if p.has("DelaySeconds") {
		if fifo {
			return errInvalidParameter.f("Value %v for parameter DelaySeconds is invalid. Reason: The request include parameter that is not valid for this queue type.", p["DelaySeconds"])
		}
		d, err := p.integer("DelaySeconds", 0, 0, 900)
		if err != nil {
			return err
		}
		delay := time.Duration(d) * time.Second
		o.rec.Delay = &delay
	}
	if !fifo {
		if dedup != "" {
			return errInvalidParameter.f("The request include parameter MessageDeduplicationId that is not valid for this queue type.")
		}
		if group != "" {
			o.rec.Key = []byte(group)
		}
		return nil
	}
	if group == "" {
		return errMissingParameter.f("The request must contain the parameter MessageGroupId.")
	}
	if len(group) > 128 || header.CheckMsgID(group) != nil {
		return errInvalidParameter.f("Value %s for parameter MessageGroupId is invalid. Reason: 1 to 128 characters of alphanumerics and punctuation.", group)
	}
	o.rec.Key = []byte(group)
	if dedup == "" {
		if !qi.contentDedup {
			return errInvalidParameter.f("The queue should either have ContentBasedDeduplication enabled or MessageDeduplicationId provided explicitly.")
		}
		sum := sha256.Sum256(o.rec.Payload)
		dedup = hex.EncodeToString(sum[:])
	}
	if header.CheckMsgID(dedup) != nil {
		return errInvalidParameter.f("Value %s for parameter MessageDeduplicationId is invalid. Reason: 1 to 128 characters of alphanumerics and punctuation.", dedup)
	}
	o.rec.MsgID, o.rec.HasMsgID = dedup, true
	return nil
}

// produce sends checked messages to queue in one /v1 batch produce and
// returns their Narad message ids.
func (e *Edge) produce(c *call, queue string, out []*outgoing, notFound errorKind) ([]string, error) {
	recs := make([]broker.ProduceRecord, len(out))
	for i, o := range out {
		recs[i] = o.rec
	}
	var acc []broker.Accepted
	cc := *c
	cc.ctx = httpapi.WithAccepted(c.ctx, &acc)
	a, err := e.v1Records(&cc, http.MethodPost, "/v1/topics/"+queue+"/produce/batch", nil, nil, recs)
	if err != nil {
		return nil, err
	}
	if !a.ok() {
		return nil, a.refusal(c.service, notFound)
	}
	if acc == nil {
		// Answered in JSON (a stand-in for the API, as the edge's
		// benchmarks use, does not know WithAccepted).
		var ans struct {
			IDs []*string `json:"ids"`
		}
		if err := a.decode(&ans); err != nil {
			return nil, err
		}
		for _, id := range ans.IDs {
			if id == nil {
				id = new(string)
			}
			acc = append(acc, broker.Accepted{ID: *id})
		}
	}
	if len(acc) != len(out) {
		return nil, errInternal.f("the produce accepted %d of %d records", len(acc), len(out))
	}
	ids := make([]string, len(out))
	for i, o := range out {
		ids[i] = messageID(queue, acc[i].ID, o.rec.MsgID)
	}
	return ids, nil
}

// sent is the answer for one message sent, id its MessageId.
func (o *outgoing) sent(id string) *sendResult {
	return &sendResult{messageID: id, md5Body: o.md5, md5Attrs: o.attrs, md5Sys: o.sys}
}

func (e *Edge) sendMessage(c *call) (map[string]any, error) {
	queue, err := e.queueOf(c)
	if err != nil {
		return nil, err
	}
	qi, err := e.queueInfo(c, queue)
	if err != nil {
		return nil, err
	}
	o, err := e.readMessage(c, c.p, queue, qi)
	if err != nil {
		return nil, err
	}
	ids, err := e.produce(c, queue, []*outgoing{o}, errQueueDoesNotExist)
	if err != nil {
		return nil, err
	}
	return o.sent(ids[0]).asMap(), nil
}

func (e *Edge) sendMessageBatch(c *call) (map[string]any, error) {
	queue, err := e.queueOf(c)
	if err != nil {
		return nil, err
	}
	entries, err := batchEntries(c.p)
	if err != nil {
		return nil, err
	}
	qi, err := e.queueInfo(c, queue)
	if err != nil {
		return nil, err
	}
	var (
		good   []*outgoing
		goodID []string
		failed []any
		total  int
	)
	for _, en := range entries {
		id, _ := en.str("Id")
		o, err := e.readMessage(c, en, queue, qi)
		if err != nil {
			failed = append(failed, failure(id, err))
			continue
		}
		total += o.size
		good = append(good, o)
		goodID = append(goodID, id)
	}
	if total > qi.maxSize {
		return nil, errBatchTooLong.f("Batch requests cannot be longer than %d bytes. You have sent %d bytes.", qi.maxSize, total)
	}
	out := map[string]any{}
	if len(good) > 0 {
		ids, err := e.produce(c, queue, good, errQueueDoesNotExist)
		if err != nil {
			return nil, err
		}
		ok := make([]any, len(good))
		for i, o := range good {
			r := o.sent(ids[i])
			r.entryID = goodID[i]
			ok[i] = r
		}
		out["Successful"] = ok
	} else {
		out["Successful"] = []any{}
	}
	out["Failed"] = failedList(failed)
	return out, nil
}

// batchEntries reads a batch's Entries: 1..10, each with an Id of 1..80
// [A-Za-z0-9_-], no Id twice.
func batchEntries(p params) ([]params, error) {
	entries, err := p.list("Entries")
	if err != nil {
		return nil, err
	}
	if len(entries) == 0 {
		return nil, errEmptyBatch.f("There should be at least one entry in the request.")
	}
	if len(entries) > 10 {
		return nil, errTooManyEntries.f("Maximum number of entries per request are 10. You have sent %d.", len(entries))
	}
	seen := map[string]bool{}
	for _, en := range entries {
		id, err := en.str("Id")
		if err != nil {
			return nil, err
		}
		if !validEntryID(id) {
			return nil, errInvalidBatchEntryID.f("A batch entry id can only contain alphanumeric characters, hyphens and underscores. It can be at most 80 letters long.")
		}
		if seen[id] {
			return nil, errIdsNotDistinct.f("Id %s repeated.", id)
		}
		seen[id] = true
	}
	return entries, nil
}

func validEntryID(id string) bool {
	if id == "" || len(id) > 80 {
		return false
	}
	for i := 0; i < len(id); i++ {
		c := id[i]
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '_' || c == '-') {
			return false
		}
	}
	return true
}

// failure is a batch entry's BatchResultErrorEntry.
func failure(id string, err error) map[string]any {
	ae, ok := err.(*Error)
	if !ok {
		ae = errInternal.f("%v", err)
	}
	return map[string]any{"Id": id, "Code": ae.queryCode(), "Message": ae.Message, "SenderFault": !ae.Receiver}
}

func failedList(f []any) []any {
	if f == nil {
		return []any{}
	}
	return f
}
