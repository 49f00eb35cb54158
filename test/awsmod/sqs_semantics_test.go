package awsmod

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/aws/aws-sdk-go-v2/service/sqs/types"
)

// FIFO: one group's messages come in the order sent, across receives;
// a MessageDeduplicationId sent twice is one message, both sends
// answered with its MessageId; a send without MessageGroupId is refused.
func TestSQSFIFOOrderAndDedupe(t *testing.T) {
	_, c, ctx := sqsTest(t)
	q := newQueue(t, c, "sem-order.fifo", map[string]string{"FifoQueue": "true", "VisibilityTimeout": "30"})
	const total = 35
	for i := 0; i < total; {
		// Single sends and batches, interleaved.
		if i%2 == 0 {
			if _, err := c.SendMessage(ctx, &sqs.SendMessageInput{QueueUrl: aws.String(q), MessageBody: aws.String(fmt.Sprint(i)),
				MessageGroupId: aws.String("g"), MessageDeduplicationId: aws.String(fmt.Sprint("d", i))}); err != nil {
				t.Fatal(err)
			}
			i++
			continue
		}
		var es []types.SendMessageBatchRequestEntry
		for ; len(es) < 4 && i < total; i++ {
			es = append(es, types.SendMessageBatchRequestEntry{Id: aws.String(fmt.Sprint("e", i)), MessageBody: aws.String(fmt.Sprint(i)),
				MessageGroupId: aws.String("g"), MessageDeduplicationId: aws.String(fmt.Sprint("d", i))})
		}
		out, err := c.SendMessageBatch(ctx, &sqs.SendMessageBatchInput{QueueUrl: aws.String(q), Entries: es})
		if err != nil || len(out.Failed) > 0 {
			t.Fatalf("SendMessageBatch: %v %+v", err, out)
		}
	}
	next := 0
	var lastSeq string
	deadline := time.Now().Add(20 * time.Second)
	for next < total {
		if time.Now().After(deadline) {
			t.Fatalf("received %d of %d in 20s", next, total)
		}
		for _, m := range receive(t, c, q, 10, 2) {
			if *m.Body != fmt.Sprint(next) {
				t.Fatalf("received %q, want %d (FIFO order within a group)", *m.Body, next)
			}
			if m.Attributes["MessageGroupId"] != "g" || m.Attributes["MessageDeduplicationId"] != fmt.Sprint("d", next) {
				t.Fatalf("system attributes of %d: %v", next, m.Attributes)
			}
			seq := m.Attributes["SequenceNumber"]
			if len(seq) != len(lastSeq) && lastSeq != "" || seq <= lastSeq {
				t.Fatalf("SequenceNumber %s after %s", seq, lastSeq)
			}
			lastSeq = seq
			deleteMsg(t, c, q, m)
			next++
		}
	}

	// Dedupe: the same MessageDeduplicationId twice.
	dq := newQueue(t, c, "sem-dedupe.fifo", map[string]string{"FifoQueue": "true"})
	var ids []string
	for _, body := range []string{"first", "second"} {
		out, err := c.SendMessage(ctx, &sqs.SendMessageInput{QueueUrl: aws.String(dq), MessageBody: aws.String(body),
			MessageGroupId: aws.String("g"), MessageDeduplicationId: aws.String("same")})
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, *out.MessageId)
	}
	if ids[0] != ids[1] {
		t.Fatalf("a deduplicated send answered MessageId %s, the first %s", ids[1], ids[0])
	}
	got := receiveN(t, c, dq, 1)
	if *got[0].Body != "first" || *got[0].MessageId != ids[0] {
		t.Fatalf("received %q %s", *got[0].Body, *got[0].MessageId)
	}
	deleteMsg(t, c, dq, got[0])
	if more := receive(t, c, dq, 10, 1); len(more) != 0 {
		t.Fatalf("a duplicate was delivered: %q", *more[0].Body)
	}

	// No MessageGroupId on a FIFO queue.
	_, err := c.SendMessage(ctx, &sqs.SendMessageInput{QueueUrl: aws.String(dq), MessageBody: aws.String("x"), MessageDeduplicationId: aws.String("x")})
	wantCode(t, "a FIFO send without MessageGroupId", err, "MissingParameter")
	// No MessageDeduplicationId, no ContentBasedDeduplication.
	_, err = c.SendMessage(ctx, &sqs.SendMessageInput{QueueUrl: aws.String(dq), MessageBody: aws.String("x"), MessageGroupId: aws.String("g")})
	wantCode(t, "a FIFO send without a deduplication id", err, "InvalidParameterValue")
	waitCounts(t, c, dq, counts{})
}

// A receive with WaitTimeSeconds=20 returns as soon as a message comes.
func TestSQSLongPollReturnsEarly(t *testing.T) {
	_, c, ctx := sqsTest(t)
	q := newQueue(t, c, "sem-longpoll", nil)
	sent := make(chan error, 1)
	go func() {
		time.Sleep(time.Second)
		_, err := c.SendMessage(ctx, &sqs.SendMessageInput{QueueUrl: aws.String(q), MessageBody: aws.String("wake")})
		sent <- err
	}()
	start := time.Now()
	out, err := c.ReceiveMessage(ctx, &sqs.ReceiveMessageInput{QueueUrl: aws.String(q), WaitTimeSeconds: 20})
	elapsed := time.Since(start)
	if err != nil {
		t.Fatal(err)
	}
	if err := <-sent; err != nil {
		t.Fatal(err)
	}
	if len(out.Messages) != 1 || *out.Messages[0].Body != "wake" {
		t.Fatalf("long poll answered %+v", out.Messages)
	}
	if elapsed >= 10*time.Second {
		t.Fatalf("a long poll took %v to return a message sent after 1 s", elapsed)
	}
}

// A message received and not deleted comes back once its visibility
// timeout (1 s) ends, with ApproximateReceiveCount 2.
func TestSQSVisibilityExpiry(t *testing.T) {
	t.Parallel()
	_, c := sharedSQS(t)
	q := newQueue(t, c, "sem-visibility", map[string]string{"VisibilityTimeout": "1"})
	sent := send(t, c, q, "again")
	first := receiveN(t, c, q, 1)
	if first[0].Attributes["ApproximateReceiveCount"] != "1" {
		t.Fatalf("first receive: %v", first[0].Attributes)
	}
	second := receive(t, c, q, 1, 10)
	if len(second) != 1 {
		t.Fatalf("the message did not come back within 10 s of a 1 s visibility timeout")
	}
	m := second[0]
	if *m.MessageId != *sent.MessageId || m.Attributes["ApproximateReceiveCount"] != "2" || *m.ReceiptHandle == *first[0].ReceiptHandle {
		t.Fatalf("second receive: id %s (sent %s), count %s, handle %s", *m.MessageId, *sent.MessageId,
			m.Attributes["ApproximateReceiveCount"], *m.ReceiptHandle)
	}
	// SQS answers the first receive's time again; Narad keeps no such
	// time and answers one between the send and the first receive.
	if f, s := m.Attributes["ApproximateFirstReceiveTimestamp"], m.Attributes["SentTimestamp"]; len(f) != len(s) || f < s ||
		f > first[0].Attributes["ApproximateFirstReceiveTimestamp"] {
		t.Errorf("ApproximateFirstReceiveTimestamp %s: sent %s, first received %s", f, s, first[0].Attributes["ApproximateFirstReceiveTimestamp"])
	}
	deleteMsg(t, c, q, m)
}

// RedrivePolicy maxReceiveCount 2: after two receives without a delete
// the message is in the dead-letter queue; StartMessageMoveTask brings
// it back.
func TestSQSRedrive(t *testing.T) {
	_, c, ctx := sqsTest(t)
	dlq := newQueue(t, c, "sem-redrive-dlq", nil)
	dlqArn := queueAttrs(t, c, dlq)["QueueArn"]
	q := newQueue(t, c, "sem-redrive", map[string]string{"VisibilityTimeout": "1",
		"RedrivePolicy": `{"deadLetterTargetArn":"` + dlqArn + `","maxReceiveCount":2}`})
	sent := send(t, c, q, "poison")
	receiveN(t, c, q, 1)
	if again := receive(t, c, q, 1, 10); len(again) != 1 || again[0].Attributes["ApproximateReceiveCount"] != "2" {
		t.Fatalf("second receive: %+v", again)
	}
	dead := receive(t, c, dlq, 1, 10)
	if len(dead) != 1 || *dead[0].Body != "poison" {
		t.Fatalf("the dead-letter queue has %+v", dead)
	}
	if *dead[0].MessageId == *sent.MessageId {
		// SQS keeps the MessageId; a Narad dead-letter copy is a record
		// of its own (docs/aws.md, "What differs"): this pins the
		// difference, so a change to it is seen and documented.
		t.Fatalf("the dead-letter copy has its source's MessageId %s", *sent.MessageId)
	}
	if src, want := dead[0].Attributes["DeadLetterQueueSourceArn"], queueAttrs(t, c, q)["QueueArn"]; src != want {
		t.Fatalf("DeadLetterQueueSourceArn = %q, want %q", src, want)
	}
	if _, err := c.ChangeMessageVisibility(ctx, &sqs.ChangeMessageVisibilityInput{QueueUrl: aws.String(dlq),
		ReceiptHandle: dead[0].ReceiptHandle, VisibilityTimeout: 0}); err != nil {
		t.Fatal(err)
	}
	waitCounts(t, c, q, counts{})
	if _, err := c.StartMessageMoveTask(ctx, &sqs.StartMessageMoveTaskInput{SourceArn: aws.String(dlqArn)}); err != nil {
		t.Fatal(err)
	}
	back := receive(t, c, q, 1, 10)
	if len(back) != 1 || *back[0].Body != "poison" {
		t.Fatalf("after the move task, the source queue has %+v", back)
	}
	deleteMsg(t, c, q, back[0])
	waitCounts(t, c, dlq, counts{})
}

// A message sent with DelaySeconds 2 is not received at once, and is by
// a receive that waits.
func TestSQSMessageDelay(t *testing.T) {
	_, c, ctx := sqsTest(t)
	q := newQueue(t, c, "sem-delay", nil)
	start := time.Now()
	if _, err := c.SendMessage(ctx, &sqs.SendMessageInput{QueueUrl: aws.String(q), MessageBody: aws.String("later"), DelaySeconds: 2}); err != nil {
		t.Fatal(err)
	}
	if got := receive(t, c, q, 1, 0); len(got) != 0 {
		t.Fatalf("a message delayed 2 s was received at once")
	}
	got := receive(t, c, q, 1, 10)
	if len(got) != 1 || *got[0].Body != "later" {
		t.Fatalf("a message delayed 2 s: %+v within a 10 s wait", got)
	}
	if e := time.Since(start); e < 1500*time.Millisecond {
		t.Fatalf("a message delayed 2 s received after %v", e)
	}
}

// One data set, two protocols: a message sent through SQS is consumed
// through /v1, and a record produced through /v1 is received through SQS.
func TestSQSAndV1(t *testing.T) {
	n, c, ctx := sqsTest(t)
	q := newQueue(t, c, "sem-both", nil)
	if _, err := c.SendMessage(ctx, &sqs.SendMessageInput{QueueUrl: aws.String(q), MessageBody: aws.String("through sqs"),
		MessageAttributes: map[string]types.MessageAttributeValue{
			"Store": {DataType: aws.String("String"), StringValue: aws.String("north")},
			"Count": {DataType: aws.String("Number"), StringValue: aws.String("7")},
		}}); err != nil {
		t.Fatal(err)
	}
	resp, err := http.Get(n.url() + "/v1/topics/sem-both/consume?wait=5s")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("/v1 consume: %d %s", resp.StatusCode, body)
	}
	var m struct {
		Payload       json.RawMessage   `json:"payload"`
		Encoding      string            `json:"payload_encoding"`
		ReceiptHandle string            `json:"receipt_handle"`
		Headers       map[string]string `json:"headers"`
	}
	if err := json.Unmarshal(body, &m); err != nil {
		t.Fatal(err)
	}
	if string(m.Payload) != `"through sqs"` || m.Headers["store"] != "north" || m.Headers["count"] != "7" {
		t.Fatalf("/v1 consume of an SQS message: %s", body)
	}
	ack, err := http.Post(n.url()+"/v1/topics/sem-both/ack?receipt_handle="+m.ReceiptHandle, "", nil)
	if err != nil {
		t.Fatal(err)
	}
	ack.Body.Close()
	if ack.StatusCode != http.StatusNoContent {
		t.Fatalf("/v1 ack: %d", ack.StatusCode)
	}

	req, _ := http.NewRequest(http.MethodPost, n.url()+"/v1/topics/sem-both/produce", strings.NewReader("through v1"))
	req.Header.Set("Narad-Header-Source", "web")
	presp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	pb, _ := io.ReadAll(presp.Body)
	presp.Body.Close()
	if presp.StatusCode != http.StatusAccepted {
		t.Fatalf("/v1 produce: %d %s", presp.StatusCode, pb)
	}
	got := receiveN(t, c, q, 1)
	a := got[0].MessageAttributes["source"]
	if *got[0].Body != "through v1" || a.DataType == nil || *a.DataType != "String" || *a.StringValue != "web" {
		t.Fatalf("SQS receive of a /v1 record: body %q attributes %+v", *got[0].Body, got[0].MessageAttributes)
	}
	deleteMsg(t, c, q, got[0])
}
