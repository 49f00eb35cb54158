package httpapi

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"reflect"
	"strings"
	"testing"
)

// What the key check lets through: a client's payload is its own (its
// keys may repeat and are stored as sent), distinct keys in any nesting,
// escaped keys that decode to distinct names, and the exact field names.
func TestCheckKeysAcceptsWhatIsMeant(t *testing.T) {
	e := newEnv(t)
	w := e.do(request{method: "POST", target: "/v1/topics/orders/produce/batch",
		body: `{"records":[{"key":"k","payload":{"a":1,"a":2,"A":3}}, {"payload":[{"x":1},{"x":2}]}]}`})
	if w.Code != 202 {
		t.Fatalf("a payload with repeated keys: %d %q", w.Code, w.Body.String())
	}
	if c := e.rec.last("ProduceBatch"); !strings.Contains(c, `payload="{\"a\":1,\"a\":2,\"A\":3}"`) {
		t.Fatalf("stored %s", c)
	}
	for _, body := range []string{
		`{"name":"a","schema":{"type":"object","properties":{"type":{"type":"string"}}}}`,
		`{"name":"a","\u0070artitions":3}`,
		` {"name" : "a" , "partitions" : 3 } `,
	} {
		if w := e.do(request{method: "POST", target: "/v1/topics", body: body}); w.Code != 201 {
			t.Errorf("%s: %d %q", body, w.Code, w.Body.String())
		}
	}
}

// The hand-written walker against encoding/json's tokenizer: for any
// valid JSON read as free-form JSON, checkKeys refuses exactly the values
// with a key given twice in one object.
func FuzzCheckKeys(f *testing.F) {
	for _, s := range []string{`{}`, `{"a":1,"a":2}`, `{"a":{"b":[{"c":1,"c":2}]}}`, `[{"a":"}"},{"a":"\""}]`,
		`{"a\u0062":1,"ab":2}`, `"x"`, `[1,2,{"":1,"":2}]`, ` { "a" : [ ] , "b" : { } } `, `{"a":"\\","b":"\\\""}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		if !json.Valid(body) {
			return
		}
		got := checkKeys(body, reflect.TypeFor[any]())
		want := tokenDuplicates(body)
		if (got != nil) != want {
			t.Fatalf("checkKeys(%q) = %v, the tokenizer says duplicate=%v", body, got, want)
		}
	})
}

// tokenDuplicates reports whether some object in body repeats a key.
func tokenDuplicates(body []byte) bool {
	dec := json.NewDecoder(bytes.NewReader(body))
	type frame struct {
		object bool
		keys   map[string]bool
		want   bool // the next string token is a key
	}
	var stack []*frame
	for {
		tok, err := dec.Token()
		if errors.Is(err, io.EOF) {
			return false
		}
		if err != nil {
			return false
		}
		var top *frame
		if len(stack) > 0 {
			top = stack[len(stack)-1]
		}
		switch v := tok.(type) {
		case json.Delim:
			switch v {
			case '{', '[':
				if top != nil && top.object {
					top.want = true
				}
				stack = append(stack, &frame{object: v == '{', keys: map[string]bool{}, want: v == '{'})
				continue
			default:
				stack = stack[:len(stack)-1]
				continue
			}
		case string:
			if top != nil && top.object && top.want {
				if top.keys[v] {
					return true
				}
				top.keys[v] = true
				top.want = false
				continue
			}
		}
		if top != nil && top.object {
			top.want = true
		}
	}
}
