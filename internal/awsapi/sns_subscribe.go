package awsapi

import (
	"encoding/json"
	"net/http"
	"reflect"
	"slices"
	"strings"
)

// Subscriptions (docs/aws.md, "SNS"): an SQS subscription is a fan-out
// link from the SNS topic to the queue's topic, so delivery has the
// fan-out's guarantees (a cursor per parent partition, committed before
// it advances, never a gap). The subscription ARN is the topic's ARN and
// the queue's name, "<topic ARN>:<queue>": it names the link and is read
// back without any storage. A FilterPolicy is the link's filter, and
// RawMessageDelivery=false the link's SNS envelope.

// linkView is one link of a /v1 children listing.
type linkView struct {
	Name        string          `json:"name"`
	Child       string          `json:"child"`
	Filter      json.RawMessage `json:"filter"`
	FilterScope string          `json:"filter_scope"`
	Envelope    *envelopeView   `json:"envelope"`
	Remote      json.RawMessage `json:"remote"`
}

// envelopeView is a link's envelope option: the records it copies are
// wrapped in SNS's JSON notification.
type envelopeView struct {
	Format   string `json:"format"`
	TopicARN string `json:"topic_arn"`
}

func (l *linkView) name() string {
	if l.Name != "" {
		return l.Name
	}
	return l.Child
}

// hasFilter reports a link with a filter.
func (l *linkView) hasFilter() bool {
	return len(l.Filter) > 0 && string(l.Filter) != "null"
}

// links lists topic's subscriptions: its local links (a remote link is
// no SQS queue of this node).
func (e *Edge) links(c *call, topic string) ([]linkView, error) {
	a, err := e.v1(c, http.MethodGet, "/v1/topics/"+topic+"/children", nil, nil)
	if err != nil {
		return nil, err
	}
	if !a.ok() {
		return nil, a.refusal(c.service, errNotFound)
	}
	var ans struct {
		Children []linkView `json:"children"`
	}
	if err := a.decode(&ans); err != nil {
		return nil, err
	}
	out := ans.Children[:0]
	for _, l := range ans.Children {
		if (len(l.Remote) == 0 || string(l.Remote) == "null") && validQueueName(l.name()) {
			out = append(out, l)
		}
	}
	slices.SortFunc(out, func(x, y linkView) int { return strings.Compare(x.name(), y.name()) })
	return out, nil
}

// link finds one subscription's link.
func (e *Edge) link(c *call, topic, queue string) (*linkView, error) {
	ls, err := e.links(c, topic)
	if err != nil {
		return nil, err
	}
	for i := range ls {
		if ls[i].name() == queue {
			return &ls[i], nil
		}
	}
	return nil, errNotFound.f("Subscription does not exist: queue %s is not subscribed to topic %s.", queue, topic)
}

// subscriptionARN names the link from topic to queue.
func (e *Edge) subscriptionARN(topic, queue string) string {
	return e.arn(serviceSNS, topic) + ":" + queue
}

// subscriptionOf reads a SubscriptionArn back into its topic and queue.
func (e *Edge) subscriptionOf(p params) (topic, queue string, err error) {
	arn, err := snsRequired(p, "SubscriptionArn")
	if err != nil {
		return "", "", err
	}
	topic, queue, ok := e.parseSubscriptionARN(arn)
	if !ok {
		return "", "", errSNSInvalidParam.f("Invalid parameter: SubscriptionArn Reason: %q is not a subscription ARN of account %s in %s.", arn, e.account, e.region)
	}
	return topic, queue, nil
}

func (e *Edge) parseSubscriptionARN(arn string) (topic, queue string, ok bool) {
	rest, ok := strings.CutPrefix(arn, "arn:aws:sns:"+e.region+":"+e.account+":")
	if !ok {
		return "", "", false
	}
	topic, queue, ok = strings.Cut(rest, ":")
	if !ok || !validTopicName(topic) || !validQueueName(queue) {
		return "", "", false
	}
	return topic, queue, true
}

// subscription is how a client asks a subscription to deliver.
type subscription struct {
	raw       bool
	policy    any    // the FilterPolicy as SNS has it; nil for none
	bodyScope bool   // FilterPolicyScope MessageBody
	hasScope  bool   // FilterPolicyScope was given
	hasPolicy bool   // FilterPolicy was given ("" or "{}" removes it)
	hasRaw    bool   // RawMessageDelivery was given
	scopeName string // as given
}

// readSubscriptionAttribute reads one subscription attribute into s.
func readSubscriptionAttribute(s *subscription, k, v string) error {
	switch k {
	case "RawMessageDelivery":
		switch strings.ToLower(v) {
		case "true":
			s.raw = true
		case "false":
			s.raw = false
		default:
			return errSNSInvalidParam.f("Invalid parameter: Attributes Reason: RawMessageDelivery must be true or false, got %q.", v)
		}
		s.hasRaw = true
	case "FilterPolicy":
		s.hasPolicy = true
		s.policy = nil
		if strings.TrimSpace(v) == "" {
			return nil
		}
		var p any
		if err := json.Unmarshal([]byte(v), &p); err != nil {
			return errSNSInvalidParam.f("Invalid parameter: FilterPolicy: failed to parse JSON: %v", err)
		}
		m, ok := p.(map[string]any)
		if !ok {
			return errSNSInvalidParam.f("Invalid parameter: FilterPolicy: the policy must be a JSON object.")
		}
		if len(m) > 0 {
			s.policy = m
		}
	case "FilterPolicyScope":
		switch v {
		case "MessageAttributes":
			s.bodyScope = false
		case "MessageBody":
			s.bodyScope = true
		default:
			return errSNSInvalidParam.f("Invalid parameter: Attributes Reason: FilterPolicyScope must be MessageAttributes or MessageBody, got %q.", v)
		}
		s.hasScope, s.scopeName = true, v
	case "DeliveryPolicy", "RedrivePolicy", "SubscriptionRoleArn", "ReplayPolicy":
		return errSNSInvalidParam.f("Invalid parameter: Attributes Reason: %s is not supported: Narad delivers to SQS queues through fan-out links, which retry until the copy is made and keep no dead letters of their own.", k)
	default:
		return errSNSInvalidParam.f("Invalid parameter: Attributes Reason: unknown subscription attribute %s.", k)
	}
	return nil
}

// filterFields is the policy as a link's filter: the /v1 filter and its
// scope. In the MessageAttributes scope the policy's keys are attribute
// names, which the edge stores as lower-case header names.
func filterFields(policy any, bodyScope bool) (filter any, scope string, err error) {
	if bodyScope {
		return policy, "payload", nil
	}
	f, err := lowerKeys(policy, "FilterPolicy")
	return f, "headers", err
}

// lowerKeys lower-cases the attribute names of a MessageAttributes
// policy: its top-level keys and those of its "$or" branches.
func lowerKeys(policy any, at string) (any, error) {
	m, ok := policy.(map[string]any)
	if !ok {
		return policy, nil
	}
	out := make(map[string]any, len(m))
	for k, v := range m {
		if k == "$or" {
			if branches, ok := v.([]any); ok {
				lb := make([]any, len(branches))
				for i, b := range branches {
					var err error
					if lb[i], err = lowerKeys(b, at+".$or"); err != nil {
						return nil, err
					}
				}
				v = lb
			}
		}
		low := strings.ToLower(k)
		if _, dup := out[low]; dup {
			return nil, errSNSInvalidParam.f("Invalid parameter: %s: the keys %q and another differ only in case; Narad keeps message attributes as headers, whose names are lower case.", at, k)
		}
		out[low] = v
	}
	return out, nil
}

// envelope is the link option that wraps copies in SNS's notification.
func (e *Edge) envelope(topic string) map[string]any {
	return map[string]any{"format": "sns", "topic_arn": e.arn(serviceSNS, topic)}
}

func (e *Edge) subscribe(c *call) (map[string]any, error) {
	topic, err := e.topicOf(c.p, "TopicArn")
	if err != nil {
		return nil, err
	}
	proto, err := snsRequired(c.p, "Protocol")
	if err != nil {
		return nil, err
	}
	if proto != "sqs" {
		return nil, errSNSInvalidParam.f("Invalid parameter: Protocol Reason: %s is not supported: Narad delivers SNS only to SQS queues for now.", proto)
	}
	endpoint, err := snsRequired(c.p, "Endpoint")
	if err != nil {
		return nil, err
	}
	queue, ok := e.nameOfARN(serviceSQS, endpoint)
	if !ok || !validQueueName(queue) {
		return nil, errSNSInvalidParam.f("Invalid parameter: SQS endpoint ARN Reason: %q is not a queue ARN of account %s in %s.", endpoint, e.account, e.region)
	}
	if isFIFO(queue) && !isFIFO(topic) {
		return nil, errSNSInvalidParam.f("Invalid parameter: Invalid parameter: Endpoint Reason: FIFO SQS Queues can not be subscribed to standard SNS topics")
	}
	attrs, err := c.p.stringMap("Attributes")
	if err != nil {
		return nil, err
	}
	var s subscription
	for _, k := range sortedKeys(attrs) {
		if err := readSubscriptionAttribute(&s, k, attrs[k]); err != nil {
			return nil, err
		}
	}
	if _, err := e.topic(c, topic, errNotFound); err != nil {
		return nil, err
	}
	body := map[string]any{"child": queue}
	if s.policy != nil {
		f, scope, err := filterFields(s.policy, s.bodyScope)
		if err != nil {
			return nil, err
		}
		body["filter"], body["filter_scope"] = f, scope
	}
	if !s.raw {
		body["envelope"] = e.envelope(topic)
	}
	a, err := e.v1(c, http.MethodPost, "/v1/topics/"+topic+"/children", nil, body)
	if err != nil {
		return nil, err
	}
	arn := e.subscriptionARN(topic, queue)
	switch {
	case a.status == http.StatusNotFound:
		return nil, errNotFound.f("Invalid parameter: Endpoint Reason: the queue %s does not exist.", queue)
	case a.status == http.StatusConflict:
		if err := e.sameSubscription(c, topic, queue, body); err != nil {
			return nil, err
		}
	case !a.ok():
		return nil, a.refusal(c.service, errNotFound)
	}
	return map[string]any{"SubscriptionArn": arn}, nil
}

// sameSubscription answers a Subscribe the fan-out refused as a conflict:
// SNS answers the existing subscription's ARN when the queue is already
// subscribed to the topic with the same attributes.
func (e *Edge) sameSubscription(c *call, topic, queue string, want map[string]any) error {
	ls, err := e.links(c, topic)
	if err != nil {
		return err
	}
	for _, l := range ls {
		if l.name() != queue {
			continue
		}
		var have any
		if l.hasFilter() {
			json.Unmarshal(l.Filter, &have)
		}
		wantFilter := roundTrip(want["filter"])
		wantEnv := want["envelope"] != nil
		if !reflect.DeepEqual(have, wantFilter) || (l.Envelope != nil) != wantEnv ||
			(have != nil && l.FilterScope != want["filter_scope"]) {
			return errSNSInvalidParam.f("Invalid parameter: Attributes Reason: Subscription already exists with different attributes")
		}
		return nil
	}
	return errSNSInvalidParam.f("Invalid parameter: Endpoint Reason: the queue %s cannot be subscribed to topic %s: it is already a fan-out child of another topic, or it has children of its own (Narad links a queue to at most one topic).", queue, topic)
}

// roundTrip is v as JSON reads it back (numbers as float64).
func roundTrip(v any) any {
	if v == nil {
		return nil
	}
	b, _ := json.Marshal(v)
	var out any
	json.Unmarshal(b, &out)
	return out
}

func (e *Edge) unsubscribe(c *call) (map[string]any, error) {
	topic, queue, err := e.subscriptionOf(c.p)
	if err != nil {
		return nil, err
	}
	a, err := e.v1(c, http.MethodDelete, "/v1/topics/"+topic+"/children/"+queue, nil, nil)
	if err != nil {
		return nil, err
	}
	if !a.ok() {
		return nil, a.refusal(c.service, errNotFound)
	}
	return nil, nil
}

// subscriptionEntry is a subscription as the lists answer it.
func (e *Edge) subscriptionEntry(topic, queue string) map[string]any {
	return map[string]any{
		"SubscriptionArn": e.subscriptionARN(topic, queue),
		"Owner":           e.account,
		"Protocol":        "sqs",
		"Endpoint":        e.arn(serviceSQS, queue),
		"TopicArn":        e.arn(serviceSNS, topic),
	}
}

// subscriptionPage answers one page of subscriptions, sorted by ARN,
// after the NextToken (the last ARN of the page before).
func (e *Edge) subscriptionPage(c *call, subs [][2]string) (map[string]any, error) {
	after, err := c.p.str("NextToken")
	if err != nil {
		return nil, err
	}
	slices.SortFunc(subs, func(x, y [2]string) int {
		return strings.Compare(e.subscriptionARN(x[0], x[1]), e.subscriptionARN(y[0], y[1]))
	})
	out := map[string]any{}
	list := make([]any, 0, min(len(subs), snsPage))
	for _, s := range subs {
		arn := e.subscriptionARN(s[0], s[1])
		if after != "" && arn <= after {
			continue
		}
		if len(list) == snsPage {
			out["NextToken"] = list[len(list)-1].(map[string]any)["SubscriptionArn"]
			break
		}
		list = append(list, e.subscriptionEntry(s[0], s[1]))
	}
	out["Subscriptions"] = list
	return out, nil
}

func (e *Edge) listSubscriptions(c *call) (map[string]any, error) {
	ts, err := e.allTopics(c)
	if err != nil {
		return nil, err
	}
	var subs [][2]string
	for i := range ts {
		t := &ts[i]
		if !snsTopic(t) || len(t.Children) == 0 {
			continue
		}
		ls, err := e.links(c, t.Name)
		if err != nil {
			if ae, ok := err.(*Error); ok && ae.Code == errNotFound.code {
				continue // deleted since the listing
			}
			return nil, err
		}
		for _, l := range ls {
			subs = append(subs, [2]string{t.Name, l.name()})
		}
	}
	return e.subscriptionPage(c, subs)
}

func (e *Edge) listSubscriptionsByTopic(c *call) (map[string]any, error) {
	topic, err := e.topicOf(c.p, "TopicArn")
	if err != nil {
		return nil, err
	}
	ls, err := e.links(c, topic)
	if err != nil {
		return nil, err
	}
	subs := make([][2]string, 0, len(ls))
	for _, l := range ls {
		subs = append(subs, [2]string{topic, l.name()})
	}
	return e.subscriptionPage(c, subs)
}

func (e *Edge) getSubscriptionAttributes(c *call) (map[string]any, error) {
	topic, queue, err := e.subscriptionOf(c.p)
	if err != nil {
		return nil, err
	}
	l, err := e.link(c, topic, queue)
	if err != nil {
		return nil, err
	}
	out := map[string]string{
		"SubscriptionArn":              e.subscriptionARN(topic, queue),
		"TopicArn":                     e.arn(serviceSNS, topic),
		"Protocol":                     "sqs",
		"Endpoint":                     e.arn(serviceSQS, queue),
		"Owner":                        e.account,
		"PendingConfirmation":          "false",
		"ConfirmationWasAuthenticated": "true",
		"RawMessageDelivery":           boolString(l.Envelope == nil),
	}
	if l.hasFilter() {
		out["FilterPolicy"] = string(l.Filter)
		out["FilterPolicyScope"] = "MessageAttributes"
		if l.FilterScope == "payload" {
			out["FilterPolicyScope"] = "MessageBody"
		}
	}
	return map[string]any{"Attributes": out}, nil
}

func (e *Edge) setSubscriptionAttributes(c *call) (map[string]any, error) {
	topic, queue, err := e.subscriptionOf(c.p)
	if err != nil {
		return nil, err
	}
	k, v, err := attribute(c.p)
	if err != nil {
		return nil, err
	}
	var s subscription
	if err := readSubscriptionAttribute(&s, k, v); err != nil {
		return nil, err
	}
	l, err := e.link(c, topic, queue)
	if err != nil {
		return nil, err
	}
	var body map[string]any
	switch {
	case s.hasRaw:
		body = map[string]any{"envelope": nil}
		if !s.raw {
			body["envelope"] = e.envelope(topic)
		}
	case s.hasPolicy && s.policy == nil:
		body = map[string]any{"filter": nil}
	case s.hasPolicy:
		f, scope, err := filterFields(s.policy, l.FilterScope == "payload")
		if err != nil {
			return nil, err
		}
		body = map[string]any{"filter": f, "filter_scope": scope}
	case s.hasScope:
		if !l.hasFilter() {
			return nil, errSNSInvalidParam.f("Invalid parameter: FilterPolicyScope Reason: the subscription has no FilterPolicy; Narad keeps the scope with the policy, so set FilterPolicy first.")
		}
		var have any
		if err := json.Unmarshal(l.Filter, &have); err != nil {
			return nil, errInternal.f("reading a link's filter: %v", err)
		}
		f, scope, err := filterFields(have, s.bodyScope)
		if err != nil {
			return nil, err
		}
		body = map[string]any{"filter": f, "filter_scope": scope}
	}
	a, err := e.v1(c, http.MethodPatch, "/v1/topics/"+topic+"/children/"+queue, nil, body)
	if err != nil {
		return nil, err
	}
	if !a.ok() {
		return nil, a.refusal(c.service, errNotFound)
	}
	return nil, nil
}
