package httpapi

import (
	"fmt"

	"github.com/narad-io/narad/internal/header"
)

// headersValue scans a record's "headers" value into f as encoding/json
// decodes it into a map[string]string, refusing in its words and order:
// null is no headers; anything but an object is a type error on the
// field; inside, a null value is the empty string and a value that is no
// string a type error (encoding/json names the field "headers", not the
// key, and goes on); a name given twice is checkKeys' refusal, with its
// path. Names and values are unquoted as encoding/json does (invalid
// UTF-8 becomes U+FFFD). The header rules themselves are the broker's.
func (s *jsonScan) headersValue(f *recordFields) bool {
	switch c := s.b[s.i]; c {
	case 'n':
		f.has &^= fHeaders
		f.headers = nil
		return s.literal("null")
	case '{':
	default:
		f.decodeErr(fmt.Sprintf("field %q: want an object, got a JSON %s", "headers", kindOf(c)))
		return s.skip()
	}
	f.has |= fHeaders
	// encoding/json merges a second "headers" object into the first; the
	// record is refused then anyway (the field is given twice).
	if empty, ok := s.open(true); !ok || empty {
		return ok
	}
	for {
		if s.b[s.i] != '"' {
			return s.failAt(s.i)
		}
		start := s.i
		if _, ok := s.str(); !ok {
			return false
		}
		name := string(unquote(s.b[start:s.i]))
		if !s.colon() {
			return false
		}
		value, ok := "", true
		switch c := s.b[s.i]; c {
		case '"':
			vs := s.i
			if _, ok = s.str(); ok {
				value = string(unquote(s.b[vs:s.i]))
			}
		case 'n':
			ok = s.literal("null")
		default:
			f.decodeErr(fmt.Sprintf("field %q: want a string, got a JSON %s", "headers", kindOf(c)))
			ok = s.skip()
		}
		if !ok {
			return false
		}
		f.addHeader(name, value)
		s.ws()
		if s.i >= len(s.b) {
			return s.early()
		}
		switch s.b[s.i] {
		case ',':
			s.i++
			s.ws()
			if s.i >= len(s.b) {
				return s.early()
			}
		case '}':
			s.i++
			s.depth--
			return true
		default:
			return s.failAt(s.i)
		}
	}
}

// addHeader keeps a header, noting checkKeys' refusal of a name given
// twice (a map's keys are checked for duplicates, by their decoded text).
// Past a few headers the names are indexed, so a body of a million names
// costs linear time (it is refused afterwards, but only once read).
func (f *recordFields) addHeader(name, value string) {
	i, dup := -1, false
	if f.headerIdx != nil {
		i, dup = f.headerIdx[name]
	} else {
		for j := range f.headers {
			if f.headers[j].Name == name {
				i, dup = j, true
				break
			}
		}
	}
	if dup {
		if f.keyErr == "" {
			f.keyErr = fmt.Sprintf("field %q is given twice", "headers."+name)
		}
		f.headers[i].Value = value // the last wins, as in a map
		return
	}
	if f.headers == nil {
		f.headers = make([]header.Header, 0, 4)
	}
	f.headers = append(f.headers, header.Header{Name: name, Value: value})
	switch n := len(f.headers); {
	case f.headerIdx != nil:
		f.headerIdx[name] = n - 1
	case n == 16:
		f.headerIdx = make(map[string]int, 64)
		for j, h := range f.headers {
			f.headerIdx[h.Name] = j
		}
	}
}
