package awsapi

import (
	"encoding/json"
	"net/http"
	"slices"
	"strconv"
	"strings"
)

// SNS's topic actions (docs/aws.md, "SNS"): an SNS topic is the Narad
// topic of the same name, its ARN arn:aws:sns:<region>:<account>:<name>.
// What only SNS means (DisplayName, policies, FIFO options) is kept in
// the topic's aws_attributes, its tags in the topic's tags.

// snsActions is every SNS action this edge serves (sns_*.go).
var snsActions = map[string]func(*Edge, *call) (map[string]any, error){
	"CreateTopic":               snsAction((*Edge).createTopic),
	"DeleteTopic":               snsAction((*Edge).deleteTopic),
	"ListTopics":                snsAction((*Edge).listTopics),
	"GetTopicAttributes":        snsAction((*Edge).getTopicAttributes),
	"SetTopicAttributes":        snsAction((*Edge).setTopicAttributes),
	"Subscribe":                 snsAction((*Edge).subscribe),
	"Unsubscribe":               snsAction((*Edge).unsubscribe),
	"ListSubscriptions":         snsAction((*Edge).listSubscriptions),
	"ListSubscriptionsByTopic":  snsAction((*Edge).listSubscriptionsByTopic),
	"GetSubscriptionAttributes": snsAction((*Edge).getSubscriptionAttributes),
	"SetSubscriptionAttributes": snsAction((*Edge).setSubscriptionAttributes),
	"Publish":                   snsAction((*Edge).publish),
	"PublishBatch":              snsAction((*Edge).publishBatch),
	"TagResource":               snsAction((*Edge).tagResource),
	"UntagResource":             snsAction((*Edge).untagResource),
	"ListTagsForResource":       snsAction((*Edge).listTagsForResource),
}

// snsPage is SNS's page size for ListTopics and the subscription lists.
const snsPage = 100

// topicAttributes are the topic attributes SNS lets a client set, kept in
// aws_attributes, with their rules. FifoTopic is set at create only.
var topicAttributes = map[string]func(v string, fifo bool) error{
	"DisplayName":               anyAttr,
	"Policy":                    jsonAttr,
	"DeliveryPolicy":            jsonAttr,
	"SignatureVersion":          oneOf("1", "2"),
	"TracingConfig":             oneOf("PassThrough", "Active"),
	"KmsMasterKeyId":            anyAttr,
	"ContentBasedDeduplication": fifoOnly(boolAttr),
	"ArchivePolicy":             fifoOnly(jsonAttr),
}

func jsonAttr(v string, _ bool) error {
	if v != "" && !json.Valid([]byte(v)) {
		return errSNSInvalidParam.f("Invalid parameter: the attribute value is not valid JSON.")
	}
	return nil
}

// snsRequired is a string parameter SNS requires.
func snsRequired(p params, name string) (string, error) {
	s, err := p.str(name)
	if err != nil {
		return "", err
	}
	if s == "" {
		return "", errSNSInvalidParam.f("Invalid parameter: %s Reason: no value for required parameter", name)
	}
	return s, nil
}

// attribute reads Set*Attributes' AttributeName and AttributeValue. The
// Query conversion takes SNS's AttributeName for SQS's AttributeName.N
// (a list, query.go), so the name may arrive as a list of one.
func attribute(p params) (name, value string, err error) {
	q := p
	if l, ok := p["AttributeNames"].([]any); ok && !p.has("AttributeName") && len(l) == 1 {
		q = params{"AttributeName": l[0]}
	}
	if name, err = snsRequired(q, "AttributeName"); err != nil {
		return "", "", err
	}
	value, err = p.str("AttributeValue")
	return name, value, err
}

// topicOf reads the topic an ARN parameter names.
func (e *Edge) topicOf(p params, param string) (string, error) {
	arn, err := snsRequired(p, param)
	if err != nil {
		return "", err
	}
	name, ok := e.nameOfARN(serviceSNS, arn)
	if !ok || !validTopicName(name) {
		return "", errSNSInvalidParam.f("Invalid parameter: %s Reason: %q is not a topic ARN of account %s in %s.", param, arn, e.account, e.region)
	}
	return name, nil
}

// checkTopicAttribute checks one settable attribute.
func checkTopicAttribute(k, v string, fifo bool) error {
	check, ok := topicAttributes[k]
	if !ok {
		return errSNSInvalidParam.f("Invalid parameter: AttributeName Reason: %s is not a topic attribute Narad can set.", k)
	}
	if err := check(v, fifo); err != nil {
		return snsError(err)
	}
	return nil
}

func (e *Edge) createTopic(c *call) (map[string]any, error) {
	name, err := snsRequired(c.p, "Name")
	if err != nil {
		return nil, err
	}
	if !validTopicName(name) {
		return nil, errSNSInvalidParam.f("Invalid parameter: Topic Name Reason: 1 to 256 alphanumeric characters, hyphens or underscores; a FIFO topic's name ends with .fifo.")
	}
	attrs, err := c.p.stringMap("Attributes")
	if err != nil {
		return nil, err
	}
	tags, err := snsTags(c.p)
	if err != nil {
		return nil, err
	}
	fifo := isFIFO(name)
	if v, ok := attrs["FifoTopic"]; ok || fifo {
		if (v == "true") != fifo {
			return nil, errSNSInvalidParam.f("Invalid parameter: Topic Name Reason: a FIFO topic's name ends with .fifo and it is created with the attribute FifoTopic=true; only a FIFO topic's name may.")
		}
	}
	kept := map[string]string{}
	for k, v := range attrs {
		if k == "FifoTopic" {
			if fifo {
				kept[k] = "true"
			}
			continue
		}
		if err := checkTopicAttribute(k, v, fifo); err != nil {
			return nil, err
		}
		kept[k] = v
	}
	fields := map[string]any{"name": name}
	if fifo {
		fields["ordering"] = "group"
		fields["dedupe_window_ms"] = fifoDedupeMs
	}
	if len(kept) > 0 {
		fields["aws_attributes"] = kept
	}
	if len(tags) > 0 {
		fields["tags"] = tags
	}
	a, err := e.v1(c, http.MethodPost, "/v1/topics", nil, fields)
	if err != nil {
		return nil, err
	}
	// SNS answers an existing topic's ARN: CreateTopic is idempotent.
	if !a.ok() && a.status != http.StatusConflict {
		return nil, a.refusal(c.service, errNotFound)
	}
	return map[string]any{"TopicArn": e.arn(serviceSNS, name)}, nil
}

func (e *Edge) deleteTopic(c *call) (map[string]any, error) {
	name, err := e.topicOf(c.p, "TopicArn")
	if err != nil {
		return nil, err
	}
	a, err := e.v1(c, http.MethodDelete, "/v1/topics/"+name, nil, nil)
	if err != nil {
		return nil, err
	}
	// Deleting a topic that does not exist is no error in SNS.
	if !a.ok() && a.status != http.StatusNotFound {
		return nil, a.refusal(c.service, errNotFound)
	}
	return nil, nil
}

// snsTopic reports a topic ListTopics shows: a name SNS can express, and
// not a fan-out child (a child is a subscribed queue; it cannot have
// subscriptions of its own).
func snsTopic(t *topicView) bool {
	return validTopicName(t.Name) && t.Parent == ""
}

func (e *Edge) listTopics(c *call) (map[string]any, error) {
	after, err := c.p.str("NextToken")
	if err != nil {
		return nil, err
	}
	ts, err := e.allTopics(c)
	if err != nil {
		return nil, err
	}
	var names []string
	for i := range ts {
		if snsTopic(&ts[i]) && ts[i].Name > after {
			names = append(names, ts[i].Name)
		}
	}
	slices.Sort(names)
	out := map[string]any{}
	if len(names) > snsPage {
		names = names[:snsPage]
		out["NextToken"] = names[len(names)-1]
	}
	topics := make([]any, 0, len(names))
	for _, n := range names {
		topics = append(topics, map[string]any{"TopicArn": e.arn(serviceSNS, n)})
	}
	out["Topics"] = topics
	return out, nil
}

// defaultDeliveryPolicy is SNS's effective delivery policy when none is
// set (it governs http/s endpoints, which Narad does not deliver to).
const defaultDeliveryPolicy = `{"http":{"defaultHealthyRetryPolicy":{"minDelayTarget":20,"maxDelayTarget":20,"numRetries":3,"numMaxDelayRetries":0,"numNoDelayRetries":0,"numMinDelayRetries":0,"backoffFunction":"linear"},"disableSubscriptionOverrides":false,"defaultRequestPolicy":{"headerContentType":"text/plain; charset=UTF-8"}}}`

// defaultPolicy is the access policy SNS shows for a topic without one:
// the owner may do everything. Narad decides access by users and grants.
func (e *Edge) defaultPolicy(name string) string {
	arn := e.arn(serviceSNS, name)
	p := map[string]any{
		"Version": "2008-10-17",
		"Id":      "__default_policy_ID",
		"Statement": []any{map[string]any{
			"Sid":       "__default_statement_ID",
			"Effect":    "Allow",
			"Principal": map[string]any{"AWS": "*"},
			"Action": []string{"SNS:GetTopicAttributes", "SNS:SetTopicAttributes", "SNS:AddPermission",
				"SNS:RemovePermission", "SNS:DeleteTopic", "SNS:Subscribe", "SNS:ListSubscriptionsByTopic", "SNS:Publish"},
			"Resource":  arn,
			"Condition": map[string]any{"StringEquals": map[string]any{"AWS:SourceOwner": e.account}},
		}},
	}
	b, _ := json.Marshal(p)
	return string(b)
}

func (e *Edge) getTopicAttributes(c *call) (map[string]any, error) {
	name, err := e.topicOf(c.p, "TopicArn")
	if err != nil {
		return nil, err
	}
	t, err := e.topic(c, name, errNotFound)
	if err != nil {
		return nil, err
	}
	links, err := e.links(c, name)
	if err != nil {
		return nil, err
	}
	fifo := isFIFO(name)
	out := map[string]string{
		"TopicArn":                e.arn(serviceSNS, name),
		"Owner":                   e.account,
		"DisplayName":             "",
		"Policy":                  e.defaultPolicy(name),
		"SubscriptionsConfirmed":  strconv.Itoa(len(links)),
		"SubscriptionsPending":    "0",
		"SubscriptionsDeleted":    "0",
		"EffectiveDeliveryPolicy": defaultDeliveryPolicy,
		"FifoTopic":               boolString(fifo),
	}
	if fifo {
		out["ContentBasedDeduplication"] = "false"
	}
	for k, v := range t.AWSAttributes {
		if _, ok := topicAttributes[k]; ok || k == "FifoTopic" {
			out[k] = v
		}
	}
	if dp := t.AWSAttributes["DeliveryPolicy"]; dp != "" {
		out["EffectiveDeliveryPolicy"] = dp
	}
	return map[string]any{"Attributes": out}, nil
}

func (e *Edge) setTopicAttributes(c *call) (map[string]any, error) {
	name, err := e.topicOf(c.p, "TopicArn")
	if err != nil {
		return nil, err
	}
	k, v, err := attribute(c.p)
	if err != nil {
		return nil, err
	}
	if k == "FifoTopic" {
		return nil, errSNSInvalidParam.f("Invalid parameter: AttributeName Reason: FifoTopic is set when the topic is created and cannot change.")
	}
	fifo := isFIFO(name)
	if err := checkTopicAttribute(k, v, fifo); err != nil {
		return nil, err
	}
	t, err := e.topic(c, name, errNotFound)
	if err != nil {
		return nil, err
	}
	kept := map[string]string{}
	for ak, av := range t.AWSAttributes {
		kept[ak] = av
	}
	if v == "" {
		delete(kept, k)
	} else {
		kept[k] = v
	}
	return nil, e.patchTopic(c, name, map[string]any{"aws_attributes": kept}, errNotFound)
}

// resourceOf reads the topic a tagging action's ResourceArn names: an SNS
// topic's ARN (an SQS queue's tags are SQS's TagQueue's).
func (e *Edge) resourceOf(c *call) (string, error) {
	arn, err := snsRequired(c.p, "ResourceArn")
	if err != nil {
		return "", err
	}
	if strings.HasPrefix(arn, "arn:aws:sqs:") {
		return "", errSNSInvalidParam.f("Invalid parameter: ResourceArn Reason: %s is an SQS queue's ARN; tag a queue with SQS's TagQueue.", arn)
	}
	name, ok := e.nameOfARN(serviceSNS, arn)
	if !ok || !validTopicName(name) {
		return "", errSNSInvalidParam.f("Invalid parameter: ResourceArn Reason: %q is not a topic ARN of account %s in %s.", arn, e.account, e.region)
	}
	return name, nil
}

// snsTags reads SNS's Tags: a list of {Key, Value}.
func snsTags(p params) (map[string]string, error) {
	l, err := p.list("Tags")
	if err != nil {
		return nil, err
	}
	out := make(map[string]string, len(l))
	for _, t := range l {
		k, err := t.str("Key")
		if err != nil {
			return nil, err
		}
		v, err := t.str("Value")
		if err != nil {
			return nil, err
		}
		if k == "" {
			return nil, errSNSInvalidParam.f("Invalid parameter: Tags Reason: a tag's Key is required.")
		}
		out[k] = v
	}
	return out, nil
}

func (e *Edge) tagResource(c *call) (map[string]any, error) {
	name, err := e.resourceOf(c)
	if err != nil {
		return nil, err
	}
	add, err := snsTags(c.p)
	if err != nil {
		return nil, err
	}
	if len(add) == 0 {
		return nil, errSNSInvalidParam.f("Invalid parameter: Tags Reason: no value for required parameter")
	}
	return nil, e.changeTags(c, name, errSNSResourceNotFound, add, nil)
}

func (e *Edge) untagResource(c *call) (map[string]any, error) {
	name, err := e.resourceOf(c)
	if err != nil {
		return nil, err
	}
	keys, err := c.p.strings("TagKeys")
	if err != nil {
		return nil, err
	}
	if len(keys) == 0 {
		return nil, errSNSInvalidParam.f("Invalid parameter: TagKeys Reason: no value for required parameter")
	}
	return nil, e.changeTags(c, name, errSNSResourceNotFound, nil, keys)
}

func (e *Edge) listTagsForResource(c *call) (map[string]any, error) {
	name, err := e.resourceOf(c)
	if err != nil {
		return nil, err
	}
	t, err := e.topic(c, name, errSNSResourceNotFound)
	if err != nil {
		return nil, err
	}
	tags := make([]any, 0, len(t.Tags))
	for _, k := range sortedKeys(t.Tags) {
		tags = append(tags, map[string]any{"Key": k, "Value": t.Tags[k]})
	}
	return map[string]any{"Tags": tags}, nil
}

func boolString(b bool) string {
	if b {
		return "true"
	}
	return "false"
}
