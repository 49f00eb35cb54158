package awsapi

import (
	"net/url"
	"slices"
	"strconv"
	"strings"
)

// The Query protocol's parameters, converted to the JSON protocol's shape
// so that one handler serves both. Query flattens structure into dotted
// names: SQS numbers the members of a list or map from 1
// ("AttributeName.1", "Attribute.1.Name"/"Attribute.1.Value") under a
// singular name, SNS wraps them ("Attributes.entry.1.key",
// "TagKeys.member.1"). fromQuery builds the tree the names describe, then
// turns numbered members into lists, "member" wrappers into their list,
// "entry" wrappers into maps, and SQS's singular names into the JSON
// protocol's plural ones (queryNames).

// queryNames maps SQS's Query names of lists and maps to the JSON
// protocol's names and shapes.
var queryNames = map[string]struct {
	json  string
	shape shape
}{
	"Attribute":                      {"Attributes", nameValueMap},
	"MessageAttribute":               {"MessageAttributes", nameValueMap},
	"MessageSystemAttribute":         {"MessageSystemAttributes", nameValueMap},
	"AttributeName":                  {"AttributeNames", list},
	"MessageAttributeName":           {"MessageAttributeNames", list},
	"MessageSystemAttributeName":     {"MessageSystemAttributeNames", list},
	"Tag":                            {"Tags", keyValueMap},
	"TagKey":                         {"TagKeys", list},
	"AWSAccountId":                   {"AWSAccountIds", list},
	"ActionName":                     {"Actions", list},
	"SendMessageBatchRequestEntry":   {"Entries", list},
	"DeleteMessageBatchRequestEntry": {"Entries", list},
	"ChangeMessageVisibilityBatchRequestEntry": {"Entries", list},
}

// queryLists are the names, Query's and the JSON protocol's, of the
// lists of queryNames.
var queryLists = func() map[string]bool {
	l := map[string]bool{}
	for name, q := range queryNames {
		if q.shape == list {
			l[name], l[q.json] = true, true
		}
	}
	return l
}()

type shape int

const (
	list shape = iota
	nameValueMap
	keyValueMap
)

// queryControl are the Query parameters that are not the action's input:
// the action, the API version, and a presigned request's signature.
func queryControl(name string) bool {
	return name == "Action" || name == "Version" || strings.HasPrefix(name, "X-Amz-")
}

// fromQuery converts a Query request's parameters. A parameter given
// twice is refused: the request must mean one thing.
func fromQuery(form url.Values) (params, error) {
	root := map[string]any{}
	for name, vs := range form {
		if queryControl(name) {
			continue
		}
		if len(vs) > 1 {
			return nil, errInvalidParameter.f("The parameter %s is given %d times; give it once.", name, len(vs))
		}
		if err := insert(root, strings.Split(name, "."), vs[0]); err != nil {
			return nil, err
		}
	}
	return normalize(root).(map[string]any), nil
}

func insert(node map[string]any, segs []string, v string) error {
	for i, s := range segs {
		if s == "" {
			return errMalformedBody.f("The parameter name %q has an empty part.", strings.Join(segs, "."))
		}
		if i == len(segs)-1 {
			if _, ok := node[s].(map[string]any); ok {
				return errMalformedBody.f("The parameter %q is both a value and a structure.", strings.Join(segs, "."))
			}
			node[s] = v
			return nil
		}
		next, ok := node[s].(map[string]any)
		if !ok {
			if _, isValue := node[s]; isValue {
				return errMalformedBody.f("The parameter %q is both a value and a structure.", strings.Join(segs[:i+1], "."))
			}
			next = map[string]any{}
			node[s] = next
		}
		node = next
	}
	return nil
}

// normalize turns the tree's numbered members into lists and its
// wrappers into lists and maps, depth first.
func normalize(v any) any {
	m, ok := v.(map[string]any)
	if !ok {
		return v
	}
	for k, c := range m {
		m[k] = normalize(c)
	}
	if l, ok := numbered(m); ok {
		return l
	}
	if len(m) == 1 {
		if l, ok := m["member"].([]any); ok {
			return l
		}
		if l, ok := m["entry"].([]any); ok {
			if out, ok := pairs(l, "key", "value"); ok {
				return out
			}
			if out, ok := pairs(l, "Name", "Value"); ok {
				return out
			}
		}
	}
	for k, c := range m {
		if c == "" && queryLists[k] {
			// An empty list is its bare name (botocore sends Entries=).
			m[k] = []any{}
		}
	}
	for k, c := range m {
		q, ok := queryNames[k]
		if !ok {
			continue
		}
		l, isList := c.([]any)
		if !isList {
			if s, isStr := c.(string); isStr && q.shape == list {
				l, isList = []any{s}, true
			}
		}
		if !isList {
			continue
		}
		switch q.shape {
		case list:
			m[q.json] = l
		case nameValueMap:
			out, ok := pairs(l, "Name", "Value")
			if !ok {
				continue
			}
			m[q.json] = out
		case keyValueMap:
			out, ok := pairs(l, "Key", "Value")
			if !ok {
				continue
			}
			m[q.json] = out
		}
		delete(m, k)
	}
	return m
}

// numbered is m as a list when every key is a member number (1, 2, ...),
// in number order.
func numbered(m map[string]any) ([]any, bool) {
	if len(m) == 0 {
		return nil, false
	}
	idx := make([]int, 0, len(m))
	for k := range m {
		n, err := strconv.Atoi(k)
		if err != nil || n < 1 {
			return nil, false
		}
		idx = append(idx, n)
	}
	slices.Sort(idx)
	out := make([]any, 0, len(idx))
	for _, n := range idx {
		out = append(out, m[strconv.Itoa(n)])
	}
	return out, true
}

// pairs turns a list of {key, value} structures into a map.
func pairs(l []any, key, value string) (map[string]any, bool) {
	out := make(map[string]any, len(l))
	for _, e := range l {
		em, ok := e.(map[string]any)
		if !ok {
			return nil, false
		}
		k, ok := em[key].(string)
		if !ok {
			return nil, false
		}
		out[k] = em[value]
	}
	return out, true
}
