package httpapi

import (
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"sync"

	"github.com/narad-io/narad/internal/apierr"
)

// encoding/json is lenient about keys in two ways that make a body mean
// something other than what it says: it matches field names without
// regard to case ("Partitions" sets partitions) and lets the last of two
// equal keys win ({"partitions": 3, "partitions": 9}). checkKeys refuses
// both, as unknown fields are refused (docs/http-api.md), by walking the
// body along the shape of the type it was decoded into.
//
// A field tagged `strict:"opaque"` is a client's own data (a batch
// record's payload, stored as it is) and is not looked into. Any other
// free-form JSON (json.RawMessage, any, maps: a schema, a remote link's
// settings) has its keys checked for duplicates, not for names.

// shape is what a JSON value may look like where a type is decoded.
type shape struct {
	kind   shapeKind
	fields map[string]*shape // kindStruct: by exact JSON name
	elem   *shape            // kindArray, kindMap
}

type shapeKind int

const (
	kindLeaf   shapeKind = iota // a number, string, bool: nothing inside
	kindOpaque                  // not looked into
	kindAny                     // free-form JSON: no duplicate keys at any depth
	kindStruct
	kindMap
	kindArray
)

var (
	anyShape    = &shape{kind: kindAny}
	opaqueShape = &shape{kind: kindOpaque}
	leafShape   = &shape{kind: kindLeaf}
	shapes      sync.Map // reflect.Type -> *shape
	rawType     = reflect.TypeFor[json.RawMessage]()
	unmarshaler = reflect.TypeFor[json.Unmarshaler]()
)

func shapeOf(t reflect.Type) *shape {
	if s, ok := shapes.Load(t); ok {
		return s.(*shape)
	}
	s := buildShape(t, map[reflect.Type]*shape{})
	shapes.Store(t, s)
	return s
}

func buildShape(t reflect.Type, seen map[reflect.Type]*shape) *shape {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if t == rawType || t.Kind() == reflect.Interface {
		return anyShape
	}
	if reflect.PointerTo(t).Implements(unmarshaler) {
		return anyShape // decodes itself: its keys are its own business, but not twice
	}
	if s, ok := seen[t]; ok {
		return s // a recursive type
	}
	switch t.Kind() {
	case reflect.Struct:
		s := &shape{kind: kindStruct, fields: map[string]*shape{}}
		seen[t] = s
		addFields(s, t, seen)
		return s
	case reflect.Map:
		s := &shape{kind: kindMap}
		seen[t] = s
		s.elem = buildShape(t.Elem(), seen)
		return s
	case reflect.Slice, reflect.Array:
		if t.Elem().Kind() == reflect.Uint8 {
			return leafShape // []byte is a base64 string
		}
		s := &shape{kind: kindArray}
		seen[t] = s
		s.elem = buildShape(t.Elem(), seen)
		return s
	}
	return leafShape
}

// addFields adds t's JSON fields to s as encoding/json names them,
// promoting the fields of embedded structs.
func addFields(s *shape, t reflect.Type, seen map[reflect.Type]*shape) {
	for i := range t.NumField() {
		f := t.Field(i)
		tag := f.Tag.Get("json")
		if tag == "-" {
			continue
		}
		name, _, _ := strings.Cut(tag, ",")
		ft := f.Type
		for ft.Kind() == reflect.Pointer {
			ft = ft.Elem()
		}
		if f.Anonymous && name == "" && ft.Kind() == reflect.Struct {
			addFields(s, ft, seen)
			continue
		}
		if !f.IsExported() {
			continue
		}
		if name == "" {
			name = f.Name
		}
		if f.Tag.Get("strict") == "opaque" {
			s.fields[name] = opaqueShape
		} else {
			s.fields[name] = buildShape(f.Type, seen)
		}
	}
}

// checkKeys walks body — valid JSON, already decoded into a value of
// type t — and refuses a duplicate key or a field name that matches only
// without regard to case.
func checkKeys(body []byte, t reflect.Type) error {
	w := keyWalker{b: body}
	w.ws()
	if err := w.value(shapeOf(t), ""); err != nil {
		return apierr.BadRequest("invalid JSON body: %v", err)
	}
	return nil
}

// keyWalker scans JSON that a decoder accepted already, so it checks no
// syntax of its own.
type keyWalker struct {
	b []byte
	i int
}

func (w *keyWalker) ws() {
	for w.i < len(w.b) {
		switch w.b[w.i] {
		case ' ', '\t', '\r', '\n':
			w.i++
		default:
			return
		}
	}
}

func (w *keyWalker) value(s *shape, path string) error {
	if w.i >= len(w.b) {
		return nil
	}
	switch c := w.b[w.i]; {
	case s.kind == kindOpaque, s.kind == kindLeaf:
		w.skip()
	case c == '{' && (s.kind == kindStruct || s.kind == kindMap || s.kind == kindAny):
		return w.object(s, path)
	case c == '[' && (s.kind == kindArray || s.kind == kindAny):
		elem := s.elem
		if s.kind == kindAny {
			elem = anyShape
		}
		w.i++
		for n := 0; ; n++ {
			w.ws()
			if w.b[w.i] == ']' {
				w.i++
				return nil
			}
			if err := w.value(elem, fmt.Sprintf("%s[%d]", path, n)); err != nil {
				return err
			}
			w.ws()
			if w.b[w.i] == ',' {
				w.i++
			}
		}
	default:
		w.skip() // null, or a value the decoder took for this type
	}
	return nil
}

func (w *keyWalker) object(s *shape, path string) error {
	w.i++
	seen := map[string]bool{}
	for {
		w.ws()
		if w.b[w.i] == '}' {
			w.i++
			return nil
		}
		key := w.key()
		at := key
		if path != "" {
			at = path + "." + key
		}
		if seen[key] {
			return fmt.Errorf("field %q is given twice", at)
		}
		seen[key] = true
		w.ws()
		w.i++ // ':'
		w.ws()
		inner := anyShape
		switch s.kind {
		case kindStruct:
			f, ok := s.fields[key]
			if !ok {
				for name := range s.fields {
					if strings.EqualFold(name, key) {
						return fmt.Errorf("unknown field %q (field names are case-sensitive: did you mean %q?)", at, name)
					}
				}
				return fmt.Errorf("unknown field %q", at)
			}
			inner = f
		case kindMap:
			inner = s.elem
		}
		if err := w.value(inner, at); err != nil {
			return err
		}
		w.ws()
		if w.b[w.i] == ',' {
			w.i++
		}
	}
}

// key reads an object key, decoding escapes when it has any.
func (w *keyWalker) key() string {
	start := w.i
	w.skipString()
	raw := w.b[start:w.i]
	inner := raw[1 : len(raw)-1]
	for _, c := range inner {
		if c == '\\' {
			var k string
			json.Unmarshal(raw, &k) // valid: the decoder read it
			return k
		}
	}
	return string(inner)
}

func (w *keyWalker) skipString() {
	w.i++ // opening quote
	for w.i < len(w.b) {
		switch w.b[w.i] {
		case '\\':
			w.i += 2
		case '"':
			w.i++
			return
		default:
			w.i++
		}
	}
}

// skip steps over one value of any kind.
func (w *keyWalker) skip() {
	depth := 0
	for w.i < len(w.b) {
		switch c := w.b[w.i]; c {
		case '"':
			w.skipString()
			if depth == 0 {
				return
			}
			continue
		case '{', '[':
			depth++
		case '}', ']':
			if depth == 0 {
				return // the end of the enclosing value
			}
			depth--
			if depth == 0 {
				w.i++
				return
			}
		case ',':
			if depth == 0 {
				return
			}
		case ' ', '\t', '\r', '\n':
			if depth == 0 {
				return
			}
		}
		w.i++
	}
}
