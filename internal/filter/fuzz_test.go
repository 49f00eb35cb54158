package filter

import (
	"bytes"
	"encoding/json"
	"errors"
	"strconv"
	"strings"
	"testing"
)

// probes are records every fuzzed filter is matched against: Match must
// not panic on any, and a filter and its recompiled String must agree.
var probes = []struct {
	headers map[string]string
	payload string
}{
	{nil, ``},
	{h{"a": "x"}, `{"a":"x"}`},
	{h{"a": "5", "b": "10.0.0.1"}, `{"a":5,"b":"10.0.0.1","c":{"d":[1,"x",null,true]}}`},
	{h{"a": `["x",5,null,true]`, "$or": "y"}, `{"a":[{"b":"x"},{"b":2}],"$or":"y"}`},
	{h{"colour": "red", "store": "north", "price": "9.5"}, `{"colour":"red","store":{"name":"north"},"price":9.5}`},
	{h{"": ""}, `{"":""}`},
}

// FuzzCompile holds Compile to its invariant: it never panics, refuses
// only with an *Error whose path starts at "filter", and what it accepts
// prints canonically: String compiles again to the same String and the
// same matches.
func FuzzCompile(f *testing.F) {
	for _, c := range headerCases {
		f.Add([]byte(c.policy), false)
	}
	for _, c := range payloadCases {
		f.Add([]byte(c.policy), true)
	}
	f.Add([]byte(`{"a":{"b":{"c":["1","2","3","4"]}},"d":{"e":["1","2","3"]}}`), true)
	f.Add([]byte(`{"$or":[{"numeric":123},{"prefix":"abc"}]}`), false)
	f.Add([]byte(`{"n":[1.50, 1e2, -0, 0.00001, 1000000000, {"numeric":[">=",-1e9,"<",1e-5]}]}`), false)
	f.Add([]byte(`{"q\"\\\u0001é<":["\u00e9\n",{"anything-but":{"prefix":"\u0000"}}]}`), true)
	f.Fuzz(func(t *testing.T, policy []byte, payload bool) {
		scope := Headers
		if payload {
			scope = Payload
		}
		flt, err := Compile(policy, scope)
		if err != nil {
			var fe *Error
			if !errors.As(err, &fe) || !strings.HasPrefix(fe.Path, "filter") {
				t.Fatalf("Compile refused with %v, not an *Error naming a path from filter", err)
			}
			return
		}
		canon := flt.String()
		again, err := Compile([]byte(canon), scope)
		if err != nil {
			t.Fatalf("String %s does not compile: %v", canon, err)
		}
		if again.String() != canon {
			t.Fatalf("String is not canonical:\n%s\n%s", canon, again.String())
		}
		if again.Combinations() != flt.Combinations() {
			t.Fatalf("combinations %d, recompiled %d", flt.Combinations(), again.Combinations())
		}
		for _, p := range probes {
			m, m2 := flt.Match(p.headers, []byte(p.payload)), again.Match(p.headers, []byte(p.payload))
			if m != m2 {
				t.Fatalf("%s and its String %s disagree on %v %s", policy, canon, p.headers, p.payload)
			}
			if scope == Payload && m != refMatch(t, flt, []byte(p.payload)) {
				t.Fatalf("%s on %s: Match %v, the reference reading %v", canon, p.payload, m, !m)
			}
		}
	})
}

// fuzzPolicies are the payload policies FuzzMatchPayload reads payloads
// with: nesting, $or, a path both a leaf and a parent, every operator.
var fuzzPolicies = []string{
	`{"a":["x",5,true,null]}`,
	`{"a":{"b":[{"prefix":"x"},{"numeric":[">",1,"<=",100]}]},"c":[{"exists":false}]}`,
	`{"$or":[{"a":["x"]},{"a":{"b":[{"anything-but":["y",2]}]}}]}`,
	`{"a":[{"exists":true}],"b":[{"suffix":"z"},{"equals-ignore-case":"Q"},{"cidr":"10.0.0.0/8"}]}`,
	`{"o":{"$or":[{"p":[{"anything-but":{"prefix":"a"}}]},{"q":[{"exists":false}]}]}}`,
}

// FuzzMatchPayload feeds Match what a client can send: payload bytes and
// a header value. Match must not panic, and its one-pass reading of the
// payload must agree with a plain decode of it (refMatch).
func FuzzMatchPayload(f *testing.F) {
	for _, p := range probes {
		f.Add([]byte(p.payload), p.headers["a"])
	}
	for _, c := range payloadCases {
		f.Add([]byte(c.payload), "")
	}
	f.Add([]byte(`{"a":{"b":"x","b":"y"},"a":[[["x"]]]}`), `[1,"x",{}]`)
	f.Add([]byte(`{"a":"\ud800\u00e9\"","c":{"\u0061":1}}`), "[\"\\u0078\"]")
	var fs []*Filter
	for _, p := range fuzzPolicies {
		fs = append(fs, mustCompile(f, p, Payload))
	}
	var hs []*Filter
	for _, p := range fuzzPolicies {
		if flt, err := Compile([]byte(p), Headers); err == nil {
			hs = append(hs, flt)
		}
	}
	f.Fuzz(func(t *testing.T, payload []byte, header string) {
		for _, flt := range fs {
			if got, want := flt.Match(nil, payload), refMatch(t, flt, payload); got != want {
				t.Fatalf("%s on %q: Match %v, the reference reading %v", flt, payload, got, want)
			}
		}
		for _, flt := range hs {
			flt.Match(h{"a": header, "b": header}, nil)
		}
	})
}

// refMatch is the payload scope read the plain way, as the oracle of the
// scanner: decode the whole payload (a key twice keeps both values, as
// the scanner does), gather each leaf path's values, evaluate the tree.
func refMatch(t *testing.T, f *Filter, payload []byte) bool {
	if f.root == nil {
		return true
	}
	if !json.Valid(payload) {
		return false
	}
	d := json.NewDecoder(bytes.NewReader(payload))
	d.UseNumber()
	doc, err := refDecode(d)
	if err != nil {
		t.Fatalf("reference decode of a valid payload: %v", err)
	}
	if _, ok := doc.(map[string][]any); !ok {
		return false
	}
	return refObject(f.root, doc)
}

func refDecode(d *json.Decoder) (any, error) {
	tok, err := d.Token()
	if err != nil {
		return nil, err
	}
	switch tok := tok.(type) {
	case json.Delim:
		if tok == '{' {
			m := map[string][]any{}
			for d.More() {
				k, err := d.Token()
				if err != nil {
					return nil, err
				}
				v, err := refDecode(d)
				if err != nil {
					return nil, err
				}
				m[k.(string)] = append(m[k.(string)], v)
			}
			_, err := d.Token()
			return m, err
		}
		var a []any
		for d.More() {
			v, err := refDecode(d)
			if err != nil {
				return nil, err
			}
			a = append(a, v)
		}
		_, err := d.Token()
		return a, err
	}
	return tok, nil
}

func refObject(o *object, doc any) bool {
	for i := range o.fields {
		fd := &o.fields[i]
		ok := false
		if fd.child != nil {
			ok = refObject(fd.child, doc)
		} else {
			ok = refLeaf(fd.leaf, refValues(doc, fd.leaf.path, nil))
		}
		if !ok {
			return false
		}
	}
	if o.or == nil {
		return true
	}
	for _, b := range o.or {
		if refObject(b, doc) {
			return true
		}
	}
	return false
}

// refValues gathers the leaves at path, arrays being transparent.
func refValues(v any, path []string, out []any) []any {
	switch v := v.(type) {
	case []any:
		for _, e := range v {
			out = refValues(e, path, out)
		}
		return out
	case map[string][]any:
		if len(path) == 0 {
			return out
		}
		for _, c := range v[path[0]] {
			out = refValues(c, path[1:], out)
		}
		return out
	}
	if len(path) == 0 {
		out = append(out, v)
	}
	return out
}

func refLeaf(l *leaf, vals []any) bool {
	present := false
	var vs []value
	for _, v := range vals {
		switch v := v.(type) {
		case string:
			vs = append(vs, value{kind: vString, s: v})
			present = true
		case json.Number:
			n, _ := strconv.ParseFloat(string(v), 64)
			vs = append(vs, value{kind: vNumber, q: quantise(n), hasNum: true})
			present = true
		case bool:
			vs = append(vs, value{kind: vBool, b: v})
			present = true
		case nil:
			vs = append(vs, value{kind: vNull})
		}
	}
	for _, c := range l.conds {
		if c.kind == exists {
			if c.b == present {
				return true
			}
			continue
		}
		for i := range vs {
			if c.match(&vs[i]) {
				return true
			}
		}
	}
	return false
}
