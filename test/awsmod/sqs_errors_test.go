package awsmod

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/aws/aws-sdk-go-v2/service/sqs/types"
)

// Bad input: every error of internal/awsapi/errors.go a client can
// provoke, each as the SDK's typed error where there is one, and after
// each refusal the queue is as it was.

// An unknown action, by hand: 400 with __type and x-amzn-query-error;
// in the Query protocol, InvalidAction in XML. A missing parameter and
// a body that is not JSON, by hand too (the SDK would not send them).
func TestSQSErrorsRaw(t *testing.T) {
	t.Parallel()
	n, _ := sharedSQS(t)
	resp := rawJSON(t, n, "AmazonSQS.Nope", "{}")
	body, _ := io.ReadAll(resp.Body)
	var e struct {
		Type    string `json:"__type"`
		Message string `json:"message"`
	}
	if resp.StatusCode != http.StatusBadRequest || json.Unmarshal(body, &e) != nil || e.Type != "com.amazonaws.sqs#UnknownOperationException" ||
		resp.Header.Get("x-amzn-query-error") == "" || resp.Header.Get("x-amzn-RequestId") == "" {
		t.Fatalf("unknown action: %d %v %s", resp.StatusCode, resp.Header, body)
	}
	resp = rawJSON(t, n, "AmazonSQS.CreateQueue", "{}")
	body, _ = io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusBadRequest || !strings.Contains(string(body), "#MissingParameter") ||
		resp.Header.Get("x-amzn-query-error") != "MissingParameter;Sender" {
		t.Fatalf("CreateQueue without QueueName: %d %v %s", resp.StatusCode, resp.Header, body)
	}
	resp = rawJSON(t, n, "AmazonSQS.ListQueues", "[1,")
	body, _ = io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusBadRequest || !strings.Contains(string(body), `"__type"`) {
		t.Fatalf("a body that is not JSON: %d %s", resp.StatusCode, body)
	}
	qr, err := http.PostForm(n.url()+"/", url.Values{"Action": {"Nope"}, "Version": {"2012-11-05"}})
	if err != nil {
		t.Fatal(err)
	}
	body, _ = io.ReadAll(qr.Body)
	qr.Body.Close()
	if qr.StatusCode != http.StatusBadRequest || !strings.Contains(string(body), "<Code>InvalidAction</Code>") ||
		!strings.Contains(string(body), "<Type>Sender</Type>") {
		t.Fatalf("Query, unknown action: %d %s", qr.StatusCode, body)
	}
	// A form post to "/" is the Query protocol's, Action or not.
	qr, err = http.PostForm(n.url()+"/", url.Values{"QueueName": {"x"}})
	if err != nil {
		t.Fatal(err)
	}
	body, _ = io.ReadAll(qr.Body)
	qr.Body.Close()
	if qr.StatusCode != http.StatusBadRequest || !strings.Contains(string(body), "<Code>MissingParameter</Code>") {
		t.Fatalf("Query, no Action: %d %s", qr.StatusCode, body)
	}
}

func TestSQSErrorsParameters(t *testing.T) {
	_, c, ctx := sqsTest(t)
	q := newQueue(t, c, "err-params", map[string]string{"VisibilityTimeout": "60"})
	send(t, c, q, "one")
	waitCounts(t, c, q, counts{visible: 1})
	qu := aws.String(q)
	const bad = "InvalidParameterValue"
	_, err := c.ReceiveMessage(ctx, &sqs.ReceiveMessageInput{QueueUrl: qu, MaxNumberOfMessages: 11})
	wantCode(t, "MaxNumberOfMessages 11", err, bad)
	_, err = c.ReceiveMessage(ctx, &sqs.ReceiveMessageInput{QueueUrl: qu, WaitTimeSeconds: 21})
	wantCode(t, "WaitTimeSeconds 21", err, bad)
	_, err = c.ReceiveMessage(ctx, &sqs.ReceiveMessageInput{QueueUrl: qu, VisibilityTimeout: -1})
	wantCode(t, "ReceiveMessage VisibilityTimeout -1", err, bad)
	_, err = c.SendMessage(ctx, &sqs.SendMessageInput{QueueUrl: qu, MessageBody: aws.String("x"), DelaySeconds: 901})
	wantCode(t, "DelaySeconds 901", err, bad)
	_, err = c.SendMessage(ctx, &sqs.SendMessageInput{QueueUrl: qu, MessageBody: aws.String("")})
	wantCode(t, "an empty body", err, bad, "MissingParameter")
	_, err = c.SendMessage(ctx, &sqs.SendMessageInput{QueueUrl: qu, MessageBody: aws.String("bad \x00 \uffff")})
	wantTyped[*types.InvalidMessageContents](t, "a body with U+0000", err)
	_, err = c.SendMessage(ctx, &sqs.SendMessageInput{QueueUrl: qu, MessageBody: aws.String(strings.Repeat("x", 1<<20+1))})
	wantCode(t, "a body over 1 MiB", err, bad)
	_, err = c.SendMessage(ctx, &sqs.SendMessageInput{QueueUrl: qu, MessageBody: aws.String("x"),
		MessageAttributes: map[string]types.MessageAttributeValue{"a": {DataType: aws.String("Nope"), StringValue: aws.String("v")}}})
	wantCode(t, "an attribute of an unknown data type", err, bad)
	_, err = c.SendMessage(ctx, &sqs.SendMessageInput{QueueUrl: qu, MessageBody: aws.String("x"), MessageDeduplicationId: aws.String("d")})
	wantCode(t, "MessageDeduplicationId on a standard queue", err, bad)
	_, err = c.DeleteMessage(ctx, &sqs.DeleteMessageInput{QueueUrl: qu, ReceiptHandle: aws.String("")})
	wantCode(t, "an empty ReceiptHandle", err, "MissingParameter")
	_, err = c.CreateQueue(ctx, &sqs.CreateQueueInput{QueueName: aws.String("bad name!")})
	wantCode(t, "a queue name with a space", err, bad)
	_, err = c.CreateQueue(ctx, &sqs.CreateQueueInput{QueueName: aws.String(strings.Repeat("q", 81))})
	wantCode(t, "a queue name of 81", err, bad)
	waitCounts(t, c, q, counts{visible: 1})

	// A message in flight, then refusals about it.
	m := receiveN(t, c, q, 1)[0]
	_, err = c.ChangeMessageVisibility(ctx, &sqs.ChangeMessageVisibilityInput{QueueUrl: qu, ReceiptHandle: m.ReceiptHandle, VisibilityTimeout: -1})
	wantCode(t, "ChangeMessageVisibility -1", err, bad)
	_, err = c.ChangeMessageVisibility(ctx, &sqs.ChangeMessageVisibilityInput{QueueUrl: qu, ReceiptHandle: m.ReceiptHandle, VisibilityTimeout: 43201})
	wantCode(t, "ChangeMessageVisibility 43201", err, bad)
	for _, h := range []string{"garbage", "1:2", "99:0:1"} {
		_, err = c.ChangeMessageVisibility(ctx, &sqs.ChangeMessageVisibilityInput{QueueUrl: qu, ReceiptHandle: aws.String(h), VisibilityTimeout: 0})
		wantTyped[*types.ReceiptHandleIsInvalid](t, "ChangeMessageVisibility of handle "+h, err)
		_, err = c.DeleteMessage(ctx, &sqs.DeleteMessageInput{QueueUrl: qu, ReceiptHandle: aws.String(h)})
		wantTyped[*types.ReceiptHandleIsInvalid](t, "DeleteMessage of handle "+h, err)
	}
	waitCounts(t, c, q, counts{notVisible: 1})
}

func TestSQSErrorsBatches(t *testing.T) {
	_, c, ctx := sqsTest(t)
	q := newQueue(t, c, "err-batch", nil)
	qu := aws.String(q)
	entry := func(id string, size int) types.SendMessageBatchRequestEntry {
		return types.SendMessageBatchRequestEntry{Id: aws.String(id), MessageBody: aws.String(strings.Repeat("b", size))}
	}
	_, err := c.SendMessageBatch(ctx, &sqs.SendMessageBatchInput{QueueUrl: qu, Entries: []types.SendMessageBatchRequestEntry{}})
	wantTyped[*types.EmptyBatchRequest](t, "an empty SendMessageBatch", err)
	var eleven []types.SendMessageBatchRequestEntry
	for i := range 11 {
		eleven = append(eleven, entry(fmt.Sprint("e", i), 1))
	}
	_, err = c.SendMessageBatch(ctx, &sqs.SendMessageBatchInput{QueueUrl: qu, Entries: eleven})
	wantTyped[*types.TooManyEntriesInBatchRequest](t, "SendMessageBatch of 11", err)
	_, err = c.SendMessageBatch(ctx, &sqs.SendMessageBatchInput{QueueUrl: qu, Entries: []types.SendMessageBatchRequestEntry{entry("a", 1), entry("a", 1)}})
	wantTyped[*types.BatchEntryIdsNotDistinct](t, "SendMessageBatch with an Id twice", err)
	_, err = c.SendMessageBatch(ctx, &sqs.SendMessageBatchInput{QueueUrl: qu, Entries: []types.SendMessageBatchRequestEntry{entry("a.b", 1)}})
	wantTyped[*types.InvalidBatchEntryId](t, "SendMessageBatch with Id a.b", err)
	_, err = c.SendMessageBatch(ctx, &sqs.SendMessageBatchInput{QueueUrl: qu, Entries: []types.SendMessageBatchRequestEntry{entry(strings.Repeat("i", 81), 1)}})
	wantTyped[*types.InvalidBatchEntryId](t, "SendMessageBatch with an Id of 81", err)
	_, err = c.SendMessageBatch(ctx, &sqs.SendMessageBatchInput{QueueUrl: qu, Entries: []types.SendMessageBatchRequestEntry{
		entry("a", 600<<10), entry("b", 600<<10)}})
	wantTyped[*types.BatchRequestTooLong](t, "SendMessageBatch of 1.2 MiB", err)

	_, err = c.DeleteMessageBatch(ctx, &sqs.DeleteMessageBatchInput{QueueUrl: qu, Entries: []types.DeleteMessageBatchRequestEntry{}})
	wantTyped[*types.EmptyBatchRequest](t, "an empty DeleteMessageBatch", err)
	_, err = c.DeleteMessageBatch(ctx, &sqs.DeleteMessageBatchInput{QueueUrl: qu, Entries: []types.DeleteMessageBatchRequestEntry{
		{Id: aws.String("x"), ReceiptHandle: aws.String("1:0:1")}, {Id: aws.String("x"), ReceiptHandle: aws.String("1:0:2")}}})
	wantTyped[*types.BatchEntryIdsNotDistinct](t, "DeleteMessageBatch with an Id twice", err)
	var cmv []types.ChangeMessageVisibilityBatchRequestEntry
	for i := range 11 {
		cmv = append(cmv, types.ChangeMessageVisibilityBatchRequestEntry{Id: aws.String(fmt.Sprint(i)), ReceiptHandle: aws.String("1:0:1")})
	}
	_, err = c.ChangeMessageVisibilityBatch(ctx, &sqs.ChangeMessageVisibilityBatchInput{QueueUrl: qu, Entries: cmv})
	wantTyped[*types.TooManyEntriesInBatchRequest](t, "ChangeMessageVisibilityBatch of 11", err)
	_, err = c.ChangeMessageVisibilityBatch(ctx, &sqs.ChangeMessageVisibilityBatchInput{QueueUrl: qu,
		Entries: []types.ChangeMessageVisibilityBatchRequestEntry{{Id: aws.String("bad id"), ReceiptHandle: aws.String("1:0:1")}}})
	wantTyped[*types.InvalidBatchEntryId](t, "ChangeMessageVisibilityBatch with Id 'bad id'", err)

	// Nothing of any refused batch was stored.
	waitCounts(t, c, q, counts{})
	if got := receive(t, c, q, 10, 0); len(got) != 0 {
		t.Fatalf("a refused batch stored %d messages", len(got))
	}
}

func TestSQSErrorsAttributes(t *testing.T) {
	_, c, ctx := sqsTest(t)
	q := newQueue(t, c, "err-attrs", map[string]string{"VisibilityTimeout": "9"})
	qu := aws.String(q)
	before := queueAttrs(t, c, q)
	for _, tc := range []struct {
		attrs map[string]string
		typed bool // InvalidAttributeName, else InvalidAttributeValue
	}{
		{map[string]string{"VisibilityTimeout": "43201"}, false},
		{map[string]string{"VisibilityTimeout": "ten"}, false},
		{map[string]string{"DelaySeconds": "901"}, false},
		{map[string]string{"MessageRetentionPeriod": "59"}, false},
		{map[string]string{"MaximumMessageSize": "1023"}, false},
		{map[string]string{"ReceiveMessageWaitTimeSeconds": "21"}, false},
		{map[string]string{"RedrivePolicy": `{"deadLetterTargetArn":"arn:aws:sqs:us-east-1:000000000000:nope","maxReceiveCount":2}`}, false},
		{map[string]string{"RedrivePolicy": `{"deadLetterTargetArn":"x","maxReceiveCount":0}`}, false},
		{map[string]string{"Nope": "1"}, true},
		{map[string]string{"QueueArn": "arn:aws:sqs:us-east-1:000000000000:x"}, true},
		{map[string]string{"ContentBasedDeduplication": "true"}, true}, // FIFO only
		{map[string]string{"VisibilityTimeout": "10", "Nope": "1"}, true},
	} {
		_, err := c.SetQueueAttributes(ctx, &sqs.SetQueueAttributesInput{QueueUrl: qu, Attributes: tc.attrs})
		if tc.typed {
			wantTyped[*types.InvalidAttributeName](t, fmt.Sprint("SetQueueAttributes ", tc.attrs), err)
		} else {
			wantTyped[*types.InvalidAttributeValue](t, fmt.Sprint("SetQueueAttributes ", tc.attrs), err)
		}
	}
	_, err := c.CreateQueue(ctx, &sqs.CreateQueueInput{QueueName: aws.String("err-attrs-new"), Attributes: map[string]string{"DelaySeconds": "-1"}})
	wantTyped[*types.InvalidAttributeValue](t, "CreateQueue DelaySeconds -1", err)
	_, err = c.GetQueueUrl(ctx, &sqs.GetQueueUrlInput{QueueName: aws.String("err-attrs-new")})
	wantTyped[*types.QueueDoesNotExist](t, "a queue whose create was refused", err)
	_, err = c.GetQueueAttributes(ctx, &sqs.GetQueueAttributesInput{QueueUrl: qu, AttributeNames: []types.QueueAttributeName{"Nope"}})
	wantTyped[*types.InvalidAttributeName](t, "GetQueueAttributes Nope", err)
	after := queueAttrs(t, c, q)
	for _, k := range []string{"VisibilityTimeout", "DelaySeconds", "MessageRetentionPeriod", "MaximumMessageSize", "ReceiveMessageWaitTimeSeconds", "RedrivePolicy"} {
		if before[k] != after[k] {
			t.Errorf("a refused SetQueueAttributes changed %s from %q to %q", k, before[k], after[k])
		}
	}
}

// A queue that does not exist, for every action that names one.
func TestSQSErrorsNoQueue(t *testing.T) {
	n, c, ctx := sqsTest(t)
	missing := aws.String(n.url() + "/000000000000/err-nope")
	check := func(what string, err error) {
		t.Helper()
		wantTyped[*types.QueueDoesNotExist](t, what, err)
	}
	_, err := c.SendMessage(ctx, &sqs.SendMessageInput{QueueUrl: missing, MessageBody: aws.String("x")})
	check("SendMessage", err)
	_, err = c.SendMessageBatch(ctx, &sqs.SendMessageBatchInput{QueueUrl: missing, Entries: []types.SendMessageBatchRequestEntry{{Id: aws.String("a"), MessageBody: aws.String("x")}}})
	check("SendMessageBatch", err)
	_, err = c.ReceiveMessage(ctx, &sqs.ReceiveMessageInput{QueueUrl: missing})
	check("ReceiveMessage", err)
	_, err = c.DeleteMessage(ctx, &sqs.DeleteMessageInput{QueueUrl: missing, ReceiptHandle: aws.String("1:0:1")})
	check("DeleteMessage", err)
	_, err = c.GetQueueAttributes(ctx, &sqs.GetQueueAttributesInput{QueueUrl: missing, AttributeNames: []types.QueueAttributeName{"All"}})
	check("GetQueueAttributes", err)
	_, err = c.SetQueueAttributes(ctx, &sqs.SetQueueAttributesInput{QueueUrl: missing, Attributes: map[string]string{"DelaySeconds": "1"}})
	check("SetQueueAttributes", err)
	_, err = c.PurgeQueue(ctx, &sqs.PurgeQueueInput{QueueUrl: missing})
	check("PurgeQueue", err)
	_, err = c.DeleteQueue(ctx, &sqs.DeleteQueueInput{QueueUrl: missing})
	check("DeleteQueue", err)
	_, err = c.ListQueueTags(ctx, &sqs.ListQueueTagsInput{QueueUrl: missing})
	check("ListQueueTags", err)
	_, err = c.ListDeadLetterSourceQueues(ctx, &sqs.ListDeadLetterSourceQueuesInput{QueueUrl: missing})
	check("ListDeadLetterSourceQueues", err)
	_, err = c.GetQueueUrl(ctx, &sqs.GetQueueUrlInput{QueueName: aws.String("err-nope"), QueueOwnerAWSAccountId: aws.String("111122223333")})
	check("GetQueueUrl of another account", err)
	_, err = c.SendMessage(ctx, &sqs.SendMessageInput{QueueUrl: aws.String(n.url() + "/111122223333/err-nope"), MessageBody: aws.String("x")})
	check("SendMessage to another account's URL", err)
	_, err = c.CancelMessageMoveTask(ctx, &sqs.CancelMessageMoveTaskInput{TaskHandle: aws.String("nope")})
	wantTyped[*types.ResourceNotFoundException](t, "CancelMessageMoveTask of an unknown handle", err)
	if _, err := c.GetQueueUrl(ctx, &sqs.GetQueueUrlInput{QueueName: aws.String("err-nope")}); err == nil {
		t.Fatal("a refused action created the queue")
	}
}
