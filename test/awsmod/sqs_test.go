package awsmod

import (
	"errors"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/aws/aws-sdk-go-v2/service/sqs/types"
)

// The core flow through the SDK: create, send with attributes, receive
// them back typed (the SDK checks both MD5s and fails the call when
// they differ), delete, and the queue is empty.
func TestSQSSendReceiveDelete(t *testing.T) {
	n := startNode(t)
	c := sqsClient(n, "AKIDEXAMPLE", "secret")
	ctx := ctxT(t)
	cq, err := c.CreateQueue(ctx, &sqs.CreateQueueInput{QueueName: aws.String("orders")})
	if err != nil {
		t.Fatal(err)
	}
	q := cq.QueueUrl
	if *q != n.url()+"/000000000000/orders" {
		t.Fatalf("QueueUrl = %s", *q)
	}
	sent, err := c.SendMessage(ctx, &sqs.SendMessageInput{QueueUrl: q, MessageBody: aws.String("hello é"),
		MessageAttributes: map[string]types.MessageAttributeValue{
			"Store": {DataType: aws.String("String"), StringValue: aws.String("north")},
			"Price": {DataType: aws.String("Number.usd"), StringValue: aws.String("12.5")},
			"Blob":  {DataType: aws.String("Binary"), BinaryValue: []byte{0, 1, 255}},
		}})
	if err != nil {
		t.Fatal(err)
	}
	got, err := c.ReceiveMessage(ctx, &sqs.ReceiveMessageInput{QueueUrl: q, MaxNumberOfMessages: 10, WaitTimeSeconds: 5,
		MessageAttributeNames: []string{"All"}, MessageSystemAttributeNames: []types.MessageSystemAttributeName{"All"}})
	if err != nil {
		t.Fatal(err)
	}
	if len(got.Messages) != 1 {
		t.Fatalf("received %d messages, want 1", len(got.Messages))
	}
	m := got.Messages[0]
	if *m.Body != "hello é" || *m.MessageId != *sent.MessageId {
		t.Fatalf("received body %q id %s, sent id %s", *m.Body, *m.MessageId, *sent.MessageId)
	}
	if a := m.MessageAttributes["Price"]; *a.DataType != "Number.usd" || *a.StringValue != "12.5" {
		t.Fatalf("Price came back as %+v", a)
	}
	if a := m.MessageAttributes["Blob"]; string(a.BinaryValue) != "\x00\x01\xff" {
		t.Fatalf("Blob came back as %v", a.BinaryValue)
	}
	if m.Attributes["ApproximateReceiveCount"] != "1" {
		t.Fatalf("system attributes: %v", m.Attributes)
	}
	if _, err := c.DeleteMessage(ctx, &sqs.DeleteMessageInput{QueueUrl: q, ReceiptHandle: m.ReceiptHandle}); err != nil {
		t.Fatal(err)
	}
	again, err := c.ReceiveMessage(ctx, &sqs.ReceiveMessageInput{QueueUrl: q, WaitTimeSeconds: 0})
	if err != nil {
		t.Fatal(err)
	}
	if len(again.Messages) != 0 {
		t.Fatalf("a deleted message came back: %v", again.Messages)
	}
}

// Errors come back as the SDK's typed errors.
func TestSQSTypedErrors(t *testing.T) {
	n := startNode(t)
	c := sqsClient(n, "AKIDEXAMPLE", "secret")
	ctx := ctxT(t)
	_, err := c.GetQueueUrl(ctx, &sqs.GetQueueUrlInput{QueueName: aws.String("nope")})
	var qdne *types.QueueDoesNotExist
	if !errors.As(err, &qdne) {
		t.Fatalf("GetQueueUrl of a missing queue: %v (%T), want QueueDoesNotExist", err, err)
	}
	cq, err := c.CreateQueue(ctx, &sqs.CreateQueueInput{QueueName: aws.String("q")})
	if err != nil {
		t.Fatal(err)
	}
	_, err = c.SendMessage(ctx, &sqs.SendMessageInput{QueueUrl: cq.QueueUrl, MessageBody: aws.String("bad \x01")})
	var imc *types.InvalidMessageContents
	if !errors.As(err, &imc) {
		t.Fatalf("a body with a control character: %v, want InvalidMessageContents", err)
	}
	_, err = c.DeleteMessage(ctx, &sqs.DeleteMessageInput{QueueUrl: cq.QueueUrl, ReceiptHandle: aws.String("garbage")})
	var rhi *types.ReceiptHandleIsInvalid
	if !errors.As(err, &rhi) {
		t.Fatalf("a malformed handle: %v, want ReceiptHandleIsInvalid", err)
	}
	// The node counts each answer by action and code.
	resp, err := http.Get(n.url() + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	for _, want := range []string{
		`narad_aws_requests_total{action="GetQueueUrl",code="QueueDoesNotExist",service="sqs"} 1`,
		`narad_aws_requests_total{action="CreateQueue",code="ok",service="sqs"} 1`,
		`narad_aws_requests_total{action="DeleteMessage",code="ReceiptHandleIsInvalid",service="sqs"} 1`,
	} {
		if !strings.Contains(string(body), want) {
			t.Errorf("/metrics lacks %s", want)
		}
	}
}
