package awsapi

import (
	"encoding/json"
	"slices"
	"strconv"

	"github.com/narad-io/narad/internal/jsonenc"
)

// The JSON protocol's answers are the actions' outputs — maps, lists and
// scalars — written by appendValue rather than by encoding/json, whose
// reflection over nested maps was most of a ReceiveMessage answer's cost
// (BenchmarkEdgeReceiveMessage). Objects' keys are sorted, as
// encoding/json sorts a map's; strings are written as jsonenc writes them.

// appendValue appends v as JSON.
func appendValue(b []byte, v any) []byte {
	switch v := v.(type) {
	case nil:
		return append(b, "null"...)
	case string:
		return jsonenc.AppendString(b, v)
	case bool:
		return strconv.AppendBool(b, v)
	case int:
		return strconv.AppendInt(b, int64(v), 10)
	case int64:
		return strconv.AppendInt(b, v, 10)
	case json.Number:
		return append(b, v...)
	case map[string]any:
		return appendObject(b, v)
	case map[string]string:
		return appendObject(b, v)
	case []any:
		return appendList(b, v)
	case object:
		return v.appendJSON(b)
	case []string:
		if v == nil {
			return append(b, "null"...)
		}
		b = append(b, '[')
		for i, s := range v {
			if i > 0 {
				b = append(b, ',')
			}
			b = jsonenc.AppendString(b, s)
		}
		return append(b, ']')
	}
	// A type the actions do not build today: encoding/json's answer.
	raw, err := json.Marshal(v)
	if err != nil {
		return append(b, "null"...)
	}
	return append(b, raw...)
}

func appendList(b []byte, vs []any) []byte {
	if vs == nil {
		return append(b, "null"...)
	}
	b = append(b, '[')
	for i, v := range vs {
		if i > 0 {
			b = append(b, ',')
		}
		b = appendValue(b, v)
	}
	return append(b, ']')
}

func appendObject[V any](b []byte, m map[string]V) []byte {
	// The keys of an answer's objects are few: sorted on the stack.
	var buf [16]string
	ks := buf[:0]
	for k := range m {
		ks = append(ks, k)
	}
	slices.Sort(ks)
	b = append(b, '{')
	for i, k := range ks {
		if i > 0 {
			b = append(b, ',')
		}
		b = jsonenc.AppendString(b, k)
		b = append(b, ':')
		b = appendValue(b, m[k])
	}
	return append(b, '}')
}
