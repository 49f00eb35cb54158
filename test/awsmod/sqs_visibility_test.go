package awsmod

import (
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/aws/aws-sdk-go-v2/service/sqs/types"
)

// ChangeMessageVisibility to 0 makes a message visible at once.
func TestSQSChangeMessageVisibilityZero(t *testing.T) {
	_, c, ctx := sqsTest(t)
	q := newQueue(t, c, "cmv-zero", map[string]string{"VisibilityTimeout": "60"})
	send(t, c, q, "m1")
	send(t, c, q, "m2")
	got := receiveN(t, c, q, 2)
	if _, err := c.ChangeMessageVisibility(ctx, &sqs.ChangeMessageVisibilityInput{QueueUrl: aws.String(q),
		ReceiptHandle: got[0].ReceiptHandle, VisibilityTimeout: 0}); err != nil {
		t.Fatal(err)
	}
	back := receiveN(t, c, q, 1)
	if *back[0].MessageId != *got[0].MessageId || back[0].Attributes["ApproximateReceiveCount"] != "2" {
		t.Fatalf("after ChangeMessageVisibility 0: %s (count %s), want %s again", *back[0].MessageId,
			back[0].Attributes["ApproximateReceiveCount"], *got[0].MessageId)
	}
	out, err := c.ChangeMessageVisibilityBatch(ctx, &sqs.ChangeMessageVisibilityBatchInput{QueueUrl: aws.String(q),
		Entries: []types.ChangeMessageVisibilityBatchRequestEntry{
			{Id: aws.String("a"), ReceiptHandle: back[0].ReceiptHandle, VisibilityTimeout: 0},
			{Id: aws.String("b"), ReceiptHandle: got[1].ReceiptHandle, VisibilityTimeout: 0},
			{Id: aws.String("c"), ReceiptHandle: aws.String("garbage"), VisibilityTimeout: 0},
		}})
	if err != nil {
		t.Fatal(err)
	}
	if len(out.Successful) != 2 || len(out.Failed) != 1 || *out.Failed[0].Id != "c" || *out.Failed[0].Code != "ReceiptHandleIsInvalid" {
		t.Fatalf("ChangeMessageVisibilityBatch: %+v", out)
	}
	waitCounts(t, c, q, counts{visible: 2})
	// A deleted message is no longer in flight.
	again := receiveN(t, c, q, 2)
	deleteMsg(t, c, q, again[0])
	_, err = c.ChangeMessageVisibility(ctx, &sqs.ChangeMessageVisibilityInput{QueueUrl: aws.String(q),
		ReceiptHandle: again[0].ReceiptHandle, VisibilityTimeout: 0})
	wantTyped[*types.MessageNotInflight](t, "ChangeMessageVisibility of a deleted message", err)
}
