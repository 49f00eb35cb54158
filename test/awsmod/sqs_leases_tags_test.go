package awsmod

import (
	"maps"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/aws/aws-sdk-go-v2/service/sqs/types"
)

// The SQS actions that rest on /v1's per-lease visibility
// (ack's extend=<duration>, consume's visibility): ChangeMessageVisibility
// with N seconds and ReceiveMessage's VisibilityTimeout; and on a topic's
// tags, aws_attributes and modified_at: TagQueue, CreateQueue's tags and
// the attributes only the edge means.

// ChangeMessageVisibility shortens and lengthens a message's invisibility.
func TestSQSLeaseChangeMessageVisibility(t *testing.T) {
	_, c, ctx := sqsTest(t)
	q := newQueue(t, c, "lt-cmv", map[string]string{"VisibilityTimeout": "60"})
	sent := send(t, c, q, "short")
	m := receiveN(t, c, q, 1)[0]
	if _, err := c.ChangeMessageVisibility(ctx, &sqs.ChangeMessageVisibilityInput{QueueUrl: aws.String(q),
		ReceiptHandle: m.ReceiptHandle, VisibilityTimeout: 1}); err != nil {
		t.Fatal(err)
	}
	back := receive(t, c, q, 1, 10)
	if len(back) != 1 || *back[0].MessageId != *sent.MessageId {
		t.Fatalf("after ChangeMessageVisibility 1 on a 60 s queue, a 10 s receive got %+v", back)
	}
	// Now the other way: 1 s → 30 s, in a batch.
	q1 := newQueue(t, c, "lt-cmv-long", map[string]string{"VisibilityTimeout": "1"})
	send(t, c, q1, "long")
	m = receiveN(t, c, q1, 1)[0]
	out, err := c.ChangeMessageVisibilityBatch(ctx, &sqs.ChangeMessageVisibilityBatchInput{QueueUrl: aws.String(q1),
		Entries: []types.ChangeMessageVisibilityBatchRequestEntry{{Id: aws.String("a"), ReceiptHandle: m.ReceiptHandle, VisibilityTimeout: 30}}})
	if err != nil || len(out.Successful) != 1 {
		t.Fatalf("ChangeMessageVisibilityBatch 30: %v %+v", err, out)
	}
	if got := receive(t, c, q1, 1, 3); len(got) != 0 {
		t.Fatalf("a message made invisible for 30 s came back within 3 s")
	}
	deleteMsg(t, c, q1, m)
}

// ReceiveMessage's VisibilityTimeout overrides the queue's.
func TestSQSLeaseReceiveVisibility(t *testing.T) {
	_, c, ctx := sqsTest(t)
	q := newQueue(t, c, "lt-recv-vis", map[string]string{"VisibilityTimeout": "60"})
	sent := send(t, c, q, "m")
	out, err := c.ReceiveMessage(ctx, &sqs.ReceiveMessageInput{QueueUrl: aws.String(q), WaitTimeSeconds: 5, VisibilityTimeout: 1})
	if err != nil || len(out.Messages) != 1 {
		t.Fatalf("ReceiveMessage VisibilityTimeout 1: %v %+v", err, out)
	}
	back := receive(t, c, q, 1, 10)
	if len(back) != 1 || *back[0].MessageId != *sent.MessageId {
		t.Fatalf("received with VisibilityTimeout 1 on a 60 s queue, a 10 s receive got %+v", back)
	}
}

func TestSQSTopicFieldsTags(t *testing.T) {
	_, c, ctx := sqsTest(t)
	out, err := c.CreateQueue(ctx, &sqs.CreateQueueInput{QueueName: aws.String("lt-tags"), Tags: map[string]string{"team": "a", "env": "dev"}})
	if err != nil {
		t.Fatal(err)
	}
	q := out.QueueUrl
	tags := func() map[string]string {
		t.Helper()
		ls, err := c.ListQueueTags(ctx, &sqs.ListQueueTagsInput{QueueUrl: q})
		if err != nil {
			t.Fatal(err)
		}
		return ls.Tags
	}
	if got := tags(); !maps.Equal(got, map[string]string{"team": "a", "env": "dev"}) {
		t.Fatalf("tags of CreateQueue: %v", got)
	}
	if _, err := c.TagQueue(ctx, &sqs.TagQueueInput{QueueUrl: q, Tags: map[string]string{"team": "b", "cost": "42"}}); err != nil {
		t.Fatal(err)
	}
	if got := tags(); !maps.Equal(got, map[string]string{"team": "b", "env": "dev", "cost": "42"}) {
		t.Fatalf("tags after TagQueue: %v", got)
	}
	if _, err := c.UntagQueue(ctx, &sqs.UntagQueueInput{QueueUrl: q, TagKeys: []string{"env", "absent"}}); err != nil {
		t.Fatal(err)
	}
	if got := tags(); !maps.Equal(got, map[string]string{"team": "b", "cost": "42"}) {
		t.Fatalf("tags after UntagQueue: %v", got)
	}
}

func TestSQSTopicFieldsAttributes(t *testing.T) {
	_, c, ctx := sqsTest(t)
	q := newQueue(t, c, "lt-attrs", nil)
	created := queueAttrs(t, c, q)["LastModifiedTimestamp"]
	time.Sleep(1100 * time.Millisecond) // LastModifiedTimestamp is in seconds at AWS; let it move
	set := map[string]string{"ReceiveMessageWaitTimeSeconds": "3", "MaximumMessageSize": "1024",
		"RedriveAllowPolicy": `{"redrivePermission":"denyAll"}`}
	if _, err := c.SetQueueAttributes(ctx, &sqs.SetQueueAttributesInput{QueueUrl: aws.String(q), Attributes: set}); err != nil {
		t.Fatal(err)
	}
	a := queueAttrs(t, c, q)
	for k, v := range set {
		if a[k] != v {
			t.Errorf("%s = %q after setting %q", k, a[k], v)
		}
	}
	if a["LastModifiedTimestamp"] == created {
		t.Errorf("LastModifiedTimestamp did not move: %s", created)
	}
	// The size cap holds (within the edge's 2 s cache of it).
	deadline := time.Now().Add(5 * time.Second)
	for {
		_, err := c.SendMessage(ctx, &sqs.SendMessageInput{QueueUrl: aws.String(q), MessageBody: aws.String(strings.Repeat("x", 2000))})
		if err != nil {
			wantCode(t, "a 2000-byte message to a queue of MaximumMessageSize 1024", err, "InvalidParameterValue")
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("MaximumMessageSize 1024 let a 2000-byte message in for 5 s")
		}
		time.Sleep(200 * time.Millisecond)
	}
	// denyAll: no queue may use it as its dead-letter queue.
	src := newQueue(t, c, "lt-attrs-src", nil)
	_, err := c.SetQueueAttributes(ctx, &sqs.SetQueueAttributesInput{QueueUrl: aws.String(src), Attributes: map[string]string{
		"RedrivePolicy": `{"deadLetterTargetArn":"` + a["QueueArn"] + `","maxReceiveCount":2}`}})
	wantCode(t, "a RedrivePolicy to a denyAll queue", err, "InvalidParameterValue")
}

func TestSQSTopicFieldsContentBasedDeduplication(t *testing.T) {
	_, c, ctx := sqsTest(t)
	q := newQueue(t, c, "lt-cbd.fifo", map[string]string{"FifoQueue": "true", "ContentBasedDeduplication": "true"})
	if a := queueAttrs(t, c, q); a["ContentBasedDeduplication"] != "true" {
		t.Fatalf("ContentBasedDeduplication = %q", a["ContentBasedDeduplication"])
	}
	var ids []string
	for range 2 {
		out, err := c.SendMessage(ctx, &sqs.SendMessageInput{QueueUrl: aws.String(q), MessageBody: aws.String("same body"), MessageGroupId: aws.String("g")})
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, *out.MessageId)
	}
	if ids[0] != ids[1] {
		t.Fatalf("two sends of one body answered %v", ids)
	}
	got := receiveN(t, c, q, 1)
	deleteMsg(t, c, q, got[0])
	if more := receive(t, c, q, 10, 1); len(more) != 0 {
		t.Fatalf("a content duplicate was delivered")
	}
	// Off again: the same body is a new message.
	if _, err := c.SetQueueAttributes(ctx, &sqs.SetQueueAttributesInput{QueueUrl: aws.String(q),
		Attributes: map[string]string{"ContentBasedDeduplication": "false"}}); err != nil {
		t.Fatal(err)
	}
	if a := queueAttrs(t, c, q); a["ContentBasedDeduplication"] != "false" {
		t.Fatalf("ContentBasedDeduplication = %q after turning it off", a["ContentBasedDeduplication"])
	}
}
