package filter

import (
	"encoding/json"
	"strconv"
)

// trieNode is one key of the paths a payload policy names.
type trieNode struct {
	children map[string]*trieNode
	slot     int // the leaf path's index, or -1 when no leaf ends here
}

// matchPayload reads the payload once, recording which conditions some
// value satisfied (a bit each) and which leaf paths hold a value (a bit
// each after those), then evaluates the policy over the bits.
func (f *Filter) matchPayload(payload []byte) bool {
	// SNS's MessageBody scope assumes a JSON object: anything else
	// matches no policy.
	if !json.Valid(payload) {
		return false
	}
	s := scanner{b: payload, f: f}
	s.ws()
	if s.i >= len(s.b) || s.b[s.i] != '{' {
		return false
	}
	var small [8]uint64
	s.bits = small[:]
	if n := (f.ncond+f.nslot)/64 + 1; n > len(small) {
		s.bits = make([]uint64, n)
	}
	s.value(f.trie)
	return f.root.matchBits(f, s.bits)
}

func (o *object) matchBits(f *Filter, bits []uint64) bool {
	for i := range o.fields {
		fd := &o.fields[i]
		if fd.child != nil {
			if !fd.child.matchBits(f, bits) {
				return false
			}
			continue
		}
		if !fd.leaf.matchBits(f, bits) {
			return false
		}
	}
	if o.or == nil {
		return true
	}
	for _, b := range o.or {
		if b.matchBits(f, bits) {
			return true
		}
	}
	return false
}

func (l *leaf) matchBits(f *Filter, bits []uint64) bool {
	present := bit(bits, f.ncond+l.slot)
	for _, c := range l.conds {
		if c.kind == exists {
			if c.b == present {
				return true
			}
			continue
		}
		if bit(bits, c.bit) {
			return true
		}
	}
	return false
}

func bit(bits []uint64, i int) bool { return bits[i/64]&(1<<(i%64)) != 0 }
func set(bits []uint64, i int)      { bits[i/64] |= 1 << (i % 64) }

// scanner walks a payload json.Valid has accepted, so it checks nothing
// of the syntax. It descends only into the keys the policy names; an
// array is transparent, its elements standing where it stands.
type scanner struct {
	b    []byte
	i    int
	f    *Filter
	bits []uint64
}

func (s *scanner) ws() {
	for s.i < len(s.b) {
		switch s.b[s.i] {
		case ' ', '\t', '\n', '\r':
			s.i++
		default:
			return
		}
	}
}

// value reads the value at s.i, which stands at node n of the trie.
func (s *scanner) value(n *trieNode) {
	s.ws()
	switch c := s.b[s.i]; {
	case c == '{':
		if n.children == nil {
			s.skip()
			return
		}
		s.i++
		for {
			s.ws()
			if s.b[s.i] == '}' {
				s.i++
				return
			}
			if s.b[s.i] == ',' {
				s.i++
				s.ws()
			}
			raw, esc := s.str()
			s.ws()
			s.i++ // ':'
			var child *trieNode
			if esc {
				child = n.children[unquote(raw)]
			} else {
				child = n.children[string(raw)]
			}
			if child == nil {
				s.ws()
				s.skip()
			} else {
				s.value(child)
			}
		}
	case c == '[':
		s.i++
		for {
			s.ws()
			if s.b[s.i] == ']' {
				s.i++
				return
			}
			if s.b[s.i] == ',' {
				s.i++
			}
			s.value(n)
		}
	case c == '"':
		raw, esc := s.str()
		if n.slot < 0 {
			return
		}
		v := value{kind: vString}
		if esc {
			v.s = unquote(raw)
		} else {
			v.s = string(raw)
		}
		s.leaf(n.slot, &v)
	case c == 't' || c == 'f' || c == 'n':
		v := value{kind: vBool, b: c == 't'}
		if c == 'n' {
			v.kind = vNull
		}
		s.i += 4
		if c == 'f' {
			s.i++
		}
		if n.slot >= 0 {
			s.leaf(n.slot, &v)
		}
	default: // a number
		start := s.i
		for s.i < len(s.b) && numChar(s.b[s.i]) {
			s.i++
		}
		if n.slot < 0 {
			return
		}
		// Valid JSON, so only a range error is possible, with ±Inf or
		// 0 the closest value: still the number's place in the order.
		f, _ := strconv.ParseFloat(string(s.b[start:s.i]), 64)
		s.leaf(n.slot, &value{kind: vNumber, q: quantise(f), hasNum: true})
	}
}

func numChar(c byte) bool {
	return c >= '0' && c <= '9' || c == '-' || c == '+' || c == '.' || c == 'e' || c == 'E'
}

// leaf records a value found at a leaf path: the path holds a value
// (unless it is null, which exists does not count), and each of the
// path's conditions it satisfies.
func (s *scanner) leaf(slot int, v *value) {
	if v.kind != vNull {
		set(s.bits, s.f.ncond+slot)
	}
	for _, c := range s.f.slotConds[slot] {
		if c.match(v) {
			set(s.bits, c.bit)
		}
	}
}

// str reads a string at s.i and returns what is between its quotes, and
// whether that has an escape.
func (s *scanner) str() (raw []byte, esc bool) {
	s.i++ // '"'
	start := s.i
	for {
		switch s.b[s.i] {
		case '"':
			raw = s.b[start:s.i]
			s.i++
			return raw, esc
		case '\\':
			esc = true
			s.i += 2
		default:
			s.i++
		}
	}
}

// skip passes over the value at s.i without reading it.
func (s *scanner) skip() {
	depth := 0
	for {
		switch s.b[s.i] {
		case '"':
			s.str()
			if depth == 0 {
				return
			}
			continue
		case '{', '[':
			depth++
		case '}', ']':
			depth--
			if depth == 0 {
				s.i++
				return
			}
		default:
			if depth == 0 {
				// A number or a literal: up to the next delimiter.
				for s.i < len(s.b) {
					switch s.b[s.i] {
					case ',', '}', ']', ' ', '\t', '\n', '\r':
						return
					}
					s.i++
				}
				return
			}
		}
		s.i++
	}
}

// unquote decodes a JSON string's escapes; raw is what stands between its
// quotes in a valid document.
func unquote(raw []byte) string {
	q := make([]byte, 0, len(raw)+2)
	q = append(append(append(q, '"'), raw...), '"')
	var out string
	_ = json.Unmarshal(q, &out) // valid: json.Valid passed the document
	return out
}
