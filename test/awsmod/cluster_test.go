package awsmod

import (
	"fmt"
	"net/http"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
)

// Any node answers any request: a queue created through one node is sent
// to through a second and drained through a third (each forwards to the
// partitions' owners as /v1 does), and an access key made through the
// first node signs requests every node verifies (the secret is sealed
// under the cluster secret, which they share).
func TestClusterAnyNode(t *testing.T) {
	nodes := startCluster(t, 3, "NARAD_SECURITY_ENABLED=true", "NARAD_ADMIN_PASSWORD="+adminPassword)
	ctx := ctxT(t)
	id, secret := accessKey(t, nodes[0], "app", `[{"action":"create","patterns":["*"]},{"action":"produce","patterns":["*"]},{"action":"consume","patterns":["*"]}]`)
	c1, c2, c3 := sqsClient(nodes[0], id, secret), sqsClient(nodes[1], id, secret), sqsClient(nodes[2], id, secret)

	// The key reaches the other nodes' replicas shortly.
	var q *sqs.CreateQueueOutput
	deadline := time.Now().Add(20 * time.Second)
	for {
		var err error
		q, err = c3.CreateQueue(ctx, &sqs.CreateQueueInput{QueueName: aws.String("spread")})
		if err == nil {
			break
		}
		if apiCode(err) != "InvalidClientTokenId" || time.Now().After(deadline) {
			t.Fatalf("CreateQueue through the third node: %v", err)
		}
		time.Sleep(50 * time.Millisecond)
	}
	url2 := nodes[1].url() + "/000000000000/spread"
	const total = 30
	for i := range total {
		if _, err := c2.SendMessage(ctx, &sqs.SendMessageInput{QueueUrl: aws.String(url2), MessageBody: aws.String(fmt.Sprint(i))}); err != nil {
			t.Fatalf("send %d through the second node: %v", i, err)
		}
	}
	got := map[string]bool{}
	deadline = time.Now().Add(30 * time.Second)
	for len(got) < total && time.Now().Before(deadline) {
		out, err := c1.ReceiveMessage(ctx, &sqs.ReceiveMessageInput{QueueUrl: q.QueueUrl, MaxNumberOfMessages: 10, WaitTimeSeconds: 1})
		if err != nil {
			t.Fatalf("receive through the first node: %v", err)
		}
		for _, m := range out.Messages {
			got[*m.Body] = true
			if _, err := c1.DeleteMessage(ctx, &sqs.DeleteMessageInput{QueueUrl: q.QueueUrl, ReceiptHandle: m.ReceiptHandle}); err != nil {
				t.Fatalf("delete through the first node: %v", err)
			}
		}
	}
	if len(got) != total {
		t.Fatalf("received %d distinct of %d messages sent", len(got), total)
	}
	// Basic auth still guards /v1 on every node.
	resp, err := http.Get(nodes[2].url() + "/v1/topics")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusUnauthorized {
		t.Fatalf("/v1 without credentials answered %d", resp.StatusCode)
	}
}
