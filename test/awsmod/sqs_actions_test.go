package awsmod

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/aws/aws-sdk-go-v2/service/sqs/types"
)

// Every SQS action at least once, happy path, answer checked. Actions
// whose answers rest on /v1 features still being built are in
// sqs_gaps_test.go.

func TestSQSCreateQueue(t *testing.T) {
	n, c, ctx := sqsTest(t)
	std := newQueue(t, c, "act-create", map[string]string{"VisibilityTimeout": "7", "DelaySeconds": "0"})
	if std != n.url()+"/000000000000/act-create" {
		t.Fatalf("QueueUrl = %s", std)
	}
	a := queueAttrs(t, c, std)
	if a["VisibilityTimeout"] != "7" || a["QueueArn"] != "arn:aws:sqs:us-east-1:000000000000:act-create" {
		t.Fatalf("attributes of the standard queue: %v", a)
	}
	if _, ok := a["FifoQueue"]; ok {
		t.Fatalf("a standard queue says FifoQueue: %v", a)
	}
	fifo := newQueue(t, c, "act-create.fifo", map[string]string{"FifoQueue": "true", "VisibilityTimeout": "5"})
	a = queueAttrs(t, c, fifo)
	if a["FifoQueue"] != "true" || a["VisibilityTimeout"] != "5" {
		t.Fatalf("attributes of the FIFO queue: %v", a)
	}
	// The same attributes again: the same URL.
	again := newQueue(t, c, "act-create", map[string]string{"VisibilityTimeout": "7"})
	if again != std {
		t.Fatalf("re-create answered %s, want %s", again, std)
	}
	// Different ones: QueueNameExists.
	_, err := c.CreateQueue(ctx, &sqs.CreateQueueInput{QueueName: aws.String("act-create"),
		Attributes: map[string]string{"VisibilityTimeout": "8"}})
	wantTyped[*types.QueueNameExists](t, "re-create with another VisibilityTimeout", err)
	if a := queueAttrs(t, c, std); a["VisibilityTimeout"] != "7" {
		t.Fatalf("a refused re-create changed VisibilityTimeout to %s", a["VisibilityTimeout"])
	}
	// FifoQueue on a name without .fifo, and the reverse.
	_, err = c.CreateQueue(ctx, &sqs.CreateQueueInput{QueueName: aws.String("act-notfifo"),
		Attributes: map[string]string{"FifoQueue": "true"}})
	wantCode(t, "FifoQueue=true without .fifo", err, "InvalidParameterValue")
}

func TestSQSGetQueueUrlListQueuesDeleteQueue(t *testing.T) {
	n, c, ctx := sqsTest(t)
	var want []string
	for _, name := range []string{"lst-a", "lst-b", "lst-c", "lst-d", "lst-e"} {
		want = append(want, newQueue(t, c, name, nil))
	}
	newQueue(t, c, "lsx-other", nil)
	got, err := c.GetQueueUrl(ctx, &sqs.GetQueueUrlInput{QueueName: aws.String("lst-c")})
	if err != nil {
		t.Fatal(err)
	}
	if *got.QueueUrl != n.url()+"/000000000000/lst-c" {
		t.Fatalf("GetQueueUrl = %s", *got.QueueUrl)
	}
	all, err := c.ListQueues(ctx, &sqs.ListQueuesInput{QueueNamePrefix: aws.String("lst-")})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(all.QueueUrls, want) || all.NextToken != nil {
		t.Fatalf("ListQueues lst-: %v (next %v), want %v", all.QueueUrls, all.NextToken, want)
	}
	// Pages of two.
	var paged []string
	var token *string
	for pages := 0; ; pages++ {
		if pages > 5 {
			t.Fatalf("ListQueues paging does not end: %v", paged)
		}
		out, err := c.ListQueues(ctx, &sqs.ListQueuesInput{QueueNamePrefix: aws.String("lst-"), MaxResults: aws.Int32(2), NextToken: token})
		if err != nil {
			t.Fatal(err)
		}
		if len(out.QueueUrls) > 2 {
			t.Fatalf("a page of %d, asked for 2", len(out.QueueUrls))
		}
		paged = append(paged, out.QueueUrls...)
		if out.NextToken == nil {
			break
		}
		token = out.NextToken
	}
	if !slices.Equal(paged, want) {
		t.Fatalf("ListQueues by pages of 2: %v, want %v", paged, want)
	}
	// The SDK's paginator agrees.
	var viaPager []string
	p := sqs.NewListQueuesPaginator(c, &sqs.ListQueuesInput{QueueNamePrefix: aws.String("lst-"), MaxResults: aws.Int32(3)})
	for p.HasMorePages() {
		out, err := p.NextPage(ctx)
		if err != nil {
			t.Fatal(err)
		}
		viaPager = append(viaPager, out.QueueUrls...)
	}
	if !slices.Equal(viaPager, want) {
		t.Fatalf("ListQueuesPaginator: %v, want %v", viaPager, want)
	}
	if _, err := c.DeleteQueue(ctx, &sqs.DeleteQueueInput{QueueUrl: aws.String(want[1])}); err != nil {
		t.Fatal(err)
	}
	_, err = c.GetQueueUrl(ctx, &sqs.GetQueueUrlInput{QueueName: aws.String("lst-b")})
	wantTyped[*types.QueueDoesNotExist](t, "GetQueueUrl of a deleted queue", err)
	all, err = c.ListQueues(ctx, &sqs.ListQueuesInput{QueueNamePrefix: aws.String("lst-")})
	if err != nil {
		t.Fatal(err)
	}
	if slices.Contains(all.QueueUrls, want[1]) || len(all.QueueUrls) != 4 {
		t.Fatalf("ListQueues after DeleteQueue: %v", all.QueueUrls)
	}
}

func TestSQSSetQueueAttributes(t *testing.T) {
	_, c, ctx := sqsTest(t)
	q := newQueue(t, c, "set-attrs", nil)
	dlq := newQueue(t, c, "set-attrs-dlq", nil)
	dlqArn := queueAttrs(t, c, dlq)["QueueArn"]
	policy := `{"deadLetterTargetArn":"` + dlqArn + `","maxReceiveCount":3}`
	_, err := c.SetQueueAttributes(ctx, &sqs.SetQueueAttributesInput{QueueUrl: aws.String(q), Attributes: map[string]string{
		"VisibilityTimeout": "45", "DelaySeconds": "6", "MessageRetentionPeriod": "7200", "RedrivePolicy": policy}})
	if err != nil {
		t.Fatal(err)
	}
	a := queueAttrs(t, c, q)
	if a["VisibilityTimeout"] != "45" || a["DelaySeconds"] != "6" || a["MessageRetentionPeriod"] != "7200" {
		t.Fatalf("after SetQueueAttributes: %v", a)
	}
	if !strings.Contains(a["RedrivePolicy"], dlqArn) || !strings.Contains(a["RedrivePolicy"], `"maxReceiveCount":3`) {
		t.Fatalf("RedrivePolicy = %s", a["RedrivePolicy"])
	}
	src, err := c.ListDeadLetterSourceQueues(ctx, &sqs.ListDeadLetterSourceQueuesInput{QueueUrl: aws.String(dlq)})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(src.QueueUrls, []string{q}) {
		t.Fatalf("ListDeadLetterSourceQueues = %v, want [%s]", src.QueueUrls, q)
	}
	// The queue default DelaySeconds delays a send. Six seconds leave the
	// delayed count time to be seen on a loaded machine.
	start := time.Now()
	send(t, c, q, "delayed by the queue")
	if got := receive(t, c, q, 1, 0); len(got) != 0 {
		t.Fatalf("a message delayed by the queue's DelaySeconds 6 was received at once")
	}
	waitDelayed(t, c, q, 1)
	if got := receiveN(t, c, q, 1); time.Since(start) < 5*time.Second {
		t.Fatalf("received %q %v after the send, before the queue's delay of 6 s", *got[0].Body, time.Since(start))
	}
	// Removing the redrive policy.
	if _, err := c.SetQueueAttributes(ctx, &sqs.SetQueueAttributesInput{QueueUrl: aws.String(q),
		Attributes: map[string]string{"RedrivePolicy": ""}}); err != nil {
		t.Fatal(err)
	}
	if a := queueAttrs(t, c, q); a["RedrivePolicy"] != "" {
		t.Fatalf("RedrivePolicy after removing it: %s", a["RedrivePolicy"])
	}
	src, err = c.ListDeadLetterSourceQueues(ctx, &sqs.ListDeadLetterSourceQueuesInput{QueueUrl: aws.String(dlq)})
	if err != nil {
		t.Fatal(err)
	}
	if len(src.QueueUrls) != 0 {
		t.Fatalf("ListDeadLetterSourceQueues after removing the policy: %v", src.QueueUrls)
	}
}

func TestSQSSendMessageBatch(t *testing.T) {
	_, c, ctx := sqsTest(t)
	q := newQueue(t, c, "send-batch", nil)
	out, err := c.SendMessageBatch(ctx, &sqs.SendMessageBatchInput{QueueUrl: aws.String(q), Entries: []types.SendMessageBatchRequestEntry{
		{Id: aws.String("a"), MessageBody: aws.String("one")},
		{Id: aws.String("b"), MessageBody: aws.String("bad \x02")},
		{Id: aws.String("c"), MessageBody: aws.String("three"), MessageAttributes: map[string]types.MessageAttributeValue{
			"K": {DataType: aws.String("String"), StringValue: aws.String("v")}}},
	}})
	if err != nil {
		t.Fatal(err)
	}
	if len(out.Successful) != 2 || len(out.Failed) != 1 {
		t.Fatalf("Successful %d, Failed %d; want 2 and 1: %+v", len(out.Successful), len(out.Failed), out)
	}
	f := out.Failed[0]
	if *f.Id != "b" || !f.SenderFault || *f.Code != "InvalidMessageContents" {
		t.Fatalf("the failed entry: id %s code %s sender fault %v", *f.Id, *f.Code, f.SenderFault)
	}
	ids := map[string]string{}
	for _, s := range out.Successful {
		if *s.MD5OfMessageBody == "" || *s.MessageId == "" {
			t.Fatalf("a successful entry: %+v", s)
		}
		ids[*s.Id] = *s.MessageId
	}
	if ids["a"] == "" || ids["c"] == "" || ids["a"] == ids["c"] {
		t.Fatalf("successful ids: %v", ids)
	}
	got := receiveN(t, c, q, 2)
	for _, m := range got {
		switch *m.Body {
		case "one":
			if *m.MessageId != ids["a"] {
				t.Fatalf("one's MessageId %s, sent %s", *m.MessageId, ids["a"])
			}
		case "three":
			if *m.MessageId != ids["c"] || *m.MessageAttributes["K"].StringValue != "v" {
				t.Fatalf("three: %+v", m)
			}
		default:
			t.Fatalf("unexpected body %q", *m.Body)
		}
	}
}

// ReceiveMessage returns up to ten, with the attributes asked for: All,
// exact names, and a prefix.
func TestSQSReceiveMessageSelection(t *testing.T) {
	_, c, ctx := sqsTest(t)
	q := newQueue(t, c, "recv-select", map[string]string{"VisibilityTimeout": "1"})
	attrs := map[string]types.MessageAttributeValue{
		"app.color": {DataType: aws.String("String"), StringValue: aws.String("red")},
		"app.size":  {DataType: aws.String("Number"), StringValue: aws.String("3")},
		"other":     {DataType: aws.String("String"), StringValue: aws.String("x")},
	}
	var entries []types.SendMessageBatchRequestEntry
	for i := range 10 {
		id := string(rune('a' + i))
		entries = append(entries, types.SendMessageBatchRequestEntry{Id: aws.String(id), MessageBody: aws.String("m-" + id), MessageAttributes: attrs})
	}
	if _, err := c.SendMessageBatch(ctx, &sqs.SendMessageBatchInput{QueueUrl: aws.String(q), Entries: entries}); err != nil {
		t.Fatal(err)
	}
	waitCounts(t, c, q, counts{visible: 10})
	var msgs []types.Message
	deadline := time.Now().Add(10 * time.Second)
	for len(msgs) == 0 || len(msgs) < 10 && time.Now().Before(deadline) {
		// Ten are visible: one receive of ten takes them (a partitioned
		// queue may answer fewer, as SQS may).
		out, err := c.ReceiveMessage(ctx, &sqs.ReceiveMessageInput{QueueUrl: aws.String(q), MaxNumberOfMessages: 10, WaitTimeSeconds: 1})
		if err != nil {
			t.Fatal(err)
		}
		msgs = append(msgs, out.Messages...)
	}
	if len(msgs) != 10 {
		t.Fatalf("received %d, want 10", len(msgs))
	}
	for _, m := range msgs {
		if m.MessageAttributes != nil || m.Attributes != nil {
			t.Fatalf("no attributes asked for, got %v %v", m.MessageAttributes, m.Attributes)
		}
	}
	for _, tc := range []struct {
		names []string
		want  []string
		sys   []types.MessageSystemAttributeName
		sysW  []string
	}{
		{[]string{"All"}, []string{"app.color", "app.size", "other"}, []types.MessageSystemAttributeName{"All"},
			[]string{"ApproximateFirstReceiveTimestamp", "ApproximateReceiveCount", "SenderId", "SentTimestamp"}},
		{[]string{"other"}, []string{"other"}, []types.MessageSystemAttributeName{"SentTimestamp"}, []string{"SentTimestamp"}},
		{[]string{"app.*"}, []string{"app.color", "app.size"}, nil, nil},
		{[]string{".*"}, []string{"app.color", "app.size", "other"}, nil, nil},
	} {
		// The visibility timeout is 1 s: the messages come back.
		out, err := c.ReceiveMessage(ctx, &sqs.ReceiveMessageInput{QueueUrl: aws.String(q), MaxNumberOfMessages: 1, WaitTimeSeconds: 5,
			MessageAttributeNames: tc.names, MessageSystemAttributeNames: tc.sys})
		if err != nil {
			t.Fatal(err)
		}
		if len(out.Messages) != 1 {
			t.Fatalf("%v: received %d messages", tc.names, len(out.Messages))
		}
		m := out.Messages[0]
		var names []string
		for k := range m.MessageAttributes {
			names = append(names, k)
		}
		slices.Sort(names)
		if !slices.Equal(names, tc.want) {
			t.Errorf("MessageAttributeNames %v: got %v, want %v", tc.names, names, tc.want)
		}
		var sys []string
		for k := range m.Attributes {
			sys = append(sys, k)
		}
		slices.Sort(sys)
		if !slices.Equal(sys, tc.sysW) {
			t.Errorf("MessageSystemAttributeNames %v: got %v, want %v", tc.sys, sys, tc.sysW)
		}
	}
}

func TestSQSDeleteMessageBatch(t *testing.T) {
	_, c, ctx := sqsTest(t)
	q := newQueue(t, c, "del-batch", map[string]string{"VisibilityTimeout": "60"})
	for _, b := range []string{"x", "y", "z"} {
		send(t, c, q, b)
	}
	got := receiveN(t, c, q, 3)
	out, err := c.DeleteMessageBatch(ctx, &sqs.DeleteMessageBatchInput{QueueUrl: aws.String(q), Entries: []types.DeleteMessageBatchRequestEntry{
		{Id: aws.String("0"), ReceiptHandle: got[0].ReceiptHandle},
		{Id: aws.String("1"), ReceiptHandle: got[1].ReceiptHandle},
		{Id: aws.String("bad"), ReceiptHandle: aws.String("not-a-handle")},
	}})
	if err != nil {
		t.Fatal(err)
	}
	if len(out.Successful) != 2 || len(out.Failed) != 1 || *out.Failed[0].Id != "bad" || *out.Failed[0].Code != "ReceiptHandleIsInvalid" || !out.Failed[0].SenderFault {
		t.Fatalf("DeleteMessageBatch: %+v", out)
	}
	waitCounts(t, c, q, counts{notVisible: 1})
	deleteMsg(t, c, q, got[2])
	waitCounts(t, c, q, counts{})
}

func TestSQSPurgeQueue(t *testing.T) {
	_, c, ctx := sqsTest(t)
	q := newQueue(t, c, "purge", nil)
	for range 4 {
		send(t, c, q, "p")
	}
	waitCounts(t, c, q, counts{visible: 4})
	if _, err := c.PurgeQueue(ctx, &sqs.PurgeQueueInput{QueueUrl: aws.String(q)}); err != nil {
		t.Fatal(err)
	}
	waitCounts(t, c, q, counts{})
	if got := receive(t, c, q, 10, 0); len(got) != 0 {
		t.Fatalf("received %d after a purge", len(got))
	}
	send(t, c, q, "after")
	_, err := c.PurgeQueue(ctx, &sqs.PurgeQueueInput{QueueUrl: aws.String(q)})
	wantTyped[*types.PurgeQueueInProgress](t, "a second purge within 60 s", err)
	if got := receiveN(t, c, q, 1); *got[0].Body != "after" {
		t.Fatalf("after a refused purge: %q", *got[0].Body)
	}
}

func TestSQSAddPermission(t *testing.T) {
	_, c, ctx := sqsTest(t)
	q := newQueue(t, c, "perm", nil)
	_, err := c.AddPermission(ctx, &sqs.AddPermissionInput{QueueUrl: aws.String(q), Label: aws.String("l"),
		AWSAccountIds: []string{"111122223333"}, Actions: []string{"SendMessage"}})
	wantTyped[*types.UnsupportedOperation](t, "AddPermission", err)
	_, err = c.RemovePermission(ctx, &sqs.RemovePermissionInput{QueueUrl: aws.String(q), Label: aws.String("l")})
	wantTyped[*types.UnsupportedOperation](t, "RemovePermission", err)
}

// StartMessageMoveTask moves a dead-letter queue's messages back; a
// slow task can be listed and cancelled.
func TestSQSMessageMoveTasks(t *testing.T) {
	_, c, ctx := sqsTest(t)
	src := newQueue(t, c, "move-src", nil)
	dlq := newQueue(t, c, "move-dlq", nil)
	dlqArn := queueAttrs(t, c, dlq)["QueueArn"]
	if _, err := c.SetQueueAttributes(ctx, &sqs.SetQueueAttributesInput{QueueUrl: aws.String(src), Attributes: map[string]string{
		"RedrivePolicy": `{"deadLetterTargetArn":"` + dlqArn + `","maxReceiveCount":"5"}`}}); err != nil {
		t.Fatal(err)
	}
	for range 6 {
		send(t, c, dlq, "dead")
	}
	waitCounts(t, c, dlq, counts{visible: 6})
	// One a second: still running when cancelled.
	st, err := c.StartMessageMoveTask(ctx, &sqs.StartMessageMoveTaskInput{SourceArn: aws.String(dlqArn), MaxNumberOfMessagesPerSecond: aws.Int32(1)})
	if err != nil {
		t.Fatal(err)
	}
	ls, err := c.ListMessageMoveTasks(ctx, &sqs.ListMessageMoveTasksInput{SourceArn: aws.String(dlqArn)})
	if err != nil {
		t.Fatal(err)
	}
	if len(ls.Results) != 1 || *ls.Results[0].Status != "RUNNING" || *ls.Results[0].TaskHandle != *st.TaskHandle ||
		*ls.Results[0].ApproximateNumberOfMessagesToMove != 6 {
		t.Fatalf("ListMessageMoveTasks while running: %+v", ls.Results)
	}
	if _, err := c.CancelMessageMoveTask(ctx, &sqs.CancelMessageMoveTaskInput{TaskHandle: st.TaskHandle}); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		ls, err = c.ListMessageMoveTasks(ctx, &sqs.ListMessageMoveTasksInput{SourceArn: aws.String(dlqArn)})
		if err != nil {
			t.Fatal(err)
		}
		if *ls.Results[0].Status == "CANCELLED" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("a cancelled task is %s after 10s", *ls.Results[0].Status)
		}
		time.Sleep(50 * time.Millisecond)
	}
	moved := int(ls.Results[0].ApproximateNumberOfMessagesMoved)
	if moved >= 6 {
		t.Fatalf("a task of one a second moved %d before its cancel", moved)
	}
	_, err = c.CancelMessageMoveTask(ctx, &sqs.CancelMessageMoveTaskInput{TaskHandle: st.TaskHandle})
	wantCode(t, "cancelling a cancelled task", err, "UnsupportedOperation", "AWS.SimpleQueueService.UnsupportedOperation")
	// Now all of the rest, at full speed.
	if _, err := c.StartMessageMoveTask(ctx, &sqs.StartMessageMoveTaskInput{SourceArn: aws.String(dlqArn)}); err != nil {
		t.Fatal(err)
	}
	deadline = time.Now().Add(10 * time.Second)
	for {
		ls, err = c.ListMessageMoveTasks(ctx, &sqs.ListMessageMoveTasksInput{SourceArn: aws.String(dlqArn), MaxResults: aws.Int32(10)})
		if err != nil {
			t.Fatal(err)
		}
		if len(ls.Results) != 2 {
			t.Fatalf("two tasks started, %d listed", len(ls.Results))
		}
		if *ls.Results[0].Status == "COMPLETED" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the move task is %s after 10s", *ls.Results[0].Status)
		}
		time.Sleep(50 * time.Millisecond)
	}
	waitCounts(t, c, dlq, counts{})
	waitCounts(t, c, src, counts{visible: 6})
	for _, m := range receiveN(t, c, src, 6) {
		if *m.Body != "dead" {
			t.Fatalf("moved body %q", *m.Body)
		}
	}
	_, err = c.ListMessageMoveTasks(ctx, &sqs.ListMessageMoveTasksInput{SourceArn: aws.String("arn:aws:sqs:us-east-1:000000000000:nope")})
	wantTyped[*types.ResourceNotFoundException](t, "ListMessageMoveTasks of a missing queue", err)
	_, err = c.StartMessageMoveTask(ctx, &sqs.StartMessageMoveTaskInput{SourceArn: aws.String(queueAttrs(t, c, src)["QueueArn"])})
	wantCode(t, "StartMessageMoveTask from a queue that is no dead-letter queue", err, "InvalidParameterValue")
}
