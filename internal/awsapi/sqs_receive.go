package awsapi

import (
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/narad-io/narad/internal/awsattr"
	"github.com/narad-io/narad/internal/broker"
	"github.com/narad-io/narad/internal/header"
	"github.com/narad-io/narad/internal/httpapi"
)

// Receiving: ReceiveMessage is a /v1 consume (a lease per message, its
// receipt handle the ReceiptHandle); DeleteMessage an ack;
// ChangeMessageVisibility an extend for the given time, 0 a nack.

// systemAttributes are the message system attributes ReceiveMessage may
// return.
var systemAttributes = []string{
	"ApproximateReceiveCount", "ApproximateFirstReceiveTimestamp", "SentTimestamp", "SenderId",
	"MessageGroupId", "MessageDeduplicationId", "SequenceNumber", "AWSTraceHeader",
	"DeadLetterQueueSourceArn",
}

// dlqTopicHeader names the topic a dead-lettered record came from
// (docs/concepts.md, "Dead letters").
const dlqTopicHeader = header.ReservedPrefix + "dlq-topic"

func (e *Edge) receiveMessage(c *call) (map[string]any, error) {
	queue, err := e.queueOf(c)
	if err != nil {
		return nil, err
	}
	max, err := c.p.integer("MaxNumberOfMessages", 1, 1, 10)
	if err != nil {
		return nil, err
	}
	qi, err := e.queueInfo(c, queue)
	if err != nil {
		return nil, err
	}
	waitS, err := c.p.integer("WaitTimeSeconds", qi.waitSeconds, 0, 20)
	if err != nil {
		return nil, err
	}
	visibility, err := c.p.integer("VisibilityTimeout", -1, 0, 43200)
	if err != nil && c.p.has("VisibilityTimeout") {
		return nil, err
	}
	sysNames, err := c.p.strings("AttributeNames")
	if err != nil {
		return nil, err
	}
	more, err := c.p.strings("MessageSystemAttributeNames")
	if err != nil {
		return nil, err
	}
	sysNames = append(sysNames, more...)
	attrNames, err := c.p.strings("MessageAttributeNames")
	if err != nil {
		return nil, err
	}
	msgs, err := e.consume(c, queue, int(max), time.Duration(waitS)*time.Second, visibility)
	if err != nil {
		return nil, err
	}
	if len(msgs) == 0 {
		return nil, nil
	}
	out := make([]any, 0, len(msgs))
	now := e.now()
	for i := range msgs {
		out = append(out, e.received(queue, &msgs[i], sysNames, attrNames, now))
	}
	return map[string]any{"Messages": out}, nil
}

// consume takes up to limit messages, long-polling up to wait: the /v1
// consume's wait may be capped below SQS's 20 s (http.max_consume_wait),
// so an empty answer before the deadline polls again. visibility, when
// not negative, is the leases' visibility timeout in seconds instead of
// the queue's; 0 (visible again at once) is Narad's shortest, 1 ms.
func (e *Edge) consume(c *call, queue string, limit int, wait time.Duration, visibility int64) ([]v1Message, error) {
	deadline := e.now().Add(wait)
	for {
		q := url.Values{"max": {strconv.Itoa(limit)}}
		if visibility >= 0 {
			q.Set("visibility", strconv.FormatInt(max(visibility*1000, 1), 10))
		}
		left := deadline.Sub(e.now())
		if left > 0 {
			q.Set("wait", strconv.FormatInt(left.Milliseconds(), 10))
		}
		var served []broker.Message
		cc := *c
		cc.ctx = httpapi.WithMessages(c.ctx, &served)
		a, err := e.v1(&cc, http.MethodGet, "/v1/topics/"+queue+"/consume", q, nil)
		if err != nil {
			return nil, err
		}
		if a.status == http.StatusOK && served != nil {
			out := make([]v1Message, len(served))
			for i, m := range served {
				out[i] = fromBroker(m)
			}
			return out, nil
		}
		if a.status == http.StatusOK {
			var ans struct {
				Messages []v1Message `json:"messages"`
			}
			if err := a.decode(&ans); err != nil {
				return nil, err
			}
			return ans.Messages, nil
		}
		if a.status != http.StatusNoContent {
			return nil, a.refusal(c.service, errQueueDoesNotExist)
		}
		if c.ctx.Err() != nil || e.now().Add(50*time.Millisecond).After(deadline) {
			return nil, nil
		}
	}
}

// received is one message of a ReceiveMessage answer.
func (e *Edge) received(queue string, m *v1Message, sysNames, attrNames []string, now time.Time) *receivedMessage {
	raw := m.body()
	if !utf8.Valid(raw) {
		raw = []byte(strings.ToValidUTF8(string(raw), "\uFFFD"))
	}
	hs := m.headerList()
	producerID, _ := header.Get(hs, header.MsgID)
	r := &receivedMessage{
		messageID:     messageID(queue, m.ID, producerID),
		receiptHandle: m.ReceiptHandle,
		body:          raw,
		md5Body:       awsattr.MD5OfBody(raw),
	}
	if len(attrNames) == 0 && len(sysNames) == 0 {
		return r // the attributes' headers need no reading
	}
	attrs, meta := awsattr.Decode(hs)
	if sel := selectAttributes(attrs, attrNames); len(sel) > 0 {
		r.attrs = attributeValues(sel)
		r.md5Attrs = awsattr.MD5OfAttributes(sel)
	}
	if sys := e.systemValues(queue, m, meta, producerID, sysNames, now); len(sys) > 0 {
		r.sys = sys
	}
	return r
}

// systemValues are the system attributes names asks for.
func (e *Edge) systemValues(queue string, m *v1Message, meta awsattr.Meta, producerID string, names []string, now time.Time) map[string]string {
	want := map[string]bool{}
	for _, n := range names {
		if n == "All" {
			for _, s := range systemAttributes {
				want[s] = true
			}
		}
		want[n] = true
	}
	if len(want) == 0 {
		return nil
	}
	sent := m.TimestampMs // the commit time: within milliseconds of the send
	sender := meta.Sender
	if sender == "" {
		sender = e.account
	}
	first := sent
	if m.DeliveryCount <= 1 {
		first = now.UnixMilli()
	}
	all := map[string]string{
		"ApproximateReceiveCount":          strconv.Itoa(max(m.DeliveryCount, 1)),
		"SentTimestamp":                    strconv.FormatInt(sent, 10),
		"ApproximateFirstReceiveTimestamp": strconv.FormatInt(first, 10),
		"SenderId":                         sender,
	}
	if k := m.key(); k != "" {
		all["MessageGroupId"] = k
	}
	if isFIFO(queue) {
		all["SequenceNumber"] = sequenceNumber(m.Partition, m.Offset)
		if producerID != "" {
			all["MessageDeduplicationId"] = producerID
		}
	}
	if meta.Trace != "" {
		all["AWSTraceHeader"] = meta.Trace
	}
	if src, ok := header.Get(m.headerList(), dlqTopicHeader); ok {
		all["DeadLetterQueueSourceArn"] = e.arn(serviceSQS, src)
	}
	out := map[string]string{}
	for n := range want {
		if v, ok := all[n]; ok {
			out[n] = v
		}
	}
	return out
}

// ack settles, extends or releases one receipt handle; extend "" acks.
func (e *Edge) ack(c *call, queue, handle, extend string) (answer, error) {
	q := url.Values{"receipt_handle": {handle}}
	if extend != "" {
		q.Set("extend", extend)
	}
	return e.v1(c, http.MethodPost, "/v1/topics/"+queue+"/ack", q, nil)
}

// setVisibility makes a received message visible again seconds from now
// (0: at once).
func (e *Edge) setVisibility(c *call, queue, handle string, seconds int64) error {
	extend := "0" // /v1's nack
	if seconds > 0 {
		extend = strconv.FormatInt(seconds, 10) + "s"
	}
	a, err := e.ack(c, queue, handle, extend)
	if err != nil {
		return err
	}
	switch {
	case a.ok():
		return nil
	case a.status == http.StatusGone || a.status == http.StatusConflict:
		return errMessageNotInflight.f("The message referred to isn't in flight.")
	case a.status == http.StatusBadRequest:
		return errReceiptHandleInvalid.f("The input receipt handle %q is not a valid receipt handle: %s", handle, a.message())
	}
	return a.refusal(c.service, errQueueDoesNotExist)
}

// deleted reads an ack's answer as DeleteMessage does. A handle whose
// lease lapsed (410) deletes nothing, and the delete succeeds, as SQS
// documents for a stale handle: the message may be received again.
func deleted(c *call, handle string, a answer) error {
	switch {
	case a.ok() || a.status == http.StatusGone:
		return nil
	case a.status == http.StatusBadRequest:
		return errReceiptHandleInvalid.f("The input receipt handle %q is not a valid receipt handle: %s", handle, a.message())
	}
	return a.refusal(c.service, errQueueDoesNotExist)
}

func (e *Edge) deleteMessage(c *call) (map[string]any, error) {
	queue, err := e.queueOf(c)
	if err != nil {
		return nil, err
	}
	handle, err := c.p.required("ReceiptHandle")
	if err != nil {
		return nil, err
	}
	a, err := e.ack(c, queue, handle, "")
	if err != nil {
		return nil, err
	}
	return nil, deleted(c, handle, a)
}

func (e *Edge) deleteMessageBatch(c *call) (map[string]any, error) {
	queue, err := e.queueOf(c)
	if err != nil {
		return nil, err
	}
	entries, err := batchEntries(c.p)
	if err != nil {
		return nil, err
	}
	ids := make([]string, 0, len(entries))
	handles := make([]string, 0, len(entries))
	var failed []any
	for _, en := range entries {
		id, _ := en.str("Id")
		h, err := en.required("ReceiptHandle")
		if err != nil {
			failed = append(failed, failure(id, err))
			continue
		}
		ids = append(ids, id)
		handles = append(handles, h)
	}
	ok := []any{}
	if len(handles) > 0 {
		var res []httpapi.AckResult
		cc := *c
		cc.ctx = httpapi.WithAcks(c.ctx, handles, &res)
		a, err := e.v1(&cc, http.MethodPost, "/v1/topics/"+queue+"/ack", nil, nil)
		if err != nil {
			return nil, err
		}
		if !a.ok() {
			return nil, a.refusal(c.service, errQueueDoesNotExist)
		}
		if len(res) != len(handles) {
			return nil, errInternal.f("the ack answered %d results for %d receipt handles", len(res), len(handles))
		}
		for i, id := range ids {
			r := answer{status: res[i].Status, text: res[i].Error}
			if err := deleted(c, handles[i], r); err != nil {
				failed = append(failed, failure(id, err))
				continue
			}
			ok = append(ok, map[string]any{"Id": id})
		}
	}
	return map[string]any{"Successful": ok, "Failed": failedList(failed)}, nil
}

func (e *Edge) changeMessageVisibility(c *call) (map[string]any, error) {
	queue, err := e.queueOf(c)
	if err != nil {
		return nil, err
	}
	handle, err := c.p.required("ReceiptHandle")
	if err != nil {
		return nil, err
	}
	if !c.p.has("VisibilityTimeout") {
		return nil, errMissingParameter.f("The request must contain the parameter VisibilityTimeout.")
	}
	v, err := c.p.integer("VisibilityTimeout", 0, 0, 43200)
	if err != nil {
		return nil, err
	}
	return nil, e.setVisibility(c, queue, handle, v)
}

func (e *Edge) changeMessageVisibilityBatch(c *call) (map[string]any, error) {
	queue, err := e.queueOf(c)
	if err != nil {
		return nil, err
	}
	entries, err := batchEntries(c.p)
	if err != nil {
		return nil, err
	}
	ok := []any{}
	var failed []any
	for _, en := range entries {
		id, _ := en.str("Id")
		err := func() error {
			h, err := en.required("ReceiptHandle")
			if err != nil {
				return err
			}
			v, err := en.integer("VisibilityTimeout", 0, 0, 43200)
			if err != nil {
				return err
			}
			return e.setVisibility(c, queue, h, v)
		}()
		if err != nil {
			if ae, isAWS := err.(*Error); isAWS && ae.Receiver {
				return nil, err
			}
			failed = append(failed, failure(id, err))
			continue
		}
		ok = append(ok, map[string]any{"Id": id})
	}
	return map[string]any{"Successful": ok, "Failed": failedList(failed)}, nil
}
