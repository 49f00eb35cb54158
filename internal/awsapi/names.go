package awsapi

import (
	"net/url"
	"strings"
)

// Names, URLs and ARNs (docs/aws.md, "Names"): a queue or an SNS topic is
// the Narad topic of the same name.

// validQueueName: 1..80 of [A-Za-z0-9_-], a FIFO queue's ".fifo"
// suffix counted in the 80.
func validQueueName(n string) bool { return validName(n, 80) }

// validTopicName: SNS's rule, the same characters, up to 256.
func validTopicName(n string) bool { return validName(n, 256) }

func validName(n string, max int) bool {
	base := strings.TrimSuffix(n, ".fifo")
	if len(n) > max || base == "" {
		return false
	}
	for i := 0; i < len(base); i++ {
		c := base[i]
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '_' || c == '-') {
			return false
		}
	}
	return true
}

func isFIFO(name string) bool { return strings.HasSuffix(name, ".fifo") }

// queueURL is name's queue URL as the client reaches this node.
func (e *Edge) queueURL(c *call, name string) string {
	return c.scheme + "://" + c.host + "/" + e.account + "/" + name
}

func (e *Edge) arn(service, name string) string {
	return "arn:aws:" + service + ":" + e.region + ":" + e.account + ":" + name
}

// queueOf reads the queue a QueueUrl names. Any host will do (a client
// may reach another node than the one that made the URL); the path must
// be /<account>/<name> with this node's account.
func (e *Edge) queueOf(c *call) (string, error) {
	raw, err := c.p.required("QueueUrl")
	if err != nil {
		return "", err
	}
	return e.queueFromURL(raw)
}

func (e *Edge) queueFromURL(raw string) (string, error) {
	path, ok := plainURLPath(raw)
	if !ok {
		u, err := url.Parse(raw)
		if err != nil {
			return "", errQueueDoesNotExist.f("The specified queue does not exist: %q is not a queue URL.", raw)
		}
		path = u.Path
	}
	acct, name, ok := strings.Cut(strings.TrimPrefix(path, "/"), "/")
	if !ok || acct != e.account || !validQueueName(name) {
		return "", errQueueDoesNotExist.f("The specified queue does not exist: %q is not a queue URL of account %s.", raw, e.account)
	}
	return name, nil
}

// plainURLPath is the path of an http or https URL that has nothing
// url.Parse would need to undo (escapes, a query, a fragment): every
// queue URL a client got from this edge. It spares each send and receive
// a url.Parse.
func plainURLPath(raw string) (string, bool) {
	rest, ok := strings.CutPrefix(raw, "http://")
	if !ok {
		if rest, ok = strings.CutPrefix(raw, "https://"); !ok {
			return "", false
		}
	}
	i := strings.IndexByte(rest, '/')
	if i < 0 || strings.ContainsAny(rest, "%?#@\\") {
		return "", false
	}
	return rest[i:], true
}

// nameOfARN reads the resource name of an ARN of service in this
// account and region.
func (e *Edge) nameOfARN(service, arn string) (string, bool) {
	prefix := "arn:aws:" + service + ":" + e.region + ":" + e.account + ":"
	name, ok := strings.CutPrefix(arn, prefix)
	if !ok || name == "" || strings.Contains(name, ":") {
		return "", false
	}
	return name, true
}
