package awsmod

import (
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/aws/aws-sdk-go-v2/service/sqs/types"
)

// ApproximateNumberOfMessages, ...NotVisible and ...Delayed follow sends,
// receives, deletes and delays; specific names answer only those.
func TestSQSGetQueueAttributesCounts(t *testing.T) {
	_, c, ctx := sqsTest(t)
	q := newQueue(t, c, "attr-counts", map[string]string{"VisibilityTimeout": "60"})
	waitCounts(t, c, q, counts{})
	for i := range 3 {
		send(t, c, q, "m"+string(rune('0'+i)))
	}
	waitCounts(t, c, q, counts{visible: 3})
	got := receiveN(t, c, q, 1)
	waitCounts(t, c, q, counts{visible: 2, notVisible: 1})
	deleteMsg(t, c, q, got[0])
	waitCounts(t, c, q, counts{visible: 2})

	// A delayed message is counted as delayed, not visible. (Narad
	// counts scheduled records of a partition a consumer has touched
	// since the node started: a receive that finds nothing touches them.)
	dq := newQueue(t, c, "attr-counts-delayed", nil)
	if _, err := c.SendMessage(ctx, &sqs.SendMessageInput{QueueUrl: aws.String(dq), MessageBody: aws.String("later"), DelaySeconds: 300}); err != nil {
		t.Fatal(err)
	}
	if got := receive(t, c, dq, 10, 0); len(got) != 0 {
		t.Fatalf("a message delayed 300 s was received at once")
	}
	waitDelayed(t, c, dq, 1)

	some, err := c.GetQueueAttributes(ctx, &sqs.GetQueueAttributesInput{QueueUrl: aws.String(q),
		AttributeNames: []types.QueueAttributeName{"VisibilityTimeout", "ApproximateNumberOfMessages"}})
	if err != nil {
		t.Fatal(err)
	}
	if len(some.Attributes) != 2 || some.Attributes["VisibilityTimeout"] != "60" || some.Attributes["ApproximateNumberOfMessages"] != "2" {
		t.Fatalf("two attributes asked for, got %v", some.Attributes)
	}
	all := queueAttrs(t, c, q)
	for _, k := range []string{"QueueArn", "CreatedTimestamp", "LastModifiedTimestamp", "MessageRetentionPeriod",
		"DelaySeconds", "ReceiveMessageWaitTimeSeconds", "MaximumMessageSize", "VisibilityTimeout"} {
		if all[k] == "" {
			t.Errorf("All has no %s: %v", k, all)
		}
	}
	none, err := c.GetQueueAttributes(ctx, &sqs.GetQueueAttributesInput{QueueUrl: aws.String(q)})
	if err != nil {
		t.Fatal(err)
	}
	if len(none.Attributes) != 0 {
		t.Fatalf("no names asked for, got %v", none.Attributes)
	}
}
