package awsmod

import (
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/aws/aws-sdk-go-v2/service/sqs/types"
	"github.com/aws/smithy-go"
)

const adminPassword = "admin-pw-for-tests"

// v1 makes a /v1 request as the root admin and returns its answer.
func v1(t *testing.T, n *node, method, path, body string) (int, []byte) {
	t.Helper()
	req, err := http.NewRequest(method, n.url()+path, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.SetBasicAuth("admin", adminPassword)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, b
}

// accessKey creates a user with grants and an access key for it.
func accessKey(t *testing.T, n *node, user, grants string) (id, secret string) {
	t.Helper()
	if st, b := v1(t, n, "POST", "/v1/users", `{"username":"`+user+`","password":"user-pw-12345","grants":`+grants+`}`); st != http.StatusCreated {
		t.Fatalf("create user: %d %s", st, b)
	}
	st, b := v1(t, n, "POST", "/v1/users/"+user+"/access-keys", "")
	if st != http.StatusCreated {
		t.Fatalf("create key: %d %s", st, b)
	}
	var k struct {
		ID     string `json:"access_key_id"`
		Secret string `json:"secret_access_key"`
	}
	if err := json.Unmarshal(b, &k); err != nil {
		t.Fatal(err)
	}
	return k.ID, k.Secret
}

func apiCode(err error) string {
	var ae smithy.APIError
	if errors.As(err, &ae) {
		return ae.ErrorCode()
	}
	return ""
}

// With security on, a signed request acts as its key's user: the right
// secret works within the user's grants, a wrong secret, an unknown key
// and a grant the user lacks are refused with AWS's codes, and a refused
// send stores nothing.
func TestSigV4AndGrants(t *testing.T) {
	n := startNode(t, "NARAD_SECURITY_ENABLED=true", "NARAD_ADMIN_PASSWORD="+adminPassword)
	ctx := ctxT(t)
	id, secret := accessKey(t, n, "app", `[{"action":"create","patterns":["*"]},{"action":"produce","patterns":["jobs"]},{"action":"consume","patterns":["jobs"]}]`)
	c := sqsClient(n, id, secret)
	q, err := c.CreateQueue(ctx, &sqs.CreateQueueInput{QueueName: aws.String("jobs")})
	if err != nil {
		t.Fatalf("a signed CreateQueue with the user's key: %v", err)
	}
	if _, err := c.SendMessage(ctx, &sqs.SendMessageInput{QueueUrl: q.QueueUrl, MessageBody: aws.String("one")}); err != nil {
		t.Fatal(err)
	}

	wrong := sqsClient(n, id, secret+"x")
	_, err = wrong.SendMessage(ctx, &sqs.SendMessageInput{QueueUrl: q.QueueUrl, MessageBody: aws.String("forged")})
	if apiCode(err) != "SignatureDoesNotMatch" {
		t.Fatalf("a wrong secret: %v, want SignatureDoesNotMatch", err)
	}
	unknown := sqsClient(n, "NKIAAAAAAAAAAAAAAAAA", secret)
	_, err = unknown.SendMessage(ctx, &sqs.SendMessageInput{QueueUrl: q.QueueUrl, MessageBody: aws.String("forged")})
	if apiCode(err) != "InvalidClientTokenId" {
		t.Fatalf("an unknown key: %v, want InvalidClientTokenId", err)
	}
	if _, err := c.CreateQueue(ctx, &sqs.CreateQueueInput{QueueName: aws.String("other")}); err != nil {
		t.Fatal(err)
	}
	other, err := c.GetQueueUrl(ctx, &sqs.GetQueueUrlInput{QueueName: aws.String("other")})
	if err != nil {
		t.Fatal(err)
	}
	_, err = c.SendMessage(ctx, &sqs.SendMessageInput{QueueUrl: other.QueueUrl, MessageBody: aws.String("not allowed")})
	if apiCode(err) != "AccessDenied" {
		t.Fatalf("a send without the produce grant: %v, want AccessDenied", err)
	}

	// Only the one message the user was allowed to send is there.
	got, err := c.ReceiveMessage(ctx, &sqs.ReceiveMessageInput{QueueUrl: q.QueueUrl, MaxNumberOfMessages: 10, WaitTimeSeconds: 1,
		MessageSystemAttributeNames: []types.MessageSystemAttributeName{"SenderId"}})
	if err != nil {
		t.Fatal(err)
	}
	if len(got.Messages) != 1 || *got.Messages[0].Body != "one" {
		t.Fatalf("received %+v, want the one message sent with the right key", got.Messages)
	}
	if s := got.Messages[0].Attributes["SenderId"]; s != "app" {
		t.Fatalf("SenderId = %q, want the key's user", s)
	}
}
