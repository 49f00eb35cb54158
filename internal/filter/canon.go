package filter

import (
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"
)

// appendObject writes a compiled object as canonical JSON: keys sorted
// (a recognised "$or" among them), conditions and branches in the
// policy's order, numbers shortest, no space.
func appendObject(b []byte, o *object) []byte {
	if o == nil {
		return append(b, "{}"...)
	}
	type entry struct {
		key string
		or  bool
		fd  *field
	}
	entries := make([]entry, 0, len(o.fields)+1)
	for i := range o.fields {
		entries = append(entries, entry{key: o.fields[i].key, fd: &o.fields[i]})
	}
	if o.or != nil {
		entries = append(entries, entry{key: "$or", or: true})
	}
	slices.SortFunc(entries, func(a, b entry) int { return strings.Compare(a.key, b.key) })
	b = append(b, '{')
	for i, e := range entries {
		if i > 0 {
			b = append(b, ',')
		}
		b = appendString(b, e.key)
		b = append(b, ':')
		switch {
		case e.or:
			b = append(b, '[')
			for j, br := range o.or {
				if j > 0 {
					b = append(b, ',')
				}
				b = appendObject(b, br)
			}
			b = append(b, ']')
		case e.fd.child != nil:
			b = appendObject(b, e.fd.child)
		default:
			b = append(b, '[')
			for j, c := range e.fd.leaf.conds {
				if j > 0 {
					b = append(b, ',')
				}
				b = appendCond(b, c)
			}
			b = append(b, ']')
		}
	}
	return append(b, '}')
}

func appendCond(b []byte, c *cond) []byte {
	op := func(name string) []byte {
		return append(appendString(append(b, '{'), name), ':')
	}
	switch c.kind {
	case exactString:
		return appendString(b, c.s)
	case exactNumber:
		return appendNumber(b, c.num)
	case exactBool:
		return strconv.AppendBool(b, c.b)
	case exactNull:
		return append(b, "null"...)
	case prefix:
		return append(appendString(op("prefix"), c.s), '}')
	case suffix:
		return append(appendString(op("suffix"), c.s), '}')
	case equalsIgnoreCase:
		return append(appendString(op("equals-ignore-case"), c.s), '}')
	case exists:
		return append(strconv.AppendBool(op("exists"), c.b), '}')
	case cidr:
		return append(appendString(op("cidr"), c.net.String()), '}')
	case numeric:
		b = append(op("numeric"), '[')
		for i := 0; i < c.rng.n; i++ {
			if i > 0 {
				b = append(b, ',')
			}
			b = append(appendString(b, c.rng.ops[i]), ',')
			b = appendNumber(b, c.rng.nums[i])
		}
		return append(b, "]}"...)
	case anythingBut:
		b = op("anything-but")
		switch c.notForm {
		case butPrefix:
			b = append(appendString(append(b, `{"prefix":`...), c.not[0].s), '}')
		case butSuffix:
			b = append(appendString(append(b, `{"suffix":`...), c.not[0].s), '}')
		default:
			b = append(b, '[')
			for i, n := range c.not {
				if i > 0 {
					b = append(b, ',')
				}
				b = appendCond(b, n)
			}
			b = append(b, ']')
		}
		return append(b, '}')
	}
	panic("filter: a condition kind appendCond does not know")
}

// appendNumber writes a policy number, which Compile held to ±1e9 and
// five decimals, in its shortest decimal form.
func appendNumber(b []byte, n float64) []byte {
	if n == 0 {
		return append(b, '0') // never -0
	}
	return strconv.AppendFloat(b, n, 'f', -1, 64)
}

// appendString writes s as a JSON string, escaping only what JSON
// requires (quote, backslash, control characters); s is valid UTF-8, as
// Compile refuses a policy that is not.
func appendString(b []byte, s string) []byte {
	const hex = "0123456789abcdef"
	b = append(b, '"')
	for i := 0; i < len(s); {
		c := s[i]
		if c >= utf8.RuneSelf {
			r, size := utf8.DecodeRuneInString(s[i:])
			if r == utf8.RuneError && size == 1 {
				b = append(b, `\ufffd`...)
			} else {
				b = append(b, s[i:i+size]...)
			}
			i += size
			continue
		}
		switch {
		case c == '"' || c == '\\':
			b = append(b, '\\', c)
		case c == '\n':
			b = append(b, `\n`...)
		case c == '\t':
			b = append(b, `\t`...)
		case c == '\r':
			b = append(b, `\r`...)
		case c < 0x20:
			b = append(b, '\\', 'u', '0', '0', hex[c>>4], hex[c&0xf])
		default:
			b = append(b, c)
		}
		i++
	}
	return append(b, '"')
}
