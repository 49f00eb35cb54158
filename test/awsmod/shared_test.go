package awsmod

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/aws/aws-sdk-go-v2/service/sqs/types"
	"github.com/aws/smithy-go"
)

// One node serves every test that needs no node of its own: each test
// works on queues of its own names, so they may run in parallel.
var shared struct {
	once sync.Once
	n    *node
	dir  string
}

// sharedNode is the node the tests share, started by the first to ask.
// A test that fails gets the tail of its logs.
func sharedNode(t *testing.T) *node {
	t.Helper()
	shared.once.Do(func() {
		dir, err := os.MkdirTemp("", "narad-aws-shared")
		if err != nil {
			t.Fatal(err)
		}
		shared.dir = dir
		n := &node{t: t, id: "node-1", addr: freeAddr(t), cluster: freePortPair(t), dir: dir}
		n.start()
		shared.n = n
	})
	if shared.n == nil {
		t.Fatal("the shared node did not start")
	}
	t.Cleanup(func() {
		if t.Failed() {
			logs := shared.n.logs.String()
			if len(logs) > 4000 {
				logs = logs[len(logs)-4000:]
			}
			t.Logf("shared node logs (tail):\n%s", logs)
		}
	})
	return shared.n
}

func stopShared() {
	if shared.n != nil {
		shared.n.kill()
	}
	if shared.dir != "" {
		os.RemoveAll(shared.dir)
	}
}

// sharedSQS is an SQS client of the shared node.
func sharedSQS(t *testing.T) (*node, *sqs.Client) {
	n := sharedNode(t)
	return n, sqsClient(n, "AKIDEXAMPLE", "secret")
}

// sqsTest begins a test on the shared node, in parallel with the others:
// the node, an SQS client of it, and the test's context.
func sqsTest(t *testing.T) (*node, *sqs.Client, context.Context) {
	t.Parallel()
	n, c := sharedSQS(t)
	return n, c, ctxT(t)
}

// newQueue creates a queue and answers its URL.
func newQueue(t *testing.T, c *sqs.Client, name string, attrs map[string]string) string {
	t.Helper()
	out, err := c.CreateQueue(ctxT(t), &sqs.CreateQueueInput{QueueName: aws.String(name), Attributes: attrs})
	if err != nil {
		t.Fatalf("CreateQueue %s: %v", name, err)
	}
	return *out.QueueUrl
}

// queueAttrs is every attribute of q.
func queueAttrs(t *testing.T, c *sqs.Client, q string) map[string]string {
	t.Helper()
	out, err := c.GetQueueAttributes(ctxT(t), &sqs.GetQueueAttributesInput{QueueUrl: aws.String(q),
		AttributeNames: []types.QueueAttributeName{types.QueueAttributeNameAll}})
	if err != nil {
		t.Fatalf("GetQueueAttributes: %v", err)
	}
	return out.Attributes
}

// counts is ApproximateNumberOfMessages, ...NotVisible, ...Delayed.
type counts struct{ visible, notVisible, delayed int }

func (c counts) String() string {
	return fmt.Sprintf("visible %d, not visible %d, delayed %d", c.visible, c.notVisible, c.delayed)
}

func queueCounts(t *testing.T, c *sqs.Client, q string) counts {
	t.Helper()
	a := queueAttrs(t, c, q)
	n := func(k string) int {
		v, err := strconv.Atoi(a[k])
		if err != nil {
			t.Fatalf("attribute %s = %q: %v", k, a[k], err)
		}
		return v
	}
	return counts{n("ApproximateNumberOfMessages"), n("ApproximateNumberOfMessagesNotVisible"), n("ApproximateNumberOfMessagesDelayed")}
}

// waitCounts polls q's counts until they are want, for up to 10 s.
func waitCounts(t *testing.T, c *sqs.Client, q string, want counts) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		got := queueCounts(t, c, q)
		if got == want {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("queue counts: %v, want %v", got, want)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// waitDelayed waits until the queue counts n delayed messages and nothing
// else, receiving (and so touching every partition) between looks: Narad
// counts a partition's scheduled records once a consume has read them,
// and a receive made before the send's record reached its partition's
// log read nothing. Each receive must find nothing.
func waitDelayed(t *testing.T, c *sqs.Client, q string, n int) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		if got := receive(t, c, q, 10, 0); len(got) != 0 {
			t.Fatalf("received %d messages while waiting for %d delayed ones", len(got), n)
		}
		got := queueCounts(t, c, q)
		if got == (counts{delayed: n}) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("queue counts: %v, want %d delayed", got, n)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// receive receives up to max messages, long-polling up to wait seconds.
func receive(t *testing.T, c *sqs.Client, q string, max, wait int32) []types.Message {
	t.Helper()
	out, err := c.ReceiveMessage(ctxT(t), &sqs.ReceiveMessageInput{QueueUrl: aws.String(q), MaxNumberOfMessages: max,
		WaitTimeSeconds: wait, MessageAttributeNames: []string{"All"},
		MessageSystemAttributeNames: []types.MessageSystemAttributeName{"All"}})
	if err != nil {
		t.Fatalf("ReceiveMessage: %v", err)
	}
	return out.Messages
}

// receiveN receives until it has n messages, within 10 s.
func receiveN(t *testing.T, c *sqs.Client, q string, n int) []types.Message {
	t.Helper()
	var got []types.Message
	deadline := time.Now().Add(10 * time.Second)
	for len(got) < n {
		if time.Now().After(deadline) {
			t.Fatalf("received %d messages within 10s, want %d", len(got), n)
		}
		got = append(got, receive(t, c, q, int32(min(10, n-len(got))), 2)...)
	}
	if len(got) != n {
		t.Fatalf("received %d messages, want %d", len(got), n)
	}
	return got
}

func send(t *testing.T, c *sqs.Client, q, body string) *sqs.SendMessageOutput {
	t.Helper()
	out, err := c.SendMessage(ctxT(t), &sqs.SendMessageInput{QueueUrl: aws.String(q), MessageBody: aws.String(body)})
	if err != nil {
		t.Fatalf("SendMessage: %v", err)
	}
	return out
}

func deleteMsg(t *testing.T, c *sqs.Client, q string, m types.Message) {
	t.Helper()
	if _, err := c.DeleteMessage(ctxT(t), &sqs.DeleteMessageInput{QueueUrl: aws.String(q), ReceiptHandle: m.ReceiptHandle}); err != nil {
		t.Fatalf("DeleteMessage: %v", err)
	}
}

// wantTyped fails unless err is the SDK's typed error T.
func wantTyped[T error](t *testing.T, what string, err error) {
	t.Helper()
	var target T
	if !errors.As(err, &target) {
		t.Fatalf("%s: %v (%T), want %T", what, err, err, target)
	}
}

// wantCode fails unless err is an API error of one of codes (the JSON
// protocol's and the Query protocol's names of one error).
func wantCode(t *testing.T, what string, err error, codes ...string) {
	t.Helper()
	var ae smithy.APIError
	if !errors.As(err, &ae) {
		t.Fatalf("%s: %v (%T), want an API error %v", what, err, err, codes)
	}
	for _, c := range codes {
		if ae.ErrorCode() == c {
			return
		}
	}
	t.Fatalf("%s: error code %q (%v), want one of %v", what, ae.ErrorCode(), err, codes)
}

// rawJSON posts one JSON protocol request by hand.
func rawJSON(t *testing.T, n *node, target, body string) *http.Response {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, n.url()+"/", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/x-amz-json-1.0")
	req.Header.Set("X-Amz-Target", target)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { resp.Body.Close() })
	return resp
}
