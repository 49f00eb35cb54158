package awsapi

import (
	"maps"
	"net/http"
	"slices"
	"strings"
	"time"
)

// SQS's queue actions: each is /v1 topic administration.

// sqsActions is every SQS action of the 2012-11-05 API.
var sqsActions = map[string]func(*Edge, *call) (map[string]any, error){
	"CreateQueue":                  (*Edge).createQueue,
	"GetQueueUrl":                  (*Edge).getQueueURL,
	"ListQueues":                   (*Edge).listQueues,
	"DeleteQueue":                  (*Edge).deleteQueue,
	"GetQueueAttributes":           (*Edge).getQueueAttributes,
	"SetQueueAttributes":           (*Edge).setQueueAttributes,
	"PurgeQueue":                   (*Edge).purgeQueue,
	"TagQueue":                     (*Edge).tagQueue,
	"UntagQueue":                   (*Edge).untagQueue,
	"ListQueueTags":                (*Edge).listQueueTags,
	"ListDeadLetterSourceQueues":   (*Edge).listDeadLetterSourceQueues,
	"SendMessage":                  (*Edge).sendMessage,
	"SendMessageBatch":             (*Edge).sendMessageBatch,
	"ReceiveMessage":               (*Edge).receiveMessage,
	"DeleteMessage":                (*Edge).deleteMessage,
	"DeleteMessageBatch":           (*Edge).deleteMessageBatch,
	"ChangeMessageVisibility":      (*Edge).changeMessageVisibility,
	"ChangeMessageVisibilityBatch": (*Edge).changeMessageVisibilityBatch,
	"StartMessageMoveTask":         (*Edge).startMessageMoveTask,
	"ListMessageMoveTasks":         (*Edge).listMessageMoveTasks,
	"CancelMessageMoveTask":        (*Edge).cancelMessageMoveTask,
	"AddPermission":                (*Edge).permissions,
	"RemovePermission":             (*Edge).permissions,
}

func (e *Edge) createQueue(c *call) (map[string]any, error) {
	name, err := c.p.required("QueueName")
	if err != nil {
		return nil, err
	}
	if !validQueueName(name) {
		return nil, errInvalidParameter.f("Can only include alphanumeric characters, hyphens, or underscores. 1 to 80 in length, and a FIFO queue's name ends with .fifo.")
	}
	attrs, err := c.p.stringMap("Attributes")
	if err != nil {
		return nil, err
	}
	tags, err := c.tags()
	if err != nil {
		return nil, err
	}
	fields, err := e.queueFields(c, name, attrs, nil)
	if err != nil {
		return nil, err
	}
	fields["name"] = name
	if len(tags) > 0 {
		fields["tags"] = tags
	}
	a, err := e.v1(c, http.MethodPost, "/v1/topics", nil, fields)
	if err != nil {
		return nil, err
	}
	if a.status == http.StatusConflict {
		// SQS answers an existing queue's URL when the attributes asked
		// for are the ones it has.
		t, err := e.topic(c, name, errQueueDoesNotExist)
		if err != nil {
			return nil, err
		}
		have := e.queueAttributes(t)
		for k, v := range attrs {
			if have[k] != v {
				return nil, errQueueNameExists.f("A queue already exists with the same name and a different value for attribute %s.", k)
			}
		}
		return map[string]any{"QueueUrl": e.queueURL(c, name)}, nil
	}
	if !a.ok() {
		return nil, a.refusal(c.service, errInvalidAttributeValue)
	}
	return map[string]any{"QueueUrl": e.queueURL(c, name)}, nil
}

// tags reads CreateQueue's tags: "tags" in the JSON protocol, Tag.N in
// Query.
func (c *call) tags() (map[string]string, error) {
	if c.p.has("tags") {
		return c.p.stringMap("tags")
	}
	return c.p.stringMap("Tags")
}

func (e *Edge) getQueueURL(c *call) (map[string]any, error) {
	name, err := c.p.required("QueueName")
	if err != nil {
		return nil, err
	}
	owner, err := c.p.str("QueueOwnerAWSAccountId")
	if err != nil {
		return nil, err
	}
	if (owner != "" && owner != e.account) || !validQueueName(name) {
		return nil, errQueueDoesNotExist.f("The specified queue does not exist.")
	}
	if _, err := e.topic(c, name, errQueueDoesNotExist); err != nil {
		return nil, err
	}
	return map[string]any{"QueueUrl": e.queueURL(c, name)}, nil
}

func (e *Edge) listQueues(c *call) (map[string]any, error) {
	prefix, err := c.p.str("QueueNamePrefix")
	if err != nil {
		return nil, err
	}
	limit, err := c.p.integer("MaxResults", 1000, 1, 1000)
	if err != nil {
		return nil, err
	}
	after, err := c.p.str("NextToken")
	if err != nil {
		return nil, err
	}
	ts, err := e.allTopics(c)
	if err != nil {
		return nil, err
	}
	var names []string
	for _, t := range ts {
		if validQueueName(t.Name) && strings.HasPrefix(t.Name, prefix) && t.Name > after {
			names = append(names, t.Name)
		}
	}
	return e.urlPage(c, names, "QueueUrls", int(limit), c.p.has("MaxResults")), nil
}

// urlPage answers one page of queue URLs under key, with a NextToken (the
// last name) when a page was asked for and more remain.
func (e *Edge) urlPage(c *call, names []string, key string, limit int, paged bool) map[string]any {
	slices.Sort(names)
	out := map[string]any{}
	if paged && len(names) > limit {
		names = names[:limit]
		out["NextToken"] = names[len(names)-1]
	} else if len(names) > limit {
		names = names[:limit]
	}
	urls := make([]any, 0, len(names))
	for _, n := range names {
		urls = append(urls, e.queueURL(c, n))
	}
	if len(urls) > 0 || key == "queueUrls" {
		out[key] = urls
	}
	return out
}

func (e *Edge) deleteQueue(c *call) (map[string]any, error) {
	name, err := e.queueOf(c)
	if err != nil {
		return nil, err
	}
	a, err := e.v1(c, http.MethodDelete, "/v1/topics/"+name, nil, nil)
	if err != nil {
		return nil, err
	}
	if !a.ok() {
		return nil, a.refusal(c.service, errQueueDoesNotExist)
	}
	return nil, nil
}

func (e *Edge) getQueueAttributes(c *call) (map[string]any, error) {
	name, err := e.queueOf(c)
	if err != nil {
		return nil, err
	}
	want, err := c.p.strings("AttributeNames")
	if err != nil {
		return nil, err
	}
	for _, n := range want {
		if n != "All" && !isQueueAttribute(n) {
			return nil, errInvalidAttributeName.f("Unknown Attribute %s.", n)
		}
	}
	t, err := e.topic(c, name, errQueueDoesNotExist)
	if err != nil {
		return nil, err
	}
	have := e.queueAttributes(t)
	out := map[string]string{}
	for _, n := range want {
		if n == "All" {
			out = have
			break
		}
		if v, ok := have[n]; ok {
			out[n] = v
		}
	}
	if len(out) == 0 {
		return nil, nil
	}
	return map[string]any{"Attributes": out}, nil
}

func (e *Edge) setQueueAttributes(c *call) (map[string]any, error) {
	name, err := e.queueOf(c)
	if err != nil {
		return nil, err
	}
	attrs, err := c.p.stringMap("Attributes")
	if err != nil {
		return nil, err
	}
	if len(attrs) == 0 {
		return nil, errMissingParameter.f("The request must contain the parameter Attributes.")
	}
	t, err := e.topic(c, name, errQueueDoesNotExist)
	if err != nil {
		return nil, err
	}
	fields, err := e.queueFields(c, name, attrs, t)
	if err != nil {
		return nil, err
	}
	if len(fields) == 0 {
		return nil, nil
	}
	return nil, e.patchTopic(c, name, fields, errQueueDoesNotExist)
}

// purgeInterval is SQS's: one PurgeQueue per queue a minute. It is kept
// by the node that served the purge (docs/aws.md).
const purgeInterval = 60 * time.Second

func (e *Edge) purgeQueue(c *call) (map[string]any, error) {
	name, err := e.queueOf(c)
	if err != nil {
		return nil, err
	}
	now := e.now()
	e.mu.Lock()
	last, ok := e.purged[name]
	e.mu.Unlock()
	if ok && now.Sub(last) < purgeInterval {
		return nil, errPurgeInProgress.f("Only one PurgeQueue operation on %s is allowed every 60 seconds.", name)
	}
	a, err := e.v1(c, http.MethodPost, "/v1/topics/"+name+"/purge", nil, nil)
	if err != nil {
		return nil, err
	}
	if !a.ok() {
		return nil, a.refusal(c.service, errQueueDoesNotExist)
	}
	e.mu.Lock()
	e.purged[name] = now
	for q, at := range e.purged {
		if now.Sub(at) >= purgeInterval {
			delete(e.purged, q)
		}
	}
	e.mu.Unlock()
	return nil, nil
}

func (e *Edge) tagQueue(c *call) (map[string]any, error) {
	name, err := e.queueOf(c)
	if err != nil {
		return nil, err
	}
	add, err := c.p.stringMap("Tags")
	if err != nil {
		return nil, err
	}
	if len(add) == 0 {
		return nil, errMissingParameter.f("The request must contain the parameter Tags.")
	}
	return nil, e.changeTags(c, name, errQueueDoesNotExist, add, nil)
}

func (e *Edge) untagQueue(c *call) (map[string]any, error) {
	name, err := e.queueOf(c)
	if err != nil {
		return nil, err
	}
	keys, err := c.p.strings("TagKeys")
	if err != nil {
		return nil, err
	}
	if len(keys) == 0 {
		return nil, errMissingParameter.f("The request must contain the parameter TagKeys.")
	}
	return nil, e.changeTags(c, name, errQueueDoesNotExist, nil, keys)
}

// changeTags reads a topic's tags, sets add and drops remove, and writes
// them back (SQS's and SNS's tag actions alike).
func (e *Edge) changeTags(c *call, name string, notFound errorKind, add map[string]string, remove []string) error {
	t, err := e.topic(c, name, notFound)
	if err != nil {
		return err
	}
	tags := maps.Clone(t.Tags)
	if tags == nil {
		tags = map[string]string{}
	}
	maps.Copy(tags, add)
	for _, k := range remove {
		delete(tags, k)
	}
	return e.patchTopic(c, name, map[string]any{"tags": tags}, notFound)
}

func (e *Edge) listQueueTags(c *call) (map[string]any, error) {
	name, err := e.queueOf(c)
	if err != nil {
		return nil, err
	}
	t, err := e.topic(c, name, errQueueDoesNotExist)
	if err != nil {
		return nil, err
	}
	if len(t.Tags) == 0 {
		return nil, nil
	}
	return map[string]any{"Tags": t.Tags}, nil
}

func (e *Edge) listDeadLetterSourceQueues(c *call) (map[string]any, error) {
	name, err := e.queueOf(c)
	if err != nil {
		return nil, err
	}
	limit, err := c.p.integer("MaxResults", 1000, 1, 1000)
	if err != nil {
		return nil, err
	}
	after, err := c.p.str("NextToken")
	if err != nil {
		return nil, err
	}
	if _, err := e.topic(c, name, errQueueDoesNotExist); err != nil {
		return nil, err
	}
	ts, err := e.allTopics(c)
	if err != nil {
		return nil, err
	}
	var names []string
	for _, t := range ts {
		if t.DeadLetterTopic == name && validQueueName(t.Name) && t.Name > after {
			names = append(names, t.Name)
		}
	}
	return e.urlPage(c, names, "queueUrls", int(limit), c.p.has("MaxResults")), nil
}

// permissions: SQS's resource policies have no Narad counterpart; users
// and grants decide who may do what (docs/security.md).
func (e *Edge) permissions(c *call) (map[string]any, error) {
	return nil, errUnsupportedOperation.f("%s is not supported: Narad decides access by users and grants (narad user grant).", c.action)
}
