package awsapi

import (
	"encoding/json"
	"unicode"
	"unicode/utf8"

	"github.com/narad-io/narad/internal/awsattr"
	"github.com/narad-io/narad/internal/broker"
)

// Publishing (docs/aws.md, "SNS"): Publish and PublishBatch produce into
// the SNS topic through the /v1 batch produce, as SendMessage does into
// a queue; the fan-out links then copy each record to the subscribed
// queues. The record carries the Subject and the signing user in the
// reserved header (awsattr.Meta); a link's envelope builds SNS's
// notification from it, its Timestamp the record's commit time.

// maxPublishSize is SNS's cap on a message and its attributes: 256 KiB,
// so that the envelope around it fits Narad's 1 MiB record.
const maxPublishSize = 256 << 10

// maxSubject is SNS's cap on a Subject, in characters.
const maxSubject = 100

// readPublish reads and checks one message to publish to topic (a
// Publish's parameters or a batch entry's).
func (e *Edge) readPublish(c *call, p params, topic string) (*outgoing, error) {
	if !p.has("Message") {
		return nil, errSNSInvalidParam.f("Invalid parameter: Message Reason: no value for required parameter")
	}
	msg, err := p.str("Message")
	if err != nil {
		return nil, err
	}
	size := len(msg)
	body, err := messageFor(p, msg)
	if err != nil {
		return nil, err
	}
	if body == "" {
		return nil, errSNSInvalidParam.f("Invalid parameter: Empty message")
	}
	if !awsattr.ValidText(body) {
		return nil, errSNSInvalidParam.f("Invalid parameter: Message Reason: the message holds characters an SQS message cannot: #x9 | #xA | #xD | #x20 to #xD7FF | #xE000 to #xFFFD | #x10000 to #x10FFFF.")
	}
	subject, err := readSubject(p)
	if err != nil {
		return nil, err
	}
	attrs, err := p.attributes("MessageAttributes")
	if err != nil {
		return nil, err
	}
	if err := checkStringArrays(attrs); err != nil {
		return nil, err
	}
	size += awsattr.Size(attrs)
	if size > maxPublishSize {
		return nil, errSNSInvalidParam.f("Invalid parameter: Message too long: the message and its attributes take %d bytes; SNS allows %d.", size, maxPublishSize)
	}
	meta := awsattr.Meta{Sender: c.principal.Name, Subject: subject}
	hs, aws, err := awsattr.Encode(attrs, meta)
	if err != nil {
		if ae, ok := err.(*awsattr.Error); ok {
			return nil, errSNSInvalidParam.f("%s", ae.Message)
		}
		return nil, err
	}
	o := &outgoing{rec: broker.ProduceRecord{Payload: []byte(body), Headers: hs, AWS: aws}, size: size}
	if err := e.readPublishOrdering(c, p, topic, o); err != nil {
		return nil, err
	}
	return o, nil
}

// messageFor is the message SQS subscriptions receive: Message, or with
// MessageStructure=json the object's "sqs" string, else its "default".
func messageFor(p params, msg string) (string, error) {
	structure, err := p.str("MessageStructure")
	if err != nil {
		return "", err
	}
	switch structure {
	case "":
		return msg, nil
	case "json":
	default:
		return "", errSNSInvalidParam.f("Invalid parameter: MessageStructure Reason: the only valid value is json, got %q.", structure)
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal([]byte(msg), &m); err != nil {
		return "", errSNSInvalidParam.f("Invalid parameter: Message Structure - JSON message body failed to parse")
	}
	var def string
	if raw, ok := m["default"]; !ok || json.Unmarshal(raw, &def) != nil {
		return "", errSNSInvalidParam.f("Invalid parameter: Message Structure - No default entry in JSON message body")
	}
	var sqs string
	if raw, ok := m["sqs"]; ok && json.Unmarshal(raw, &sqs) == nil {
		return sqs, nil
	}
	return def, nil
}

// readSubject reads a Subject: UTF-8 text without line breaks or control
// characters, 1 to 100 characters.
func readSubject(p params) (string, error) {
	if !p.has("Subject") {
		return "", nil
	}
	s, err := p.str("Subject")
	if err != nil {
		return "", err
	}
	if s == "" || !utf8.ValidString(s) || utf8.RuneCountInString(s) > maxSubject {
		return "", errSNSInvalidParam.f("Invalid parameter: Subject Reason: 1 to %d characters of UTF-8 text.", maxSubject)
	}
	for _, r := range s {
		if unicode.IsControl(r) {
			return "", errSNSInvalidParam.f("Invalid parameter: Subject Reason: a subject holds no line breaks or control characters.")
		}
	}
	return s, nil
}

// checkStringArrays checks SNS's String.Array attributes: the value is a
// JSON array of strings, numbers, booleans and nulls. Such a value is
// kept as its JSON text, which fan-out filters read element by element
// as SNS does (internal/filter).
func checkStringArrays(attrs []awsattr.Attribute) error {
	for _, a := range attrs {
		if a.DataType != "String.Array" {
			continue
		}
		var l []any
		if err := json.Unmarshal([]byte(a.StringValue), &l); err != nil {
			return errSNSInvalidParam.f("Invalid parameter: Message attribute '%s' of type String.Array must be a JSON array.", a.Name)
		}
		for _, v := range l {
			switch v.(type) {
			case map[string]any, []any:
				return errSNSInvalidParam.f("Invalid parameter: Message attribute '%s' of type String.Array may hold only strings, numbers, booleans and nulls.", a.Name)
			}
		}
	}
	return nil
}

// readPublishOrdering reads a message's group and deduplication id by
// SQS's rules, which are SNS's: a FIFO topic needs a group, and a
// deduplication id unless it deduplicates by content (a SHA-256 of the
// message); a standard topic takes a group (the record's key, as SQS's
// fair queues use it) but no deduplication id. SNS has no DelaySeconds.
func (e *Edge) readPublishOrdering(c *call, p params, topic string, o *outgoing) error {
	if p.has("DelaySeconds") {
		return errSNSInvalidParam.f("Invalid parameter: DelaySeconds Reason: SNS does not delay messages; set DelaySeconds on the queue.")
	}
	var qi queueInfo
	if isFIFO(topic) && !p.has("MessageDeduplicationId") {
		var err error
		if qi, err = e.queueInfo(c, topic); err != nil {
			return err
		}
	}
	return e.readOrdering(p, topic, qi, o)
}

// publishTarget reads Publish's topic: TopicArn or TargetArn (a topic's
// ARN too; Narad has no platform endpoints). SMS is not sent.
func (e *Edge) publishTarget(p params) (string, error) {
	if phone, err := p.str("PhoneNumber"); err != nil {
		return "", err
	} else if phone != "" {
		return "", errSNSInvalidParam.f("Invalid parameter: PhoneNumber Reason: Narad does not send SMS; publish to a topic.")
	}
	topicARN, err := p.str("TopicArn")
	if err != nil {
		return "", err
	}
	target, err := p.str("TargetArn")
	if err != nil {
		return "", err
	}
	switch {
	case topicARN != "" && target != "" && topicARN != target:
		return "", errSNSInvalidParam.f("Invalid parameter: TopicArn or TargetArn Reason: both given, naming different targets.")
	case topicARN != "":
		return e.topicOf(p, "TopicArn")
	case target != "":
		return e.topicOf(p, "TargetArn")
	}
	return "", errSNSInvalidParam.f("Invalid parameter: TopicArn or TargetArn Reason: no value for required parameter")
}

func (e *Edge) publish(c *call) (map[string]any, error) {
	topic, err := e.publishTarget(c.p)
	if err != nil {
		return nil, err
	}
	o, err := e.readPublish(c, c.p, topic)
	if err != nil {
		return nil, err
	}
	ids, err := e.produce(c, topic, []*outgoing{o}, errNotFound)
	if err != nil {
		return nil, err
	}
	return map[string]any{"MessageId": ids[0]}, nil
}

func (e *Edge) publishBatch(c *call) (map[string]any, error) {
	topic, err := e.topicOf(c.p, "TopicArn")
	if err != nil {
		return nil, err
	}
	// SQS's rules for a batch's entries are SNS's; snsError gives their
	// refusals SNS's codes.
	entries, err := batchEntries(params{"Entries": c.p["PublishBatchRequestEntries"]})
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
		o, err := e.readPublish(c, en, topic)
		if err != nil {
			if ae, ok := err.(*Error); ok && ae.Code == errQueueDoesNotExist.code {
				return nil, err // the topic, not the entry
			}
			failed = append(failed, failure(id, snsError(err)))
			continue
		}
		total += o.size
		good = append(good, o)
		goodID = append(goodID, id)
	}
	if total > maxPublishSize {
		return nil, errBatchTooLong.f("The length of all the batch messages put together is more than the limit: %d bytes, of at most %d.", total, maxPublishSize)
	}
	ok := make([]any, 0, len(good))
	if len(good) > 0 {
		ids, err := e.produce(c, topic, good, errNotFound)
		if err != nil {
			return nil, err
		}
		for i := range good {
			ok = append(ok, map[string]any{"Id": goodID[i], "MessageId": ids[i]})
		}
	}
	return map[string]any{"Successful": ok, "Failed": failedList(failed)}, nil
}
