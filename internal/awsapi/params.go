package awsapi

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/narad-io/narad/internal/awsattr"
)

// params is an action's input as the JSON protocol shapes it: objects,
// lists, strings, numbers and booleans. A Query request is converted to
// the same shape (query.go), where every scalar is a string; the
// accessors below read either.
type params map[string]any

// decodeJSON reads a JSON protocol body. An empty body is no parameters.
func decodeJSON(body []byte) (params, error) {
	if len(bytes.TrimSpace(body)) == 0 {
		return params{}, nil
	}
	p, err := (&jsonReader{b: body}).readObject()
	if err != nil {
		return nil, errMalformedBody.f("The request body is not a JSON object: %v", err)
	}
	return p, nil
}

func (p params) has(name string) bool {
	v, ok := p[name]
	return ok && v != nil
}

// str is a string parameter ("" when absent).
func (p params) str(name string) (string, error) {
	switch v := p[name].(type) {
	case nil:
		return "", nil
	case string:
		return v, nil
	case json.Number:
		return v.String(), nil
	case bool:
		return strconv.FormatBool(v), nil
	}
	return "", errInvalidParameter.f("Value for parameter %s is invalid. Reason: must be a string.", name)
}

// required is a string parameter that must be given and not empty.
func (p params) required(name string) (string, error) {
	s, err := p.str(name)
	if err != nil {
		return "", err
	}
	if s == "" {
		return "", errMissingParameter.f("The request must contain the parameter %s.", name)
	}
	return s, nil
}

// integer is an integer parameter within [lo, hi]; def when absent.
func (p params) integer(name string, def, lo, hi int64) (int64, error) {
	var s string
	switch v := p[name].(type) {
	case nil:
		return def, nil
	case string:
		s = v
	case json.Number:
		s = v.String()
	default:
		return 0, errInvalidParameter.f("Value for parameter %s is invalid. Reason: must be an integer.", name)
	}
	n, err := strconv.ParseInt(strings.TrimSpace(s), 10, 64)
	if err != nil {
		if f, ferr := strconv.ParseFloat(s, 64); ferr == nil && f == math.Trunc(f) && math.Abs(f) < 1<<53 {
			n, err = int64(f), nil
		}
	}
	if err != nil {
		return 0, errInvalidParameter.f("Value %s for parameter %s is invalid. Reason: must be an integer.", s, name)
	}
	if n < lo || n > hi {
		return 0, errInvalidParameter.f("Value %d for parameter %s is invalid. Reason: must be between %d and %d.", n, name, lo, hi)
	}
	return n, nil
}

// strings is a list of strings (AttributeNames, TagKeys).
func (p params) strings(name string) ([]string, error) {
	v, ok := p[name]
	if !ok || v == nil {
		return nil, nil
	}
	list, ok := v.([]any)
	if !ok {
		return nil, errInvalidParameter.f("Value for parameter %s is invalid. Reason: must be a list of strings.", name)
	}
	out := make([]string, 0, len(list))
	for _, e := range list {
		s, ok := e.(string)
		if !ok {
			return nil, errInvalidParameter.f("Value for parameter %s is invalid. Reason: must be a list of strings.", name)
		}
		out = append(out, s)
	}
	return out, nil
}

// stringMap is a map of strings (Attributes, tags).
func (p params) stringMap(name string) (map[string]string, error) {
	v, ok := p[name]
	if !ok || v == nil {
		return nil, nil
	}
	m, ok := v.(map[string]any)
	if !ok {
		return nil, errInvalidParameter.f("Value for parameter %s is invalid. Reason: must be a map of strings.", name)
	}
	out := make(map[string]string, len(m))
	for k, e := range m {
		switch s := e.(type) {
		case string:
			out[k] = s
		case json.Number:
			out[k] = s.String()
		case bool:
			out[k] = strconv.FormatBool(s)
		default:
			return nil, errInvalidParameter.f("Value for parameter %s.%s is invalid. Reason: must be a string.", name, k)
		}
	}
	return out, nil
}

// list is a list of objects (batch entries).
func (p params) list(name string) ([]params, error) {
	v, ok := p[name]
	if !ok || v == nil {
		return nil, nil
	}
	l, ok := v.([]any)
	if !ok {
		return nil, errInvalidParameter.f("Value for parameter %s is invalid. Reason: must be a list.", name)
	}
	out := make([]params, 0, len(l))
	for _, e := range l {
		m, ok := e.(map[string]any)
		if !ok {
			return nil, errInvalidParameter.f("Value for parameter %s is invalid. Reason: must be a list of structures.", name)
		}
		out = append(out, m)
	}
	return out, nil
}

// attributes reads a MessageAttributes-shaped map: name to {DataType,
// StringValue, BinaryValue}, BinaryValue in base64 (both protocols), and
// checks it (awsattr.Check): sorted by name.
func (p params) attributes(name string) ([]awsattr.Attribute, error) {
	v, ok := p[name]
	if !ok || v == nil {
		return nil, nil
	}
	m, ok := v.(map[string]any)
	if !ok {
		return nil, errInvalidParameter.f("Value for parameter %s is invalid. Reason: must be a map.", name)
	}
	out := make([]awsattr.Attribute, 0, len(m))
	for k, e := range m {
		val, ok := e.(map[string]any)
		if !ok {
			return nil, errInvalidParameter.f("The message attribute '%s' must be a structure.", k)
		}
		vp := params(val)
		a := awsattr.Attribute{Name: k}
		var err error
		if a.DataType, err = vp.str("DataType"); err != nil {
			return nil, err
		}
		if a.StringValue, err = vp.str("StringValue"); err != nil {
			return nil, err
		}
		if b, ok := val["BinaryValue"]; ok && b != nil {
			s, _ := b.(string)
			if a.BinaryValue, err = base64.StdEncoding.DecodeString(s); err != nil {
				return nil, errInvalidParameter.f("The message attribute '%s' has a BinaryValue that is not base64.", k)
			}
			if a.BinaryValue == nil {
				a.BinaryValue = []byte{}
			}
		}
		if vp.has("StringListValues") || vp.has("BinaryListValues") {
			return nil, errInvalidParameter.f("The message attribute '%s' uses list values, which SQS reserves and does not support.", k)
		}
		out = append(out, a)
	}
	if err := awsattr.Check(out); err != nil {
		if ae, ok := err.(*awsattr.Error); ok {
			return nil, errInvalidParameter.f("%s", ae.Message)
		}
		return nil, err
	}
	return out, nil
}

// sortedKeys is m's keys in order: answers are deterministic.
func sortedKeys[V any](m map[string]V) []string {
	ks := make([]string, 0, len(m))
	for k := range m {
		ks = append(ks, k)
	}
	slices.Sort(ks)
	return ks
}
