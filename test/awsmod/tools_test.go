package awsmod

import (
	"crypto/md5"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// The tools teams use with SQS and SNS, run as a new user would run them
// against a node: Debian's AWS CLI v2 (awscli), sqs-consumer with the AWS
// SDK for JavaScript v3, and boto3's resource API. None of them skips:
// scripts/test.sh installs awscli, python3-boto3 and Node.js when it may,
// and each test says what to install when one is missing.

// debianAWS is Debian's AWS CLI v2, which speaks Query to SQS: an aws on
// PATH may be another (pip's v1 speaks JSON), so the test names this one.
const debianAWS = "/usr/bin/aws"

// awsCLI runs the AWS CLI against a node with one key pair, in an
// environment of its own: no profile, config or credentials file of the
// machine's, no pager.
type awsCLI struct {
	t   *testing.T
	n   *node
	env []string
}

func newAWSCLI(t *testing.T, n *node, keyID, secret string) *awsCLI {
	t.Helper()
	if _, err := os.Stat(debianAWS); err != nil {
		t.Fatalf("%s is missing: install Debian's AWS CLI (apt-get install -y awscli)", debianAWS)
	}
	dir := t.TempDir()
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "AWS_") {
			env = append(env, kv)
		}
	}
	env = append(env, "AWS_ACCESS_KEY_ID="+keyID, "AWS_SECRET_ACCESS_KEY="+secret, "AWS_DEFAULT_REGION=us-east-1",
		"AWS_PAGER=", "AWS_CONFIG_FILE="+filepath.Join(dir, "config"),
		"AWS_SHARED_CREDENTIALS_FILE="+filepath.Join(dir, "credentials"), "HOME="+dir)
	return &awsCLI{t: t, n: n, env: env}
}

// run runs `aws --endpoint-url <node> --output json args...`.
func (c *awsCLI) run(args ...string) (stdout []byte, stderr string, err error) {
	c.t.Helper()
	cmd := exec.Command(debianAWS, append([]string{"--endpoint-url", c.n.url(), "--output", "json"}, args...)...)
	cmd.Env = c.env
	var out, errb strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &errb
	err = cmd.Run()
	return []byte(out.String()), errb.String(), err
}

// do runs a command that must succeed and decodes its output into out
// (nil: none wanted). A command with nothing to show (receive-message of
// an empty queue) prints nothing, which leaves out as it is.
func (c *awsCLI) do(out any, args ...string) {
	c.t.Helper()
	stdout, stderr, err := c.run(args...)
	if err != nil {
		c.t.Fatalf("aws %s: %v\n%s%s", strings.Join(args, " "), err, stdout, stderr)
	}
	if out == nil || len(strings.TrimSpace(string(stdout))) == 0 {
		return
	}
	if err := json.Unmarshal(stdout, out); err != nil {
		c.t.Fatalf("aws %s printed %q: %v", strings.Join(args, " "), stdout, err)
	}
}

// cliTest begins a CLI test on the shared node, in parallel with the
// others: the node and the CLI with any key (security is off there).
func cliTest(t *testing.T) (*node, *awsCLI) {
	t.Helper()
	t.Parallel()
	n := sharedNode(t)
	return n, newAWSCLI(t, n, "test", "test")
}

type cliAttr struct {
	DataType, StringValue, BinaryValue string
}

type cliMessage struct {
	MessageID         string `json:"MessageId"`
	ReceiptHandle     string
	MD5OfBody         string
	Body              string
	Attributes        map[string]string
	MessageAttributes map[string]cliAttr
}

type cliReceive struct{ Messages []cliMessage }

func md5Hex(s string) string {
	sum := md5.Sum([]byte(s))
	return hex.EncodeToString(sum[:])
}

// A session a user would type: every SQS command of a queue's life, the
// output parsed as JSON and checked.
func TestAWSCLISQS(t *testing.T) {
	n, aws := cliTest(t)

	var created struct{ QueueUrl string }
	aws.do(&created, "sqs", "create-queue", "--queue-name", "cli-work")
	url := n.url() + "/000000000000/cli-work"
	if created.QueueUrl != url {
		t.Fatalf("create-queue: QueueUrl %q, want %q", created.QueueUrl, url)
	}
	var listed struct{ QueueUrls []string }
	aws.do(&listed, "sqs", "list-queues", "--queue-name-prefix", "cli-work")
	if !slices.Equal(listed.QueueUrls, []string{url}) {
		t.Fatalf("list-queues: %v, want [%s]", listed.QueueUrls, url)
	}

	const body = "hello from the cli"
	var sent struct {
		MessageID              string `json:"MessageId"`
		MD5OfMessageBody       string
		MD5OfMessageAttributes string
	}
	aws.do(&sent, "sqs", "send-message", "--queue-url", url, "--message-body", body, "--message-attributes",
		`{"Lang":{"DataType":"String","StringValue":"cli"},"Count":{"DataType":"Number","StringValue":"42"},"Raw":{"DataType":"Binary","BinaryValue":"AAH/"}}`)
	if sent.MessageID == "" || sent.MD5OfMessageBody != md5Hex(body) || sent.MD5OfMessageAttributes == "" {
		t.Fatalf("send-message: %+v", sent)
	}

	var got cliReceive
	aws.do(&got, "sqs", "receive-message", "--queue-url", url, "--attribute-names", "All",
		"--message-attribute-names", "All", "--wait-time-seconds", "5")
	if len(got.Messages) != 1 {
		t.Fatalf("receive-message: %+v, want the one message", got)
	}
	m := got.Messages[0]
	wantAttrs := map[string]cliAttr{"Lang": {"String", "cli", ""}, "Count": {"Number", "42", ""}, "Raw": {"Binary", "", "AAH/"}}
	if m.MessageID != sent.MessageID || m.Body != body || m.MD5OfBody != md5Hex(body) || fmt.Sprint(m.MessageAttributes) != fmt.Sprint(wantAttrs) {
		t.Fatalf("receive-message: %+v, want %s with %v", m, sent.MessageID, wantAttrs)
	}
	for _, a := range []string{"SentTimestamp", "ApproximateFirstReceiveTimestamp", "SenderId"} {
		if m.Attributes[a] == "" {
			t.Fatalf("receive-message --attribute-names All: no %s in %v", a, m.Attributes)
		}
	}
	if m.Attributes["ApproximateReceiveCount"] != "1" {
		t.Fatalf("ApproximateReceiveCount %q, want 1", m.Attributes["ApproximateReceiveCount"])
	}
	aws.do(nil, "sqs", "delete-message", "--queue-url", url, "--receipt-handle", m.ReceiptHandle)

	type attrs struct{ Attributes map[string]string }
	var all attrs
	aws.do(&all, "sqs", "get-queue-attributes", "--queue-url", url, "--attribute-names", "All")
	for k, v := range map[string]string{"QueueArn": "arn:aws:sqs:us-east-1:000000000000:cli-work", "VisibilityTimeout": "30",
		"ApproximateNumberOfMessages": "0", "ApproximateNumberOfMessagesNotVisible": "0", "DelaySeconds": "0"} {
		if all.Attributes[k] != v {
			t.Fatalf("get-queue-attributes: %s = %q, want %q (all: %v)", k, all.Attributes[k], v, all.Attributes)
		}
	}
	aws.do(nil, "sqs", "set-queue-attributes", "--queue-url", url, "--attributes", "VisibilityTimeout=45,MaximumMessageSize=2048")
	var some attrs
	aws.do(&some, "sqs", "get-queue-attributes", "--queue-url", url, "--attribute-names", "VisibilityTimeout", "MaximumMessageSize")
	if fmt.Sprint(some.Attributes) != fmt.Sprint(map[string]string{"MaximumMessageSize": "2048", "VisibilityTimeout": "45"}) {
		t.Fatalf("get-queue-attributes after set-queue-attributes: %v", some.Attributes)
	}

	var batch struct {
		Successful []struct{ Id, MessageId, MD5OfMessageBody string }
		Failed     []any
	}
	aws.do(&batch, "sqs", "send-message-batch", "--queue-url", url, "--entries",
		"Id=a,MessageBody=first", "Id=b,MessageBody=second,DelaySeconds=0")
	if len(batch.Successful) != 2 || len(batch.Failed) != 0 || batch.Successful[0].MD5OfMessageBody != md5Hex("first") {
		t.Fatalf("send-message-batch: %+v", batch)
	}
	var counted attrs
	aws.do(&counted, "sqs", "get-queue-attributes", "--queue-url", url, "--attribute-names", "ApproximateNumberOfMessages")
	if counted.Attributes["ApproximateNumberOfMessages"] != "2" {
		t.Fatalf("after send-message-batch: %v, want 2 messages", counted.Attributes)
	}
	aws.do(nil, "sqs", "purge-queue", "--queue-url", url)
	var none cliReceive
	aws.do(&none, "sqs", "receive-message", "--queue-url", url, "--wait-time-seconds", "1")
	if len(none.Messages) != 0 {
		t.Fatalf("receive-message after purge-queue: %+v", none.Messages)
	}
	aws.do(nil, "sqs", "delete-queue", "--queue-url", url)
	var gone struct{ QueueUrls []string }
	aws.do(&gone, "sqs", "list-queues", "--queue-name-prefix", "cli-work")
	if len(gone.QueueUrls) != 0 {
		t.Fatalf("list-queues after delete-queue: %v", gone.QueueUrls)
	}
	_, stderr, err := aws.run("sqs", "get-queue-url", "--queue-name", "cli-work")
	if err == nil || !strings.Contains(stderr, "AWS.SimpleQueueService.NonExistentQueue") {
		t.Fatalf("get-queue-url of the deleted queue: %v, %s", err, stderr)
	}
}

// SNS from the CLI: a topic, a raw SQS subscription, a publish with
// attributes received from the queue, the subscription listed and
// removed.
func TestAWSCLISNS(t *testing.T) {
	_, aws := cliTest(t)

	var q struct{ QueueUrl string }
	aws.do(&q, "sqs", "create-queue", "--queue-name", "cli-inbox")
	const queueARN = "arn:aws:sqs:us-east-1:000000000000:cli-inbox"
	var topic struct{ TopicArn string }
	aws.do(&topic, "sns", "create-topic", "--name", "cli-news")
	if topic.TopicArn != "arn:aws:sns:us-east-1:000000000000:cli-news" {
		t.Fatalf("create-topic: %+v", topic)
	}
	var sub struct{ SubscriptionArn string }
	aws.do(&sub, "sns", "subscribe", "--topic-arn", topic.TopicArn, "--protocol", "sqs",
		"--notification-endpoint", queueARN, "--attributes", "RawMessageDelivery=true")
	if !strings.HasPrefix(sub.SubscriptionArn, topic.TopicArn+":") {
		t.Fatalf("subscribe: %+v", sub)
	}
	var pub struct{ MessageId string }
	aws.do(&pub, "sns", "publish", "--topic-arn", topic.TopicArn, "--message", "extra, extra",
		"--message-attributes", `{"Section":{"DataType":"String","StringValue":"sport"},"Page":{"DataType":"Number","StringValue":"7"}}`)
	if pub.MessageId == "" {
		t.Fatalf("publish: %+v", pub)
	}
	var got cliReceive
	aws.do(&got, "sqs", "receive-message", "--queue-url", q.QueueUrl, "--message-attribute-names", "All", "--wait-time-seconds", "5")
	want := map[string]cliAttr{"Section": {"String", "sport", ""}, "Page": {"Number", "7", ""}}
	if len(got.Messages) != 1 || got.Messages[0].Body != "extra, extra" || fmt.Sprint(got.Messages[0].MessageAttributes) != fmt.Sprint(want) {
		t.Fatalf("receive-message of the subscribed queue: %+v, want the raw message with %v", got, want)
	}
	aws.do(nil, "sqs", "delete-message", "--queue-url", q.QueueUrl, "--receipt-handle", got.Messages[0].ReceiptHandle)

	type subs struct {
		Subscriptions []struct{ SubscriptionArn, Owner, Protocol, Endpoint, TopicArn string }
	}
	var listed subs
	aws.do(&listed, "sns", "list-subscriptions")
	found := false
	for _, s := range listed.Subscriptions {
		if s.SubscriptionArn == sub.SubscriptionArn {
			found = s.Protocol == "sqs" && s.Endpoint == queueARN && s.TopicArn == topic.TopicArn
		}
	}
	if !found {
		t.Fatalf("list-subscriptions: %+v, want %s (sqs, %s)", listed, sub.SubscriptionArn, queueARN)
	}
	aws.do(nil, "sns", "unsubscribe", "--subscription-arn", sub.SubscriptionArn)
	var after subs
	aws.do(&after, "sns", "list-subscriptions-by-topic", "--topic-arn", topic.TopicArn)
	if len(after.Subscriptions) != 0 {
		t.Fatalf("list-subscriptions-by-topic after unsubscribe: %+v", after)
	}
	aws.do(nil, "sns", "publish", "--topic-arn", topic.TopicArn, "--message", "nobody listens")
	var none cliReceive
	aws.do(&none, "sqs", "receive-message", "--queue-url", q.QueueUrl, "--wait-time-seconds", "1")
	if len(none.Messages) != 0 {
		t.Fatalf("the queue got %+v after unsubscribe", none.Messages)
	}
	aws.do(nil, "sns", "delete-topic", "--topic-arn", topic.TopicArn)
}

// With security on, the CLI works with a user's access key and shows
// SignatureDoesNotMatch for a wrong secret.
func TestAWSCLISecurity(t *testing.T) {
	t.Parallel()
	n := startNode(t, "NARAD_SECURITY_ENABLED=true", "NARAD_ADMIN_PASSWORD="+adminPassword)
	id, secret := accessKey(t, n, "cli", `[{"action":"create","patterns":["*"]},{"action":"produce","patterns":["*"]},{"action":"consume","patterns":["*"]}]`)
	aws := newAWSCLI(t, n, id, secret)
	var q struct{ QueueUrl string }
	aws.do(&q, "sqs", "create-queue", "--queue-name", "keyed")
	aws.do(nil, "sqs", "send-message", "--queue-url", q.QueueUrl, "--message-body", "signed")
	var got cliReceive
	aws.do(&got, "sqs", "receive-message", "--queue-url", q.QueueUrl, "--attribute-names", "SenderId", "--wait-time-seconds", "2")
	if len(got.Messages) != 1 || got.Messages[0].Body != "signed" || got.Messages[0].Attributes["SenderId"] != "cli" {
		t.Fatalf("receive-message with the user's key: %+v", got)
	}

	wrong := newAWSCLI(t, n, id, secret+"x")
	_, stderr, err := wrong.run("sqs", "send-message", "--queue-url", q.QueueUrl, "--message-body", "forged")
	if err == nil || !strings.Contains(stderr, "SignatureDoesNotMatch") {
		t.Fatalf("a wrong secret: %v, stderr %q, want SignatureDoesNotMatch", err, stderr)
	}
}

// sqs-consumer (with @aws-sdk/client-sqs and client-sns) runs
// node/consumer.mjs: 20 messages consumed once each and deleted, by
// handleMessage and by handleMessageBatch, and SNS publishes reaching the
// consumer through a raw subscription and in SNS's JSON envelope. npm installs node/package-lock.json
// into a temporary copy of node/ (from npm's cache after the first run).
func TestSQSConsumer(t *testing.T) {
	t.Parallel()
	n := sharedNode(t)
	for _, tool := range []string{"node", "npm"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Fatalf("%s is missing: install Node.js >= 20 (Debian: apt-get install -y nodejs npm)", tool)
		}
	}
	dir := t.TempDir()
	for _, f := range []string{"package.json", "package-lock.json", "consumer.mjs"} {
		b, err := os.ReadFile(filepath.Join("node", f))
		if err != nil {
			t.Fatal(err)
		}
		writeFile(t, filepath.Join(dir, f), string(b))
	}
	install := exec.Command("npm", "ci", "--no-audit", "--no-fund", "--silent")
	install.Dir = dir
	if out, err := install.CombinedOutput(); err != nil {
		t.Fatalf("npm ci in a copy of node/: %v\n%s", err, out)
	}
	run := exec.Command("node", "consumer.mjs", "sqsc-")
	run.Dir = dir
	run.Env = append(os.Environ(), "NARAD_URL="+n.url())
	start := time.Now()
	out, err := run.CombinedOutput()
	if err != nil || !strings.Contains(string(out), "ok:") {
		t.Fatalf("node consumer.mjs: %v\n%s", err, out)
	}
	t.Logf("consumer.mjs in %v", time.Since(start).Round(time.Millisecond))
}

// boto3's resource API (boto3_resource.py) with every boto3 this machine
// imports: Debian's (python3-boto3, Query protocol), which the Query test
// needs too, and the python3 on PATH's when it has another (pip's newest
// speaks SQS's JSON protocol).
func TestBoto3Resource(t *testing.T) {
	t.Parallel()
	n := sharedNode(t)
	type python struct {
		path string
		env  []string
	}
	candidates := []python{{"/usr/bin/python3", []string{"PYTHONPATH=/usr/lib/python3/dist-packages"}}}
	if p, err := exec.LookPath("python3"); err == nil && p != "/usr/bin/python3" {
		candidates = append(candidates, python{p, nil})
	}
	seen := map[string]bool{}
	for i, py := range candidates {
		probe := exec.Command(py.path, "-c", "import boto3, botocore; print(boto3.__version__, botocore.__version__)")
		probe.Env = append(os.Environ(), py.env...)
		v, err := probe.Output()
		if err != nil {
			if i == 0 {
				t.Fatalf("%s cannot import boto3: install python3-boto3 (Debian: apt-get install -y python3-boto3)", py.path)
			}
			continue // pip's boto3 is welcome, not needed
		}
		version := strings.TrimSpace(string(v))
		if seen[version] {
			continue
		}
		seen[version] = true
		t.Run("boto3 "+version, func(t *testing.T) {
			cmd := exec.Command(py.path, "boto3_resource.py", n.url(), fmt.Sprintf("b3r%d-", i))
			cmd.Env = append(os.Environ(), append(py.env, "PYTHONDONTWRITEBYTECODE=1")...)
			out, err := cmd.CombinedOutput()
			if err != nil || !strings.Contains(string(out), "ok boto3") {
				t.Fatalf("%s boto3_resource.py: %v\n%s", py.path, err, out)
			}
			t.Logf("%s: %s", py.path, strings.TrimSpace(string(out)))
		})
	}
}
