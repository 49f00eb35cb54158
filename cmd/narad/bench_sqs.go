package main

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/narad-io/narad/client"
	"github.com/narad-io/narad/internal/jsonenc"
)

// sqsData is the bench's data calls through Amazon SQS's JSON protocol,
// which every node speaks (docs/aws.md): SendMessage(Batch),
// ReceiveMessage and DeleteMessage(Batch), signed with SigV4. It is
// written by hand, lean, because an SDK spends about three times the
// CPU of Narad's Go client per message: on a small machine the bench
// would measure the SDK, not the node. So it builds request bodies with
// appends, decodes only the fields it uses, and does not check
// MD5OfBody.
type sqsData struct {
	hc       *http.Client
	endpoint string // the node's base URL: SQS's JSON protocol is served at its root
	host     string // signed: the Host header the request carries
	path     string // signed: the endpoint's path
	sign     *sigv4
	delay    int64 // --delay in seconds (DelaySeconds), 0 none
	// queues maps a topic to its queue URL. open fills it before the
	// phases start; afterwards it is only read.
	queues map[string]string
}

const sqsContentType = "application/x-amz-json-1.0"

// sqsMaxBatch is SQS's most entries in a batch and messages in a
// receive; sqsMaxDelay its longest DelaySeconds.
const (
	sqsMaxBatch = 10
	sqsMaxDelay = 15 * time.Minute
)

// resolveSQS checks the flags that --api sqs cannot carry: what SQS's
// requests have no field for is refused, not silently dropped.
func (f *benchFlags) resolveSQS(changed func(string) bool, bad func(string, ...any)) {
	if f.api != "sqs" {
		for _, name := range []string{"access-key-id", "secret-access-key", "region"} {
			if changed(name) {
				bad("--%s signs SQS requests: give --api sqs too", name)
			}
		}
		return
	}
	if !changed("consume-max") {
		f.consumeMax = sqsMaxBatch // a receive takes at most 10
	}
	if f.batch > sqsMaxBatch {
		bad("--batch %d with --api sqs: SendMessageBatch takes at most %d messages", f.batch, sqsMaxBatch)
	} else if f.batch > 1 && f.batch*f.size > benchMaxPayload {
		bad("--batch %d of --size %d with --api sqs: SendMessageBatch takes at most %s in all (a queue's MaximumMessageSize)",
			f.batch, f.size, formatBytes(benchMaxPayload))
	}
	if f.consumeMax > sqsMaxBatch {
		bad("--consume-max %d with --api sqs: ReceiveMessage takes at most %d messages", f.consumeMax, sqsMaxBatch)
	}
	if changed("batch-format") && f.format != "json" {
		bad("--batch-format %s: --api sqs speaks SQS's JSON protocol only", f.format)
	}
	if f.keys > 0 {
		bad("--keys: --api sqs sends no keys (a standard queue's message has none)")
	}
	if f.ordering == "group" {
		bad("--ordering group makes a FIFO queue, which needs a MessageGroupId on every message: --api sqs sends none")
	}
	if f.viaChild {
		bad("--via-child: --api sqs measures the queue's own protocol; measure the child's copy with --api native")
	}
	if f.delay > sqsMaxDelay {
		bad("--delay %s with --api sqs: DelaySeconds is at most 15m", f.delay)
	} else if f.delay%time.Second != 0 {
		bad("--delay %s with --api sqs: DelaySeconds is whole seconds", f.delay)
	}
}

// sqsData builds the SQS client for the resolved target: the node's
// address and --ca-file as the /v1 client has them, keys and region from
// the flags or the environment, and a connection kept for each worker.
func (a *app) sqsData(f benchFlags) (*sqsData, error) {
	t, err := a.resolveTarget()
	if err != nil {
		return nil, err
	}
	hc, err := a.httpClient()
	if err != nil {
		return nil, err
	}
	if tr, ok := hc.Transport.(*http.Transport); ok {
		workers := f.producers + f.consumers
		tr.MaxIdleConnsPerHost = max(tr.MaxIdleConnsPerHost, workers)
		tr.MaxIdleConns = max(tr.MaxIdleConns, workers)
	}
	id, secret := first(f.accessKeyID, a.env("AWS_ACCESS_KEY_ID")), first(f.secretAccessKey, a.env("AWS_SECRET_ACCESS_KEY"))
	switch {
	case id == "" && secret == "":
		// A node with security off takes any well-formed signature.
		id, secret = "narad", "narad"
	case id == "" || secret == "":
		return nil, errors.New("--api sqs: give both an access key id and its secret (--access-key-id and --secret-access-key, or AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY), or neither for a node with security off")
	}
	region := first(f.region, a.env("AWS_REGION"), "us-east-1")
	return newSQSData(t.server, hc, id, secret, region, f.delay)
}

func newSQSData(server string, hc *http.Client, keyID, secret, region string, delay time.Duration) (*sqsData, error) {
	if !strings.Contains(server, "://") {
		server = "http://" + server // a bare host:port, as the /v1 client takes it
	}
	u, err := url.Parse(strings.TrimRight(server, "/") + "/")
	if err != nil {
		return nil, fmt.Errorf("server %q: %w", server, err)
	}
	return &sqsData{
		hc: hc, endpoint: u.String(), host: u.Host, path: u.EscapedPath(),
		sign:   &sigv4{keyID: keyID, secret: secret, region: region, service: "sqs"},
		delay:  int64(delay / time.Second),
		queues: map[string]string{},
	}, nil
}

// open learns topic's queue URL, once, before anything is measured.
func (s *sqsData) open(ctx context.Context, topic string) error {
	if _, ok := s.queues[topic]; ok {
		return nil
	}
	var out struct{ QueueUrl string }
	body := append(jsonenc.AppendString([]byte(`{"QueueName":`), topic), '}')
	if err := s.call(ctx, "GetQueueUrl", body, &out); err != nil {
		return fmt.Errorf("the queue URL of %s: %w", topic, err)
	}
	if out.QueueUrl == "" {
		return fmt.Errorf("the queue URL of %s: GetQueueUrl answered none", topic)
	}
	s.queues[topic] = out.QueueUrl
	return nil
}

func (s *sqsData) produce(ctx context.Context, topic string, payload []byte, _ client.ProduceOptions) error {
	b := make([]byte, 0, 96+len(s.queues[topic])+len(payload))
	b = s.appendQueue(b, topic)
	b = append(b, `,"MessageBody":`...)
	b = jsonenc.AppendString(b, payload)
	b = s.appendDelay(b)
	return s.call(ctx, "SendMessage", append(b, '}'), nil)
}

func (s *sqsData) produceBatch(ctx context.Context, topic string, records []client.BatchRecord) (int, error) {
	b := make([]byte, 0, 128+len(records)*(64+len(records[0].Payload)))
	b = s.appendQueue(b, topic)
	b = append(b, `,"Entries":[`...)
	for i, r := range records {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, `{"Id":"`...)
		b = strconv.AppendInt(b, int64(i), 10)
		b = append(b, `","MessageBody":`...)
		var err error
		if b, err = appendRecordBody(b, r); err != nil {
			return 0, err
		}
		b = append(s.appendDelay(b), '}')
	}
	b = append(b, "]}"...)
	var out sqsBatchResult
	if err := s.call(ctx, "SendMessageBatch", b, &out); err != nil {
		return 0, err
	}
	if len(out.Failed) > 0 {
		return len(out.Successful), fmt.Errorf("SendMessageBatch: %d of %d messages failed, the first: %w",
			len(out.Failed), len(records), out.Failed[0].err())
	}
	return len(out.Successful), nil
}

// appendRecordBody appends r's payload as a MessageBody: a batch record
// holds text as a JSON string already, other JSON as itself, and bytes
// that are neither in base64.
func appendRecordBody(b []byte, r client.BatchRecord) ([]byte, error) {
	switch {
	case len(r.Payload) > 0 && r.Payload[0] == '"':
		return append(b, r.Payload...), nil
	case len(r.Payload) > 0:
		return jsonenc.AppendString(b, []byte(r.Payload)), nil
	}
	raw, err := base64.StdEncoding.DecodeString(r.PayloadBase64)
	if err != nil {
		return b, fmt.Errorf("a batch record's payload: %w", err)
	}
	return jsonenc.AppendString(b, raw), nil
}

func (s *sqsData) consume(ctx context.Context, topic string, max int) ([]client.Message, error) {
	b := s.appendQueue(make([]byte, 0, 128+len(s.queues[topic])), topic)
	b = append(b, `,"MaxNumberOfMessages":`...)
	b = strconv.AppendInt(b, int64(max), 10)
	b = append(b, `,"WaitTimeSeconds":1}`...)
	var out sqsReceived
	if err := s.call(ctx, "ReceiveMessage", b, &out); err != nil {
		return nil, err
	}
	msgs := make([]client.Message, len(out.Messages))
	for i, m := range out.Messages {
		msgs[i] = client.Message{Topic: topic, ID: m.MessageId, ReceiptHandle: m.ReceiptHandle,
			Payload: m.Body, PayloadEncoding: "text"}
	}
	return msgs, nil
}

// ack deletes the messages of handles: DeleteMessage for one,
// DeleteMessageBatch for more (consume-max keeps them at most 10). Like
// ackHandles, up to tries attempts, a handle whose answer was transient
// (a 503 while the partition's acked-ahead window is full, a throttle)
// is sent again; here that includes a whole request's transient failure,
// which the /v1 client retries on its own.
func (s *sqsData) ack(ctx context.Context, topic string, handles []string, tries int, fail func(string, error)) (failed, retried int) {
	pending := handles
	for try := 0; len(pending) > 0; try++ {
		last := try >= tries-1
		var again []string
		settle := func(h string, err error) {
			switch {
			case err == nil:
			case client.IsTransient(err) && !last && ctx.Err() == nil:
				again = append(again, h)
			default:
				fail(h, err)
				failed++
			}
		}
		if len(pending) == 1 {
			settle(pending[0], s.deleteOne(ctx, topic, pending[0]))
		} else {
			errs, err := s.deleteBatch(ctx, topic, pending)
			for i, h := range pending {
				if err != nil {
					settle(h, err)
				} else {
					settle(h, errs[i])
				}
			}
		}
		if len(again) == 0 {
			break
		}
		if client.Sleep(ctx, ackBackoff.Delay(try)) != nil { // cancelled: the caller is stopping anyway
			return failed + len(again), retried
		}
		retried += len(again)
		pending = again
	}
	return failed, retried
}

func (s *sqsData) deleteOne(ctx context.Context, topic, handle string) error {
	b := s.appendQueue(make([]byte, 0, 128+len(s.queues[topic])+len(handle)), topic)
	b = append(b, `,"ReceiptHandle":`...)
	b = append(jsonenc.AppendString(b, handle), '}')
	return s.call(ctx, "DeleteMessage", b, nil)
}

// deleteBatch deletes handles in one request; errs[i] is handles[i]'s
// own failure, nil when deleted.
func (s *sqsData) deleteBatch(ctx context.Context, topic string, handles []string) (errs []error, err error) {
	b := s.appendQueue(make([]byte, 0, 128+len(handles)*(48+len(handles[0]))), topic)
	b = append(b, `,"Entries":[`...)
	for i, h := range handles {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, `{"Id":"`...)
		b = strconv.AppendInt(b, int64(i), 10)
		b = append(b, `","ReceiptHandle":`...)
		b = append(jsonenc.AppendString(b, h), '}')
	}
	b = append(b, "]}"...)
	var out sqsBatchResult
	if err := s.call(ctx, "DeleteMessageBatch", b, &out); err != nil {
		return nil, err
	}
	errs = make([]error, len(handles))
	answered := make([]bool, len(handles))
	for _, ok := range out.Successful {
		if i, err := strconv.Atoi(ok.Id); err == nil && i >= 0 && i < len(handles) {
			answered[i] = true
		}
	}
	for _, f := range out.Failed {
		if i, err := strconv.Atoi(f.Id); err == nil && i >= 0 && i < len(handles) {
			answered[i], errs[i] = true, f.err()
		}
	}
	for i := range handles {
		if !answered[i] {
			errs[i] = errors.New("DeleteMessageBatch: the node did not answer for this handle")
		}
	}
	return errs, nil
}

func (s *sqsData) appendQueue(b []byte, topic string) []byte {
	return jsonenc.AppendString(append(b, `{"QueueUrl":`...), s.queues[topic])
}

func (s *sqsData) appendDelay(b []byte) []byte {
	if s.delay <= 0 {
		return b
	}
	return strconv.AppendInt(append(b, `,"DelaySeconds":`...), s.delay, 10)
}

// call sends one signed request of action and decodes a 200's answer
// into out (nil: the answer is read and dropped, so the connection is
// kept). An error answer is a *client.APIError, so the bench's handling
// of refusals and transient failures is the same for both protocols.
func (s *sqsData) call(ctx context.Context, action string, body []byte, out any) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, s.endpoint, bytes.NewReader(body))
	if err != nil {
		return err
	}
	amzDate := time.Now().UTC().Format("20060102T150405Z")
	target := "AmazonSQS." + action
	req.Header = http.Header{
		"Content-Type": {sqsContentType},
		"X-Amz-Target": {target},
		"X-Amz-Date":   {amzDate},
		"Authorization": {s.sign.authorization(http.MethodPost, s.path, []sigHeader{
			{"content-type", sqsContentType}, {"host", s.host}, {"x-amz-date", amzDate}, {"x-amz-target", target},
		}, body, amzDate)},
	}
	res, err := s.hc.Do(req)
	if err != nil {
		return fmt.Errorf("%s: %w", action, err)
	}
	defer res.Body.Close()
	data, err := readAnswer(res)
	if err != nil {
		return fmt.Errorf("%s: reading the answer: %w", action, err)
	}
	if res.StatusCode != http.StatusOK {
		return fmt.Errorf("%s: %w", action, sqsError(res, data))
	}
	switch out := out.(type) {
	case nil:
		return nil
	case *sqsReceived:
		if readReceived(data, out) {
			return nil
		}
	case *sqsBatchResult:
		if readBatchResult(data, out) {
			return nil
		}
	}
	if err := json.Unmarshal(data, out); err != nil {
		return fmt.Errorf("%s: the answer is not SQS's JSON: %w", action, err)
	}
	return nil
}

// readAnswer reads an answer's body whole: into one buffer of its
// declared length when it has one (io.ReadAll's growing copies were a
// tenth of the consume loop's CPU), else as io.ReadAll does.
func readAnswer(res *http.Response) ([]byte, error) {
	if n := res.ContentLength; n > 0 && n <= 16<<20 {
		b := make([]byte, n)
		_, err := io.ReadFull(res.Body, b)
		return b, err
	}
	return io.ReadAll(res.Body)
}

// sqsError turns an AWS JSON error answer, {"__type":
// "com.amazonaws.sqs#Code", "message": "..."}, into a *client.APIError
// with the answer's status. AWS answers a throttle with 400; it is 429
// here, so that the bench pauses and tries again as it does for /v1.
func sqsError(res *http.Response, data []byte) error {
	var e struct {
		Type     string `json:"__type"`
		Message  string `json:"message"`
		MessageU string `json:"Message"`
	}
	_ = json.Unmarshal(data, &e) // not JSON: the body itself is the message
	code := e.Type
	if i := strings.LastIndexByte(code, '#'); i >= 0 {
		code = code[i+1:]
	}
	if i := strings.IndexByte(code, ':'); i >= 0 {
		code = code[:i] // the older form: "Code:http://internal.amazon.com/..."
	}
	msg := first(e.Message, e.MessageU)
	if code == "" && msg == "" {
		code, msg = http.StatusText(res.StatusCode), strings.TrimSpace(string(data[:min(len(data), 200)]))
	}
	apiErr := &client.APIError{Status: sqsStatus(res.StatusCode, code), Message: code + ": " + msg}
	if secs, err := strconv.Atoi(res.Header.Get("Retry-After")); err == nil && secs > 0 {
		apiErr.RetryAfter = time.Duration(secs) * time.Second
	}
	return apiErr
}

func sqsStatus(status int, code string) int {
	switch code {
	case "RequestThrottled", "ThrottlingException", "Throttling":
		return http.StatusTooManyRequests
	}
	return status
}

// sqsEntryFailure is a batch answer's BatchResultErrorEntry.
type sqsEntryFailure struct {
	Id          string
	Code        string
	Message     string
	SenderFault bool
}

// err is the entry's failure as the whole request's would be: the
// sender's fault a refusal, the node's a transient 503 or 500.
func (f sqsEntryFailure) err() error {
	status := http.StatusBadRequest
	switch {
	case f.Code == "ServiceUnavailable":
		status = http.StatusServiceUnavailable
	case !f.SenderFault:
		status = http.StatusInternalServerError
	}
	return &client.APIError{Status: sqsStatus(status, f.Code), Message: f.Code + ": " + f.Message}
}
