package awsmod

import (
	"encoding/json"
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sns"
	snstypes "github.com/aws/aws-sdk-go-v2/service/sns/types"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	sqstypes "github.com/aws/aws-sdk-go-v2/service/sqs/types"
)

// snsFixture is a node with an SNS topic and SQS queues to subscribe.
type snsFixture struct {
	t     *testing.T
	sns   *sns.Client
	sqs   *sqs.Client
	topic string // its ARN
}

func newSNSFixture(t *testing.T, topic string) *snsFixture {
	n := startNode(t)
	f := &snsFixture{t: t, sns: snsClient(n, "AKIDEXAMPLE", "secret"), sqs: sqsClient(n, "AKIDEXAMPLE", "secret")}
	ct, err := f.sns.CreateTopic(ctxT(t), &sns.CreateTopicInput{Name: aws.String(topic)})
	if err != nil {
		t.Fatal(err)
	}
	if want := "arn:aws:sns:us-east-1:000000000000:" + topic; *ct.TopicArn != want {
		t.Fatalf("TopicArn = %s, want %s", *ct.TopicArn, want)
	}
	f.topic = *ct.TopicArn
	return f
}

// queue creates a queue and answers its URL and ARN.
func (f *snsFixture) queue(name string) (url, arn string) {
	ctx := ctxT(f.t)
	cq, err := f.sqs.CreateQueue(ctx, &sqs.CreateQueueInput{QueueName: aws.String(name)})
	if err != nil {
		f.t.Fatal(err)
	}
	ga, err := f.sqs.GetQueueAttributes(ctx, &sqs.GetQueueAttributesInput{QueueUrl: cq.QueueUrl,
		AttributeNames: []sqstypes.QueueAttributeName{sqstypes.QueueAttributeNameQueueArn}})
	if err != nil {
		f.t.Fatal(err)
	}
	return *cq.QueueUrl, ga.Attributes["QueueArn"]
}

func (f *snsFixture) subscribe(queueARN string, attrs map[string]string) string {
	s, err := f.sns.Subscribe(ctxT(f.t), &sns.SubscribeInput{TopicArn: aws.String(f.topic), Protocol: aws.String("sqs"),
		Endpoint: aws.String(queueARN), Attributes: attrs, ReturnSubscriptionArn: true})
	if err != nil {
		f.t.Fatal(err)
	}
	return *s.SubscriptionArn
}

func (f *snsFixture) publish(body, store string) string {
	p, err := f.sns.Publish(ctxT(f.t), &sns.PublishInput{TopicArn: aws.String(f.topic), Message: aws.String(body),
		Subject: aws.String("about " + body),
		MessageAttributes: map[string]snstypes.MessageAttributeValue{
			"Store": {DataType: aws.String("String"), StringValue: aws.String(store)},
		}})
	if err != nil {
		f.t.Fatal(err)
	}
	return *p.MessageId
}

// receive takes messages from a queue until it has want of them or the
// wait is over, deleting each.
func (f *snsFixture) receive(url string, want int, wait time.Duration) []sqstypes.Message {
	ctx := ctxT(f.t)
	var got []sqstypes.Message
	deadline := time.Now().Add(wait)
	for len(got) < want && time.Now().Before(deadline) {
		r, err := f.sqs.ReceiveMessage(ctx, &sqs.ReceiveMessageInput{QueueUrl: aws.String(url), MaxNumberOfMessages: 10,
			WaitTimeSeconds: 1, MessageAttributeNames: []string{"All"}})
		if err != nil {
			f.t.Fatal(err)
		}
		for _, m := range r.Messages {
			got = append(got, m)
			if _, err := f.sqs.DeleteMessage(ctx, &sqs.DeleteMessageInput{QueueUrl: aws.String(url), ReceiptHandle: m.ReceiptHandle}); err != nil {
				f.t.Fatal(err)
			}
		}
	}
	return got
}

func bodies(ms []sqstypes.Message) []string {
	var out []string
	for _, m := range ms {
		out = append(out, *m.Body)
	}
	slices.Sort(out)
	return out
}

// A raw subscription with a filter policy on an attribute gets only the
// matching messages, their bodies and attributes as published; after
// Unsubscribe it gets nothing more.
func TestSNSRawDeliveryWithFilter(t *testing.T) {
	f := newSNSFixture(t, "events")
	url, arn := f.queue("north-only")
	sub := f.subscribe(arn, map[string]string{"RawMessageDelivery": "true", "FilterPolicy": `{"Store":["north"]}`})
	if sub != f.topic+":north-only" {
		t.Fatalf("SubscriptionArn = %s", sub)
	}
	// Subscribing again with the same attributes answers the same ARN;
	// with others, InvalidParameter.
	if again := f.subscribe(arn, map[string]string{"RawMessageDelivery": "true", "FilterPolicy": `{"Store":["north"]}`}); again != sub {
		t.Fatalf("a repeated Subscribe answered %s, want %s", again, sub)
	}
	_, err := f.sns.Subscribe(ctxT(t), &sns.SubscribeInput{TopicArn: aws.String(f.topic), Protocol: aws.String("sqs"),
		Endpoint: aws.String(arn), Attributes: map[string]string{"RawMessageDelivery": "true"}})
	var ip *snstypes.InvalidParameterException
	if !errors.As(err, &ip) {
		t.Fatalf("Subscribe again without the filter: %v, want InvalidParameter", err)
	}
	f.publish("one", "north")
	f.publish("two", "south")
	f.publish("three", "north")
	got := f.receive(url, 2, 20*time.Second)
	if b := bodies(got); !slices.Equal(b, []string{"one", "three"}) {
		t.Fatalf("the raw queue got %q, want one and three", b)
	}
	for _, m := range got {
		if a := m.MessageAttributes["Store"]; a.StringValue == nil || *a.StringValue != "north" || *a.DataType != "String" {
			t.Fatalf("Store came through as %+v", a)
		}
	}
	if extra := f.receive(url, 1, 2*time.Second); len(extra) != 0 {
		t.Fatalf("the filter let through %q", bodies(extra))
	}

	ctx := ctxT(t)
	ga, err := f.sns.GetSubscriptionAttributes(ctx, &sns.GetSubscriptionAttributesInput{SubscriptionArn: aws.String(sub)})
	if err != nil {
		t.Fatal(err)
	}
	if a := ga.Attributes; a["Endpoint"] != arn || a["TopicArn"] != f.topic || a["Protocol"] != "sqs" ||
		a["FilterPolicyScope"] != "MessageAttributes" || a["RawMessageDelivery"] != "true" {
		t.Fatalf("subscription attributes %v", a)
	}
	ls, err := f.sns.ListSubscriptionsByTopic(ctx, &sns.ListSubscriptionsByTopicInput{TopicArn: aws.String(f.topic)})
	if err != nil {
		t.Fatal(err)
	}
	if len(ls.Subscriptions) != 1 || *ls.Subscriptions[0].SubscriptionArn != sub || *ls.Subscriptions[0].Endpoint != arn {
		t.Fatalf("ListSubscriptionsByTopic: %+v", ls.Subscriptions)
	}
	all, err := f.sns.ListSubscriptions(ctx, &sns.ListSubscriptionsInput{})
	if err != nil {
		t.Fatal(err)
	}
	if len(all.Subscriptions) != 1 || *all.Subscriptions[0].TopicArn != f.topic {
		t.Fatalf("ListSubscriptions: %+v", all.Subscriptions)
	}

	if _, err := f.sns.SetSubscriptionAttributes(ctx, &sns.SetSubscriptionAttributesInput{SubscriptionArn: aws.String(sub),
		AttributeName: aws.String("FilterPolicy"), AttributeValue: aws.String(`{"Store":[{"prefix":"so"}]}`)}); err != nil {
		t.Fatal(err)
	}
	f.publish("five", "north")
	f.publish("six", "south")
	if b := bodies(f.receive(url, 2, 4*time.Second)); !slices.Equal(b, []string{"six"}) {
		t.Fatalf("after the new filter the raw queue got %q, want six", b)
	}

	if _, err := f.sns.Unsubscribe(ctx, &sns.UnsubscribeInput{SubscriptionArn: aws.String(sub)}); err != nil {
		t.Fatal(err)
	}
	f.publish("four", "north")
	if late := f.receive(url, 1, 3*time.Second); len(late) != 0 {
		t.Fatalf("an unsubscribed queue got %q", bodies(late))
	}
	_, err = f.sns.Unsubscribe(ctx, &sns.UnsubscribeInput{SubscriptionArn: aws.String(sub)})
	var nf *snstypes.NotFoundException
	if !errors.As(err, &nf) {
		t.Fatalf("a second Unsubscribe: %v (%T), want NotFound", err, err)
	}
}

// envelope is SNS's notification as an SQS subscriber reads it.
type envelope struct {
	Type              string
	MessageId         string
	TopicArn          string
	Subject           string
	Message           string
	Timestamp         string
	SignatureVersion  string
	MessageAttributes map[string]struct{ Type, Value string }
}

// A subscription without RawMessageDelivery gets SNS's JSON envelope,
// naming the MessageId Publish answered.
func TestSNSEnvelopeDelivery(t *testing.T) {
	f := newSNSFixture(t, "news")
	url, arn := f.queue("all-news")
	sub := f.subscribe(arn, nil)
	ids := map[string]string{}
	for _, b := range []string{"a", "b", "c"} {
		ids[b] = f.publish(b, "north")
	}
	got := f.receive(url, 3, 20*time.Second)
	if len(got) != 3 {
		t.Fatalf("the queue got %d messages, want 3", len(got))
	}
	for _, m := range got {
		var env envelope
		if err := json.Unmarshal([]byte(*m.Body), &env); err != nil {
			t.Fatalf("not an envelope: %s", *m.Body)
		}
		if env.Type != "Notification" || env.TopicArn != f.topic || ids[env.Message] == "" ||
			env.MessageId != ids[env.Message] || env.Subject != "about "+env.Message || env.Timestamp == "" {
			t.Fatalf("envelope %+v, published ids %v", env, ids)
		}
		if a := env.MessageAttributes["Store"]; a.Type != "String" || a.Value != "north" {
			t.Fatalf("envelope attributes %+v", env.MessageAttributes)
		}
	}

	// RawMessageDelivery turns the envelope off.
	ctx := ctxT(t)
	raw := func() string {
		ga, err := f.sns.GetSubscriptionAttributes(ctx, &sns.GetSubscriptionAttributesInput{SubscriptionArn: aws.String(sub)})
		if err != nil {
			t.Fatal(err)
		}
		return ga.Attributes["RawMessageDelivery"]
	}
	if r := raw(); r != "false" {
		t.Fatalf("RawMessageDelivery = %q, want false", r)
	}
	if _, err := f.sns.SetSubscriptionAttributes(ctx, &sns.SetSubscriptionAttributesInput{SubscriptionArn: aws.String(sub),
		AttributeName: aws.String("RawMessageDelivery"), AttributeValue: aws.String("true")}); err != nil {
		t.Fatal(err)
	}
	if r := raw(); r != "true" {
		t.Fatalf("RawMessageDelivery = %q after setting it, want true", r)
	}
	f.publish("d", "north")
	if b := bodies(f.receive(url, 1, 20*time.Second)); !slices.Equal(b, []string{"d"}) {
		t.Fatalf("after RawMessageDelivery=true the queue got %q, want d", b)
	}
}

// Publishing to a missing topic and subscribing an http endpoint are
// refused with SNS's typed errors.
func TestSNSErrors(t *testing.T) {
	f := newSNSFixture(t, "t")
	ctx := ctxT(t)
	_, err := f.sns.Publish(ctx, &sns.PublishInput{TopicArn: aws.String("arn:aws:sns:us-east-1:000000000000:nope"), Message: aws.String("x")})
	var nf *snstypes.NotFoundException
	if !errors.As(err, &nf) {
		t.Fatalf("Publish to a missing topic: %v (%T), want NotFound", err, err)
	}
	_, err = f.sns.Subscribe(ctx, &sns.SubscribeInput{TopicArn: aws.String(f.topic), Protocol: aws.String("http"), Endpoint: aws.String("http://example.com/hook")})
	var ip *snstypes.InvalidParameterException
	if !errors.As(err, &ip) {
		t.Fatalf("Subscribe http: %v (%T), want InvalidParameter", err, err)
	}
	_, err = f.sns.Subscribe(ctx, &sns.SubscribeInput{TopicArn: aws.String(f.topic), Protocol: aws.String("sqs"),
		Endpoint: aws.String("arn:aws:sqs:us-east-1:000000000000:nope"), Attributes: map[string]string{"RawMessageDelivery": "true"}})
	if !errors.As(err, &nf) {
		t.Fatalf("Subscribe a missing queue: %v (%T), want NotFound", err, err)
	}
	_, err = f.sns.PublishBatch(ctx, &sns.PublishBatchInput{TopicArn: aws.String(f.topic), PublishBatchRequestEntries: []snstypes.PublishBatchRequestEntry{
		{Id: aws.String("x"), Message: aws.String("1")}, {Id: aws.String("x"), Message: aws.String("2")}}})
	var nd *snstypes.BatchEntryIdsNotDistinctException
	if !errors.As(err, &nd) {
		t.Fatalf("PublishBatch with one Id twice: %v (%T), want BatchEntryIdsNotDistinct", err, err)
	}
	pb, err := f.sns.PublishBatch(ctx, &sns.PublishBatchInput{TopicArn: aws.String(f.topic), PublishBatchRequestEntries: []snstypes.PublishBatchRequestEntry{
		{Id: aws.String("ok"), Message: aws.String("1")}, {Id: aws.String("bad"), Message: aws.String("2"), Subject: aws.String("a\nb")}}})
	if err != nil {
		t.Fatal(err)
	}
	if len(pb.Successful) != 1 || *pb.Successful[0].Id != "ok" || *pb.Successful[0].MessageId == "" ||
		len(pb.Failed) != 1 || *pb.Failed[0].Id != "bad" || *pb.Failed[0].Code != "InvalidParameter" || !pb.Failed[0].SenderFault {
		t.Fatalf("PublishBatch: %+v %+v", pb.Successful, pb.Failed)
	}
}

// Topics: CreateTopic is idempotent, ListTopics pages, attributes and
// tags are kept (aws_attributes and tags of the topic record).
func TestSNSTopicsAttributesTags(t *testing.T) {
	f := newSNSFixture(t, "first")
	ctx := ctxT(t)
	again, err := f.sns.CreateTopic(ctx, &sns.CreateTopicInput{Name: aws.String("first")})
	if err != nil || *again.TopicArn != f.topic {
		t.Fatalf("CreateTopic again: %v %v", again, err)
	}
	lt, err := f.sns.ListTopics(ctx, &sns.ListTopicsInput{})
	if err != nil {
		t.Fatal(err)
	}
	if len(lt.Topics) != 1 || *lt.Topics[0].TopicArn != f.topic {
		t.Fatalf("ListTopics: %+v", lt.Topics)
	}
	if _, err := f.sns.SetTopicAttributes(ctx, &sns.SetTopicAttributesInput{TopicArn: aws.String(f.topic),
		AttributeName: aws.String("DisplayName"), AttributeValue: aws.String("First")}); err != nil {
		t.Fatal(err)
	}
	ga, err := f.sns.GetTopicAttributes(ctx, &sns.GetTopicAttributesInput{TopicArn: aws.String(f.topic)})
	if err != nil {
		t.Fatal(err)
	}
	if a := ga.Attributes; a["DisplayName"] != "First" || a["TopicArn"] != f.topic || a["SubscriptionsConfirmed"] != "0" {
		t.Fatalf("topic attributes %v", a)
	}
	if _, err := f.sns.TagResource(ctx, &sns.TagResourceInput{ResourceArn: aws.String(f.topic),
		Tags: []snstypes.Tag{{Key: aws.String("team"), Value: aws.String("pay")}, {Key: aws.String("env"), Value: aws.String("dev")}}}); err != nil {
		t.Fatal(err)
	}
	if _, err := f.sns.UntagResource(ctx, &sns.UntagResourceInput{ResourceArn: aws.String(f.topic), TagKeys: []string{"env"}}); err != nil {
		t.Fatal(err)
	}
	tags, err := f.sns.ListTagsForResource(ctx, &sns.ListTagsForResourceInput{ResourceArn: aws.String(f.topic)})
	if err != nil {
		t.Fatal(err)
	}
	if len(tags.Tags) != 1 || *tags.Tags[0].Key != "team" || *tags.Tags[0].Value != "pay" {
		t.Fatalf("tags %+v", tags.Tags)
	}
	if _, err := f.sns.DeleteTopic(ctx, &sns.DeleteTopicInput{TopicArn: aws.String(f.topic)}); err != nil {
		t.Fatal(err)
	}
	_, err = f.sns.GetTopicAttributes(ctx, &sns.GetTopicAttributesInput{TopicArn: aws.String(f.topic)})
	var nf *snstypes.NotFoundException
	if !errors.As(err, &nf) {
		t.Fatalf("GetTopicAttributes of a deleted topic: %v (%T), want NotFound", err, err)
	}
}

// A FIFO topic delivers to a FIFO queue in group order and deduplicates
// by content: a repeat answers the first publish's MessageId and is not
// delivered again.
func TestSNSFIFO(t *testing.T) {
	n := startNode(t)
	f := &snsFixture{t: t, sns: snsClient(n, "AKIDEXAMPLE", "secret"), sqs: sqsClient(n, "AKIDEXAMPLE", "secret")}
	ctx := ctxT(t)
	_, err := f.sns.CreateTopic(ctx, &sns.CreateTopicInput{Name: aws.String("orders.fifo")})
	var ip *snstypes.InvalidParameterException
	if !errors.As(err, &ip) {
		t.Fatalf("a .fifo topic without FifoTopic: %v, want InvalidParameter", err)
	}
	ct, err := f.sns.CreateTopic(ctx, &sns.CreateTopicInput{Name: aws.String("orders.fifo"),
		Attributes: map[string]string{"FifoTopic": "true", "ContentBasedDeduplication": "true"}})
	if err != nil {
		t.Fatal(err)
	}
	f.topic = *ct.TopicArn
	cq, err := f.sqs.CreateQueue(ctx, &sqs.CreateQueueInput{QueueName: aws.String("audit.fifo"),
		Attributes: map[string]string{"FifoQueue": "true"}})
	if err != nil {
		t.Fatal(err)
	}
	f.subscribe("arn:aws:sqs:us-east-1:000000000000:audit.fifo", map[string]string{"RawMessageDelivery": "true"})
	var ids []string
	for _, b := range []string{"1", "2", "1"} {
		p, err := f.sns.Publish(ctx, &sns.PublishInput{TopicArn: aws.String(f.topic), Message: aws.String(b), MessageGroupId: aws.String("g")})
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, *p.MessageId)
	}
	if ids[0] != ids[2] || ids[0] == ids[1] {
		t.Fatalf("MessageIds %v: a content repeat answers the first's", ids)
	}
	got := f.receive(*cq.QueueUrl, 3, 6*time.Second)
	var order []string
	for _, m := range got {
		order = append(order, *m.Body)
	}
	if !slices.Equal(order, []string{"1", "2"}) {
		t.Fatalf("the FIFO queue got %q, want 1 then 2", order)
	}
	_, err = f.sns.Publish(ctx, &sns.PublishInput{TopicArn: aws.String(f.topic), Message: aws.String("x")})
	if !errors.As(err, &ip) {
		t.Fatalf("a FIFO publish without a group: %v, want InvalidParameter", err)
	}
}
