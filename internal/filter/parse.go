package filter

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"strconv"
)

// maxJSONDepth bounds how deep Compile reads a policy's JSON before it
// knows what the nesting means, so a hostile policy cannot make it
// recurse without end. A policy within MaxDepth and the combination cap
// never comes near it.
const maxJSONDepth = 64

// jv is a policy's JSON as read: objects keep their keys' order, and a
// number its literal, so Compile can check its precision as written.
type jv struct {
	kind byte // '{', '[', 's' string, 'n' number, 'b' bool, '0' null
	s    string
	b    bool
	keys []string // objects
	vals []*jv    // objects' values, arrays' elements
}

// readJSON reads one JSON value and nothing after it. It refuses an
// object with the same key twice: encoding/json would keep the last one
// silently, and a policy that says two things should be told so.
func readJSON(policy []byte) (*jv, error) {
	d := json.NewDecoder(bytes.NewReader(policy))
	d.UseNumber()
	v, err := readValue(d, "filter", 0)
	if err != nil {
		return nil, err
	}
	if _, err := d.Token(); err != io.EOF {
		return nil, errAt("filter", "invalid JSON: more after the policy's object")
	}
	return v, nil
}

func readValue(d *json.Decoder, path string, depth int) (*jv, error) {
	if depth > maxJSONDepth {
		return nil, errAt(path, "nested deeper than %d", maxJSONDepth)
	}
	t, err := d.Token()
	if err != nil {
		return nil, jsonError(path, err)
	}
	switch t := t.(type) {
	case json.Delim:
		switch t {
		case '{':
			v := &jv{kind: '{'}
			seen := map[string]bool{}
			for d.More() {
				kt, err := d.Token()
				if err != nil {
					return nil, jsonError(path, err)
				}
				k, ok := kt.(string)
				if !ok {
					return nil, errAt(path, "invalid JSON: want a key")
				}
				kp := pathString(path, k)
				if seen[k] {
					return nil, errAt(kp, "key given twice")
				}
				seen[k] = true
				c, err := readValue(d, kp, depth+1)
				if err != nil {
					return nil, err
				}
				v.keys = append(v.keys, k)
				v.vals = append(v.vals, c)
			}
			if _, err := d.Token(); err != nil { // '}'
				return nil, jsonError(path, err)
			}
			return v, nil
		case '[':
			v := &jv{kind: '['}
			for d.More() {
				c, err := readValue(d, path+"["+strconv.Itoa(len(v.vals))+"]", depth+1)
				if err != nil {
					return nil, err
				}
				v.vals = append(v.vals, c)
			}
			if _, err := d.Token(); err != nil { // ']'
				return nil, jsonError(path, err)
			}
			return v, nil
		}
		return nil, errAt(path, "invalid JSON: unexpected %q", rune(t))
	case string:
		return &jv{kind: 's', s: t}, nil
	case json.Number:
		return &jv{kind: 'n', s: string(t)}, nil
	case bool:
		return &jv{kind: 'b', b: t}, nil
	case nil:
		return &jv{kind: '0'}, nil
	}
	return nil, errAt(path, "invalid JSON")
}

func jsonError(path string, err error) error {
	if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
		return errAt(path, "invalid JSON: it ends too soon")
	}
	return errAt(path, "invalid JSON: %v", err)
}

// what names a JSON value's type in an error.
func (v *jv) what() string {
	switch v.kind {
	case '{':
		return "an object"
	case '[':
		return "an array"
	case 's':
		return "a string"
	case 'n':
		return "a number"
	case 'b':
		return "a boolean"
	}
	return "null"
}
