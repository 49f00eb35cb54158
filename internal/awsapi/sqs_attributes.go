package awsapi

import (
	"encoding/json"
	"strconv"
	"strings"
)

// Queue attributes and the topic fields they are (docs/aws.md, "Queue
// attributes"). Narad's own fields hold what Narad does itself:
// visibility, retention, delivery delay, dead letters, FIFO's order and
// dedupe window. What only the edge means (the long-poll default, the
// size cap, the redrive allow policy, FIFO options, encryption settings
// Narad keeps but does not apply) is kept in the topic's aws_attributes.

// Narad's floors, which SQS's ranges go below (docs/aws.md, "What
// differs").
const (
	minVisibilityMs = 1000
	minRetentionMs  = 3_600_000
	defaultMaxSize  = 1 << 20 // Narad's record cap, SQS's largest
	fifoDedupeMs    = 300_000 // SQS's five-minute deduplication interval
)

// keptAttributes are stored in aws_attributes, with their rules.
var keptAttributes = map[string]func(v string, fifo bool) error{
	"ReceiveMessageWaitTimeSeconds": intAttr(0, 20),
	"MaximumMessageSize":            intAttr(1024, defaultMaxSize),
	"RedriveAllowPolicy":            checkRedriveAllow,
	"ContentBasedDeduplication":     fifoOnly(boolAttr),
	"DeduplicationScope":            fifoOnly(oneOf("messageGroup", "queue")),
	"FifoThroughputLimit":           fifoOnly(oneOf("perQueue", "perMessageGroupId")),
	"KmsMasterKeyId":                anyAttr,
	"KmsDataKeyReusePeriodSeconds":  intAttr(60, 86400),
	"SqsManagedSseEnabled":          boolAttr,
	"Policy":                        anyAttr,
}

// readOnlyAttributes may be read, never set.
var readOnlyAttributes = map[string]bool{
	"ApproximateNumberOfMessages": true, "ApproximateNumberOfMessagesNotVisible": true,
	"ApproximateNumberOfMessagesDelayed": true, "CreatedTimestamp": true,
	"LastModifiedTimestamp": true, "QueueArn": true,
}

func intAttr(lo, hi int64) func(string, bool) error {
	return func(v string, _ bool) error {
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil || n < lo || n > hi {
			return errInvalidAttributeValue.f("Invalid value for the parameter: must be an integer from %d to %d, got %q.", lo, hi, v)
		}
		return nil
	}
}

func boolAttr(v string, _ bool) error {
	if v != "true" && v != "false" {
		return errInvalidAttributeValue.f("Invalid value for the parameter: must be true or false, got %q.", v)
	}
	return nil
}

func oneOf(vals ...string) func(string, bool) error {
	return func(v string, _ bool) error {
		for _, x := range vals {
			if v == x {
				return nil
			}
		}
		return errInvalidAttributeValue.f("Invalid value %q: must be one of %s.", v, strings.Join(vals, ", "))
	}
}

func fifoOnly(check func(string, bool) error) func(string, bool) error {
	return func(v string, fifo bool) error {
		if !fifo {
			return errInvalidAttributeName.f("This attribute applies only to FIFO queues.")
		}
		return check(v, fifo)
	}
}

func anyAttr(string, bool) error { return nil }

func checkRedriveAllow(v string, _ bool) error {
	var p struct {
		Permission string   `json:"redrivePermission"`
		Sources    []string `json:"sourceQueueArns"`
	}
	if err := json.Unmarshal([]byte(v), &p); err != nil {
		return errInvalidAttributeValue.f("RedriveAllowPolicy is not valid JSON: %v", err)
	}
	switch p.Permission {
	case "allowAll", "denyAll":
		if len(p.Sources) > 0 {
			return errInvalidAttributeValue.f("RedriveAllowPolicy: sourceQueueArns is only for redrivePermission byQueue.")
		}
	case "byQueue":
		if len(p.Sources) == 0 || len(p.Sources) > 10 {
			return errInvalidAttributeValue.f("RedriveAllowPolicy: byQueue needs 1 to 10 sourceQueueArns.")
		}
	default:
		return errInvalidAttributeValue.f("RedriveAllowPolicy: redrivePermission must be allowAll, denyAll or byQueue, got %q.", p.Permission)
	}
	return nil
}

// redrivePolicy is RedrivePolicy's JSON. maxReceiveCount may come as a
// number or a string (the console writes strings).
type redrivePolicy struct {
	Target string      `json:"deadLetterTargetArn"`
	Max    json.Number `json:"maxReceiveCount"`
}

// queueFields turns attributes into /v1 topic fields: those of a create
// when cur is nil, else of a PATCH of cur.
func (e *Edge) queueFields(c *call, name string, attrs map[string]string, cur *topicView) (map[string]any, error) {
	fifo := isFIFO(name)
	f := map[string]any{}
	kept := map[string]string{}
	if cur != nil {
		for k, v := range cur.AWSAttributes {
			kept[k] = v
		}
	}
	keptChanged := false
	for _, k := range sortedKeys(attrs) {
		v := attrs[k]
		switch k {
		case "VisibilityTimeout":
			n, err := secondsAttr(k, v, 0, 43200)
			if err != nil {
				return nil, err
			}
			f["visibility_timeout_ms"] = max(n*1000, minVisibilityMs)
		case "MessageRetentionPeriod":
			n, err := secondsAttr(k, v, 60, 1209600)
			if err != nil {
				return nil, err
			}
			f["retention_ms"] = max(n*1000, minRetentionMs)
		case "DelaySeconds":
			n, err := secondsAttr(k, v, 0, 900)
			if err != nil {
				return nil, err
			}
			f["delivery_delay_ms"] = n * 1000
		case "RedrivePolicy":
			if err := e.redriveFields(c, name, v, f); err != nil {
				return nil, err
			}
		case "FifoQueue":
			if cur != nil {
				return nil, errInvalidAttributeName.f("FifoQueue cannot be changed once the queue exists.")
			}
			if (v == "true") != fifo || (v != "true" && v != "false") {
				return nil, errInvalidParameter.f("The name of a FIFO queue must end with the .fifo suffix, and only a FIFO queue's may.")
			}
		default:
			if readOnlyAttributes[k] {
				return nil, errInvalidAttributeName.f("Attribute %s is read-only.", k)
			}
			check, ok := keptAttributes[k]
			if !ok {
				return nil, errInvalidAttributeName.f("Unknown Attribute %s.", k)
			}
			if err := check(v, fifo); err != nil {
				if ae, ok := err.(*Error); ok {
					ae.Message = "Invalid value for the parameter " + k + ": " + ae.Message
				}
				return nil, err
			}
			kept[k] = v
			keptChanged = true
		}
	}
	if keptChanged {
		f["aws_attributes"] = kept
	}
	if cur == nil && fifo {
		f["ordering"] = "group"
		f["dedupe_window_ms"] = fifoDedupeMs
	}
	return f, nil
}

func secondsAttr(name, v string, lo, hi int64) (int64, error) {
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil || n < lo || n > hi {
		return 0, errInvalidAttributeValue.f("Invalid value for the parameter %s: must be an integer from %d to %d, got %q.", name, lo, hi, v)
	}
	return n, nil
}

// redriveFields sets dead_letter_topic and max_deliveries from a
// RedrivePolicy ("" removes it), holding the target's
// RedriveAllowPolicy.
func (e *Edge) redriveFields(c *call, source, v string, f map[string]any) error {
	if v == "" || v == "{}" {
		f["dead_letter_topic"], f["max_deliveries"] = "", 0
		return nil
	}
	var p redrivePolicy
	if err := json.Unmarshal([]byte(v), &p); err != nil {
		return errInvalidAttributeValue.f("Value %s for parameter RedrivePolicy is invalid. Reason: not valid JSON.", v)
	}
	n, err := strconv.Atoi(p.Max.String())
	if err != nil || n < 1 || n > 1000 {
		return errInvalidAttributeValue.f("Value %s for parameter RedrivePolicy is invalid. Reason: maxReceiveCount must be an integer from 1 to 1000.", v)
	}
	target, ok := e.nameOfARN(serviceSQS, p.Target)
	if !ok {
		return errInvalidAttributeValue.f("Value %s for parameter RedrivePolicy is invalid. Reason: deadLetterTargetArn %q is not a queue ARN of this account and region.", v, p.Target)
	}
	if isFIFO(target) != isFIFO(source) {
		return errInvalidAttributeValue.f("Value %s for parameter RedrivePolicy is invalid. Reason: the dead-letter queue of a FIFO queue must be FIFO, and of a standard queue standard.", v)
	}
	t, err := e.topic(c, target, errInvalidAttributeValue)
	if err != nil {
		if ae, ok := err.(*Error); ok && ae.Code == errInvalidAttributeValue.code {
			ae.Message = "Value " + v + " for parameter RedrivePolicy is invalid. Reason: Dead letter target does not exist."
		}
		return err
	}
	if !redriveAllows(t.AWSAttributes["RedriveAllowPolicy"], e.arn(serviceSQS, source)) {
		return errInvalidParameter.f("Value %s for parameter RedrivePolicy is invalid. Reason: the RedriveAllowPolicy of %s does not allow %s as a source.", v, target, source)
	}
	f["dead_letter_topic"], f["max_deliveries"] = target, n
	return nil
}

// redriveAllows reads a RedriveAllowPolicy: may sourceARN use the queue
// as its dead-letter queue? No policy allows all, as in SQS.
func redriveAllows(policy, sourceARN string) bool {
	if policy == "" {
		return true
	}
	var p struct {
		Permission string   `json:"redrivePermission"`
		Sources    []string `json:"sourceQueueArns"`
	}
	if json.Unmarshal([]byte(policy), &p) != nil {
		return true
	}
	switch p.Permission {
	case "denyAll":
		return false
	case "byQueue":
		for _, s := range p.Sources {
			if s == sourceARN {
				return true
			}
		}
		return false
	}
	return true
}

// queueAttributes is every attribute of t that SQS reports.
func (e *Edge) queueAttributes(t *topicView) map[string]string {
	visible, inFlight, delayed := t.counts()
	// The backlog counts scheduled records too, which are not visible.
	visible -= min(visible, delayed)
	a := map[string]string{
		"QueueArn":                              e.arn(serviceSQS, t.Name),
		"ApproximateNumberOfMessages":           strconv.FormatUint(visible, 10),
		"ApproximateNumberOfMessagesNotVisible": strconv.FormatUint(inFlight, 10),
		"ApproximateNumberOfMessagesDelayed":    strconv.FormatUint(delayed, 10),
		"CreatedTimestamp":                      strconv.FormatInt(t.CreatedAt, 10),
		"LastModifiedTimestamp":                 strconv.FormatInt(t.modified(), 10),
		"VisibilityTimeout":                     strconv.FormatInt(t.VisibilityTimeoutMs/1000, 10),
		"MessageRetentionPeriod":                strconv.FormatInt(t.RetentionMs/1000, 10),
		"DelaySeconds":                          strconv.FormatInt(t.DeliveryDelayMs/1000, 10),
		"ReceiveMessageWaitTimeSeconds":         "0",
		"MaximumMessageSize":                    strconv.Itoa(defaultMaxSize),
		"SqsManagedSseEnabled":                  "false",
	}
	if isFIFO(t.Name) {
		a["FifoQueue"] = "true"
		a["ContentBasedDeduplication"] = "false"
		a["DeduplicationScope"] = "queue"
		a["FifoThroughputLimit"] = "perQueue"
	}
	for k, v := range t.AWSAttributes {
		if _, ok := keptAttributes[k]; ok {
			a[k] = v
		}
	}
	if t.DeadLetterTopic != "" {
		b, _ := json.Marshal(map[string]any{"deadLetterTargetArn": e.arn(serviceSQS, t.DeadLetterTopic), "maxReceiveCount": t.MaxDeliveries})
		a["RedrivePolicy"] = string(b)
	}
	return a
}

// allQueueAttributes are the names "All" stands for.
func isQueueAttribute(name string) bool {
	if readOnlyAttributes[name] {
		return true
	}
	if _, ok := keptAttributes[name]; ok {
		return true
	}
	switch name {
	case "VisibilityTimeout", "MessageRetentionPeriod", "DelaySeconds", "RedrivePolicy", "FifoQueue":
		return true
	}
	return false
}
