package awsapi

import (
	"encoding/json"
	"fmt"
	"strconv"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/narad-io/narad/internal/jsonenc"
)

// The JSON protocol's request bodies are read into a params tree by
// jsonReader rather than by encoding/json's Decoder, which was 12% of a
// batch send's server CPU (SendMessageBatch of ten, bench --api sqs):
// this reader takes strings that need no unescaping as they are and
// builds the tree without reflection. It reads what encoding/json reads
// (with UseNumber) into the same values — objects as map[string]any, the
// last of a repeated name winning; numbers as json.Number; a string's
// invalid UTF-8 as U+FFFD — and refuses what it refuses; the fuzz test
// holds it to that.

// maxDepth bounds how deeply a body may nest: no action's parameters
// nest past four levels, and the reader recurses once per level.
const maxDepth = 64

type jsonReader struct {
	b []byte
	i int
}

// syntaxError is a malformed body, at a byte offset.
type syntaxError struct {
	off int
	msg string
}

func (e *syntaxError) Error() string { return fmt.Sprintf("%s at byte %d", e.msg, e.off) }

func (d *jsonReader) fail(msg string) error { return &syntaxError{off: d.i, msg: msg} }

func (d *jsonReader) space() {
	for d.i < len(d.b) {
		switch d.b[d.i] {
		case ' ', '\t', '\n', '\r':
			d.i++
		default:
			return
		}
	}
}

// readObject reads a whole body that must be one object.
func (d *jsonReader) readObject() (map[string]any, error) {
	d.space()
	if d.i >= len(d.b) || d.b[d.i] != '{' {
		return nil, d.fail("not an object")
	}
	v, err := d.value(0)
	if err != nil {
		return nil, err
	}
	d.space()
	if d.i != len(d.b) {
		return nil, d.fail("data after the object")
	}
	return v.(map[string]any), nil
}

// value reads one value at d.i (past any space).
func (d *jsonReader) value(depth int) (any, error) {
	d.space()
	if d.i >= len(d.b) {
		return nil, d.fail("unexpected end")
	}
	switch c := d.b[d.i]; {
	case c == '{':
		return d.object(depth + 1)
	case c == '[':
		return d.array(depth + 1)
	case c == '"':
		return d.str()
	case c == '-' || '0' <= c && c <= '9':
		return d.number()
	case c == 't':
		return true, d.literal("true")
	case c == 'f':
		return false, d.literal("false")
	case c == 'n':
		return nil, d.literal("null")
	}
	return nil, d.fail("unexpected character")
}

func (d *jsonReader) literal(word string) error {
	if len(d.b)-d.i < len(word) || string(d.b[d.i:d.i+len(word)]) != word {
		return d.fail("invalid literal")
	}
	d.i += len(word)
	return nil
}

func (d *jsonReader) object(depth int) (any, error) {
	if depth > maxDepth {
		return nil, d.fail("nested too deeply")
	}
	d.i++ // {
	m := map[string]any{}
	d.space()
	if d.i < len(d.b) && d.b[d.i] == '}' {
		d.i++
		return m, nil
	}
	for {
		d.space()
		if d.i >= len(d.b) || d.b[d.i] != '"' {
			return nil, d.fail("expected a name")
		}
		k, err := d.name()
		if err != nil {
			return nil, err
		}
		d.space()
		if d.i >= len(d.b) || d.b[d.i] != ':' {
			return nil, d.fail("expected ':'")
		}
		d.i++
		v, err := d.value(depth)
		if err != nil {
			return nil, err
		}
		m[k] = v
		d.space()
		if d.i >= len(d.b) {
			return nil, d.fail("unexpected end")
		}
		switch d.b[d.i] {
		case ',':
			d.i++
		case '}':
			d.i++
			return m, nil
		default:
			return nil, d.fail("expected ',' or '}'")
		}
	}
}

func (d *jsonReader) array(depth int) (any, error) {
	if depth > maxDepth {
		return nil, d.fail("nested too deeply")
	}
	d.i++ // [
	l := []any{}
	d.space()
	if d.i < len(d.b) && d.b[d.i] == ']' {
		d.i++
		return l, nil
	}
	for {
		v, err := d.value(depth)
		if err != nil {
			return nil, err
		}
		l = append(l, v)
		d.space()
		if d.i >= len(d.b) {
			return nil, d.fail("unexpected end")
		}
		switch d.b[d.i] {
		case ',':
			d.i++
		case ']':
			d.i++
			return l, nil
		default:
			return nil, d.fail("expected ',' or ']'")
		}
	}
}

// knownNames are the parameter names of the busiest actions: a name
// read is one of these strings when it can be, rather than a new string
// per name per entry (a tenth of a SendMessageBatch's allocations).
var knownNames = func() map[string]string {
	m := map[string]string{}
	for _, n := range []string{"QueueUrl", "Entries", "Id", "MessageBody", "ReceiptHandle",
		"MessageAttributes", "MessageSystemAttributes", "DataType", "StringValue", "BinaryValue",
		"MaxNumberOfMessages", "WaitTimeSeconds", "VisibilityTimeout", "AttributeNames",
		"MessageAttributeNames", "MessageSystemAttributeNames", "MessageGroupId",
		"MessageDeduplicationId", "DelaySeconds", "ReceiveRequestAttemptId"} {
		m[n] = n
	}
	return m
}()

// name reads an object's member name at d.i (its opening quote).
func (d *jsonReader) name() (string, error) {
	if end := jsonenc.SkipPlain(d.b, d.i+1); end < len(d.b) && d.b[end] == '"' {
		if n, ok := knownNames[string(d.b[d.i+1:end])]; ok {
			d.i = end + 1
			return n, nil
		}
	}
	return d.str()
}

// str reads a string at d.i (its opening quote).
func (d *jsonReader) str() (string, error) {
	d.i++
	start := d.i
	// Most strings need nothing done: ASCII without escapes, skipped
	// eight bytes at a time.
	d.i = jsonenc.SkipPlain(d.b, d.i)
	if d.i < len(d.b) && d.b[d.i] == '"' {
		s := string(d.b[start:d.i])
		d.i++
		return s, nil
	}
	out := append([]byte(nil), d.b[start:d.i]...)
	for d.i < len(d.b) {
		c := d.b[d.i]
		switch {
		case c == '"':
			d.i++
			return string(out), nil
		case c < 0x20:
			return "", d.fail("control character in a string")
		case c == '\\':
			var err error
			if out, err = d.escape(out); err != nil {
				return "", err
			}
		case c < utf8.RuneSelf:
			out = append(out, c)
			d.i++
		default:
			r, size := utf8.DecodeRune(d.b[d.i:])
			if r == utf8.RuneError && size == 1 {
				out = utf8.AppendRune(out, utf8.RuneError)
			} else {
				out = append(out, d.b[d.i:d.i+size]...)
			}
			d.i += size
		}
	}
	return "", d.fail("unterminated string")
}

// escape appends the escape sequence at d.i (its backslash), unescaped.
func (d *jsonReader) escape(out []byte) ([]byte, error) {
	if d.i+1 >= len(d.b) {
		return nil, d.fail("unterminated string")
	}
	c := d.b[d.i+1]
	d.i += 2
	switch c {
	case '"', '\\', '/':
		return append(out, c), nil
	case 'b':
		return append(out, '\b'), nil
	case 'f':
		return append(out, '\f'), nil
	case 'n':
		return append(out, '\n'), nil
	case 'r':
		return append(out, '\r'), nil
	case 't':
		return append(out, '\t'), nil
	case 'u':
		r, ok := d.hex4()
		if !ok {
			return nil, d.fail("invalid \\u escape")
		}
		if utf16.IsSurrogate(r) {
			// A pair makes one rune; a lone half is U+FFFD.
			if d.i+1 < len(d.b) && d.b[d.i] == '\\' && d.b[d.i+1] == 'u' {
				save := d.i
				d.i += 2
				r2, ok := d.hex4()
				if !ok {
					return nil, d.fail("invalid \\u escape")
				}
				if dec := utf16.DecodeRune(r, r2); dec != utf8.RuneError {
					return utf8.AppendRune(out, dec), nil
				}
				d.i = save
			}
			r = utf8.RuneError
		}
		return utf8.AppendRune(out, r), nil
	}
	d.i--
	return nil, d.fail("invalid escape")
}

func (d *jsonReader) hex4() (rune, bool) {
	if len(d.b)-d.i < 4 {
		return 0, false
	}
	n, err := strconv.ParseUint(string(d.b[d.i:d.i+4]), 16, 32)
	if err != nil {
		return 0, false
	}
	d.i += 4
	return rune(n), true
}

// number reads a number as its text: -?(0|[1-9][0-9]*)(.[0-9]+)?([eE][+-]?[0-9]+)?
func (d *jsonReader) number() (any, error) {
	start := d.i
	digits := func() int {
		n := 0
		for d.i < len(d.b) && '0' <= d.b[d.i] && d.b[d.i] <= '9' {
			d.i++
			n++
		}
		return n
	}
	if d.b[d.i] == '-' {
		d.i++
	}
	if d.i < len(d.b) && d.b[d.i] == '0' {
		d.i++
	} else if digits() == 0 {
		return nil, d.fail("invalid number")
	}
	if d.i < len(d.b) && d.b[d.i] == '.' {
		d.i++
		if digits() == 0 {
			return nil, d.fail("invalid number")
		}
	}
	if d.i < len(d.b) && (d.b[d.i] == 'e' || d.b[d.i] == 'E') {
		d.i++
		if d.i < len(d.b) && (d.b[d.i] == '+' || d.b[d.i] == '-') {
			d.i++
		}
		if digits() == 0 {
			return nil, d.fail("invalid number")
		}
	}
	return json.Number(d.b[start:d.i]), nil
}
