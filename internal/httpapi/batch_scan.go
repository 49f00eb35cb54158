package httpapi

import (
	"strconv"
	"unicode/utf8"
)

// jsonScan is a one-pass JSON validator for the batch bodies: it checks
// the grammar exactly as encoding/json's scanner does (the same bytes
// refused, the same "malformed JSON at byte N" offset, the same
// "exceeded max depth" limit, the same "ends early" at a cut body), and
// steps over values with no recursion and no allocation, so a body of
// 16 MiB of brackets costs one bounded walk.
//
// The batch decoders (batch_json.go, batch_ndjson.go) drive it along the
// known shape; encoding/json, which took 41% of a batch produce's server
// CPU (its scanner 28%, unmarshal 13%: ~5 µs a record), is the oracle of
// their differential fuzz test and no longer on the request path.
type jsonScan struct {
	b       []byte
	i       int
	depth   int    // open containers, counted as encoding/json counts them
	problem string // why the body is not JSON; set once, scanning stops
	objects [maxJSONDepth/64 + 1]uint64
}

// maxJSONDepth is encoding/json's nesting limit: a body it refuses for
// depth is refused here at the same byte.
const maxJSONDepth = 10000

// The problems, in decodeStrict's words (jsonProblem).
const problemEarly = "the JSON ends early"

func (s *jsonScan) failAt(i int) bool {
	s.problem = "malformed JSON at byte " + strconv.Itoa(i+1)
	return false
}

func (s *jsonScan) early() bool {
	s.problem = problemEarly
	return false
}

func (s *jsonScan) ws() {
	for s.i < len(s.b) {
		switch s.b[s.i] {
		case ' ', '\t', '\r', '\n':
			s.i++
		default:
			return
		}
	}
}

// push opens the container at s.i (an object when obj).
func (s *jsonScan) push(obj bool) bool {
	s.depth++
	if s.depth > maxJSONDepth {
		return s.failAt(s.i)
	}
	w, bit := s.depth>>6, uint64(1)<<(s.depth&63)
	if obj {
		s.objects[w] |= bit
	} else {
		s.objects[w] &^= bit
	}
	return true
}

// open enters the object or array whose bracket is at s.i: it pushes the
// level and steps past the bracket and any whitespace. An empty container
// is stepped over whole (its close too, the level popped): empty is true.
// ok is false when the nesting is too deep or the body ends (s.problem
// says which).
func (s *jsonScan) open(obj bool) (empty, ok bool) {
	if !s.push(obj) {
		return false, false
	}
	s.i++
	s.ws()
	if s.i >= len(s.b) {
		return false, s.early()
	}
	if c := s.b[s.i]; obj && c == '}' || !obj && c == ']' {
		s.i++
		s.depth--
		return true, true
	}
	return false, true
}

func (s *jsonScan) inObject() bool {
	return s.objects[s.depth>>6]&(uint64(1)<<(s.depth&63)) != 0
}

// strStop marks the bytes that end the fast run inside a string: the
// quote, the backslash and the control characters JSON refuses.
var strStop = func() (t [256]bool) {
	for c := range 0x20 {
		t[c] = true
	}
	t['"'], t['\\'] = true, true
	return t
}()

// str steps over the string starting at s.i (a quote) and says whether it
// holds an escape.
func (s *jsonScan) str() (esc, ok bool) {
	b, i := s.b, s.i+1
	for {
		for i < len(b) && !strStop[b[i]] {
			i++
		}
		if i >= len(b) {
			return esc, s.early()
		}
		switch c := b[i]; {
		case c == '"':
			s.i = i + 1
			return esc, true
		case c < 0x20:
			return esc, s.failAt(i)
		}
		esc = true
		i++
		if i >= len(b) {
			return esc, s.early()
		}
		switch b[i] {
		case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
			i++
		case 'u':
			i++
			for range 4 {
				if i >= len(b) {
					return esc, s.early()
				}
				if !isHex(b[i]) {
					return esc, s.failAt(i)
				}
				i++
			}
		default:
			return esc, s.failAt(i)
		}
	}
}

func isHex(c byte) bool {
	return '0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F'
}

func isDigit(c byte) bool { return '0' <= c && c <= '9' }

// number steps over the number starting at s.i ('-' or a digit). It ends
// at the first byte that cannot continue it; what follows is judged by
// the caller, as encoding/json judges it.
func (s *jsonScan) number() bool {
	b, i := s.b, s.i
	if b[i] == '-' {
		i++
		if i >= len(b) {
			return s.early()
		}
	}
	switch {
	case b[i] == '0':
		i++
	case isDigit(b[i]):
		for i++; i < len(b) && isDigit(b[i]); i++ {
		}
	default:
		return s.failAt(i)
	}
	if i < len(b) && b[i] == '.' {
		i++
		if i >= len(b) {
			return s.early()
		}
		if !isDigit(b[i]) {
			return s.failAt(i)
		}
		for i++; i < len(b) && isDigit(b[i]); i++ {
		}
	}
	if i < len(b) && (b[i] == 'e' || b[i] == 'E') {
		i++
		if i < len(b) && (b[i] == '+' || b[i] == '-') {
			i++
		}
		if i >= len(b) {
			return s.early()
		}
		if !isDigit(b[i]) {
			return s.failAt(i)
		}
		for i++; i < len(b) && isDigit(b[i]); i++ {
		}
	}
	s.i = i
	return true
}

// literal steps over true, false or null at s.i.
func (s *jsonScan) literal(word string) bool {
	for k := 1; k < len(word); k++ {
		if s.i+k >= len(s.b) {
			return s.early()
		}
		if s.b[s.i+k] != word[k] {
			return s.failAt(s.i + k)
		}
	}
	s.i += len(word)
	return true
}

// scalar steps over a value that is not a container.
func (s *jsonScan) scalar() bool {
	switch c := s.b[s.i]; c {
	case '"':
		_, ok := s.str()
		return ok
	case 't':
		return s.literal("true")
	case 'f':
		return s.literal("false")
	case 'n':
		return s.literal("null")
	default:
		if c == '-' || isDigit(c) {
			return s.number()
		}
		return s.failAt(s.i)
	}
}

// skip validates and steps over one value starting at s.i (no leading
// whitespace), iteratively: nesting costs a bit per level, not a frame.
func (s *jsonScan) skip() bool {
	base := s.depth
	for {
		// At the start of a value.
		if s.i >= len(s.b) {
			return s.early()
		}
		ended := true
		switch c := s.b[s.i]; c {
		case '{', '[':
			empty, ok := s.open(c == '{')
			if !ok {
				return false
			}
			if empty {
				break
			}
			ended = false
			if c == '{' && !s.memberKey() {
				return false
			}
		default:
			if !s.scalar() {
				return false
			}
		}
		if !ended {
			continue
		}
		// A value ended: close what ends with it, or go on to the next.
		for next := false; !next; {
			if s.depth == base {
				return true
			}
			s.ws()
			if s.i >= len(s.b) {
				return s.early()
			}
			obj := s.inObject()
			switch c := s.b[s.i]; {
			case c == ',':
				s.i++
				s.ws()
				if obj && !s.memberKey() {
					return false
				}
				next = true
			case c == '}' && obj, c == ']' && !obj:
				s.i++
				s.depth--
			default:
				return s.failAt(s.i)
			}
		}
	}
}

// memberKey steps over `"key" :` and the whitespace after it, leaving s.i
// at the member's value.
func (s *jsonScan) memberKey() bool {
	if s.i >= len(s.b) {
		return s.early()
	}
	if s.b[s.i] != '"' {
		return s.failAt(s.i)
	}
	if _, ok := s.str(); !ok {
		return false
	}
	return s.colon()
}

// colon steps over the whitespace, ':' and whitespace after a key.
func (s *jsonScan) colon() bool {
	s.ws()
	if s.i >= len(s.b) {
		return s.early()
	}
	if s.b[s.i] != ':' {
		return s.failAt(s.i)
	}
	s.i++
	s.ws()
	if s.i >= len(s.b) {
		return s.early()
	}
	return true
}

// kindOf names the JSON kind of the value starting with c, as
// encoding/json's type errors do.
func kindOf(c byte) string {
	switch c {
	case '{':
		return "object"
	case '[':
		return "array"
	case '"':
		return "string"
	case 't', 'f':
		return "bool"
	case 'n':
		return "null"
	}
	return "number"
}

// unquote is the text of the JSON string raw (quotes included, valid),
// decoded as encoding/json decodes it: raw's own bytes when it holds no
// escape and is valid UTF-8, else a copy with escapes resolved, a lone or
// broken surrogate and every invalid UTF-8 byte as U+FFFD.
func unquote(raw []byte) []byte {
	s := raw[1 : len(raw)-1]
	r := 0
	for r < len(s) {
		c := s[r]
		if c == '\\' {
			break
		}
		if c < utf8.RuneSelf {
			r++
			continue
		}
		rr, size := utf8.DecodeRune(s[r:])
		if rr == utf8.RuneError && size == 1 {
			break
		}
		r += size
	}
	if r == len(s) {
		return s
	}
	b := make([]byte, 0, len(s)+utf8.UTFMax)
	b = append(b, s[:r]...)
	for r < len(s) {
		switch c := s[r]; {
		case c == '\\':
			r++
			switch s[r] {
			case 'b':
				b = append(b, '\b')
			case 'f':
				b = append(b, '\f')
			case 'n':
				b = append(b, '\n')
			case 'r':
				b = append(b, '\r')
			case 't':
				b = append(b, '\t')
			case 'u':
				rr := hex4(s[r+1:])
				r += 5
				if rr >= 0xd800 && rr < 0xe000 { // a surrogate
					if rr < 0xdc00 && r+6 <= len(s) && s[r] == '\\' && s[r+1] == 'u' {
						if lo := hex4(s[r+2:]); lo >= 0xdc00 && lo < 0xe000 {
							b = utf8.AppendRune(b, 0x10000+(rr-0xd800)<<10+(lo-0xdc00))
							r += 6
							continue
						}
					}
					rr = utf8.RuneError
				}
				b = utf8.AppendRune(b, rr)
				continue
			default: // '"', '\\', '/'
				b = append(b, s[r])
			}
			r++
		case c < utf8.RuneSelf:
			b = append(b, c)
			r++
		default:
			rr, size := utf8.DecodeRune(s[r:])
			b = utf8.AppendRune(b, rr)
			r += size
		}
	}
	return b
}

// hex4 is the value of four hex digits (validated by the scan), or -1
// when they are not (a \u cut short before a second surrogate half).
func hex4(s []byte) rune {
	if len(s) < 4 {
		return -1
	}
	var r rune
	for _, c := range s[:4] {
		switch {
		case '0' <= c && c <= '9':
			c -= '0'
		case 'a' <= c && c <= 'f':
			c = c - 'a' + 10
		case 'A' <= c && c <= 'F':
			c = c - 'A' + 10
		default:
			return -1
		}
		r = r*16 + rune(c)
	}
	return r
}
