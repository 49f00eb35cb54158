package filter

import (
	"bytes"
	"encoding/json"
	"strconv"
)

// matchHeader reports whether a header (v, present when ok) satisfies the
// leaf: any of its conditions holds for the header's value or, when the
// value is a JSON array of scalars (SNS's String.Array), for any element.
func (l *leaf) matchHeader(v string, ok bool) bool {
	if !ok {
		for _, c := range l.conds {
			if c.kind == exists && !c.b {
				return true
			}
		}
		return false
	}
	var hv value
	var elems []value
	if len(v) > 0 && v[0] == '[' {
		elems = arrayElements(v)
	}
	if elems == nil {
		hv = headerValue(v)
	}
	for _, c := range l.conds {
		if c.kind == exists {
			if c.b {
				return true
			}
			continue
		}
		if elems == nil {
			if c.match(&hv) {
				return true
			}
			continue
		}
		for i := range elems {
			if c.match(&elems[i]) {
				return true
			}
		}
	}
	return false
}

// headerValue is a header's value as a string that, when it is a JSON
// number, is also that number.
func headerValue(s string) value {
	v := value{kind: vString, s: s}
	if isNumber(s) {
		// A range error leaves ±Inf or 0, still the number's place in
		// the order.
		f, _ := strconv.ParseFloat(s, 64)
		v.q, v.hasNum = quantise(f), true
	}
	return v
}

// arrayElements reads a header's value as SNS reads a String.Array
// attribute: a JSON array whose elements are strings, numbers, booleans
// or null, each matched on its own with its JSON type. It returns nil
// for anything else (the value is then a plain string) and an empty,
// non-nil slice for "[]", which no value condition matches. This is the
// one place header matching allocates.
func arrayElements(s string) []value {
	b := []byte(s)
	if !json.Valid(b) {
		return nil
	}
	var raw []any
	d := json.NewDecoder(bytes.NewReader(b))
	d.UseNumber()
	if err := d.Decode(&raw); err != nil || raw == nil {
		return nil
	}
	out := make([]value, 0, len(raw))
	for _, e := range raw {
		switch e := e.(type) {
		case string:
			out = append(out, value{kind: vString, s: e})
		case json.Number:
			f, _ := strconv.ParseFloat(string(e), 64)
			out = append(out, value{kind: vNumber, q: quantise(f), hasNum: true})
		case bool:
			out = append(out, value{kind: vBool, b: e})
		case nil:
			out = append(out, value{kind: vNull})
		default:
			return nil // an object or an array: not a String.Array
		}
	}
	return out
}
