package awsattr

import (
	"encoding/base64"
	"encoding/json"
	"maps"
	"slices"
	"strings"

	"github.com/narad-io/narad/internal/header"
	"github.com/narad-io/narad/internal/jsonenc"
)

// Meta is what the reserved header header.AWS holds for a record the
// edge produced: what its headers cannot say.
type Meta struct {
	// Types maps each attribute's name, as sent, to its data type.
	Types map[string]string `json:"t,omitempty"`
	// Sender is SenderId: the user whose key signed the send; empty with
	// security off, where the sender is the account.
	Sender string `json:"s,omitempty"`
	// Trace is the AWSTraceHeader system attribute.
	Trace string `json:"x,omitempty"`
	// Subject is an SNS Publish's Subject.
	Subject string `json:"sub,omitempty"`
}

// Encode turns checked attributes (Check) into the record's headers and
// the reserved header's value: m with m.Types filled in, or "" when that
// says nothing (no attributes, no sender, no trace, no subject), so a
// plain message costs no reserved header. It refuses a
// value a header cannot hold (over header.MaxValue bytes once encoded)
// and a Meta over header.MaxAWS bytes.
func Encode(attrs []Attribute, m Meta) ([]header.Header, string, error) {
	var hs []header.Header
	if len(attrs) > 0 {
		hs = make([]header.Header, 0, len(attrs))
		m.Types = make(map[string]string, len(attrs))
	}
	for _, a := range attrs {
		v := a.StringValue
		if Kind(a.DataType) == "Binary" {
			v = base64.StdEncoding.EncodeToString(a.BinaryValue)
		}
		if len(v) > header.MaxValue {
			return nil, "", invalid("The value of message attribute '%s' takes %d bytes; Narad keeps an attribute as a record header, at most %d bytes (Binary values count base64-encoded).", a.Name, len(v), header.MaxValue)
		}
		hs = append(hs, header.Header{Name: strings.ToLower(a.Name), Value: v})
		m.Types[a.Name] = a.DataType
	}
	header.Sort(hs)
	if len(m.Types) == 0 && m.Sender == "" && m.Trace == "" && m.Subject == "" {
		return hs, "", nil
	}
	b := m.appendJSON(nil)
	if len(b) > header.MaxAWS {
		return nil, "", invalid("The message attributes' names and data types take %d bytes; Narad keeps at most %d.", len(b), header.MaxAWS)
	}
	return hs, string(b), nil
}

// appendJSON appends m as encoding/json marshals it (keys in field order,
// empty fields left out, Types' keys sorted), written by hand: with
// security on every SQS send has a Sender, and json.Marshal's reflection
// was an eighth of a SendMessageBatch's own CPU. Decode reads it back with
// encoding/json.
func (m Meta) appendJSON(b []byte) []byte {
	b = append(b, '{')
	first := true
	field := func(name string) {
		if !first {
			b = append(b, ',')
		}
		first = false
		b = append(b, '"')
		b = append(b, name...)
		b = append(b, '"', ':')
	}
	if len(m.Types) > 0 {
		field("t")
		b = append(b, '{')
		for i, k := range slices.Sorted(maps.Keys(m.Types)) {
			if i > 0 {
				b = append(b, ',')
			}
			b = jsonenc.AppendString(b, k)
			b = append(b, ':')
			b = jsonenc.AppendString(b, m.Types[k])
		}
		b = append(b, '}')
	}
	for _, f := range [...]struct{ name, v string }{{"s", m.Sender}, {"x", m.Trace}, {"sub", m.Subject}} {
		if f.v != "" {
			field(f.name)
			b = jsonenc.AppendString(b, f.v)
		}
	}
	return append(b, '}')
}

// Decode reads a record's attributes and Meta back from its headers. With
// the reserved header, the attributes are exactly those Encode stored;
// without it (a record produced through /v1), every header that is not
// the broker's and could be an SQS attribute is a String attribute.
// Attributes come sorted by name.
func Decode(hs []header.Header) ([]Attribute, Meta) {
	var m Meta
	if raw, ok := header.Get(hs, header.AWS); ok && json.Unmarshal([]byte(raw), &m) == nil && m.Types != nil {
		attrs := make([]Attribute, 0, len(m.Types))
		for name, typ := range m.Types {
			v, ok := header.Get(hs, strings.ToLower(name))
			if !ok {
				continue
			}
			a := Attribute{Name: name, DataType: typ}
			if Kind(typ) == "Binary" {
				b, err := base64.StdEncoding.DecodeString(v)
				if err != nil {
					continue
				}
				a.BinaryValue = b
			} else {
				a.StringValue = v
			}
			attrs = append(attrs, a)
		}
		slices.SortFunc(attrs, func(x, y Attribute) int { return strings.Compare(x.Name, y.Name) })
		return attrs, m
	}
	var attrs []Attribute
	for _, h := range hs {
		if strings.HasPrefix(h.Name, header.ReservedPrefix) || h.Value == "" || !ValidText(h.Value) || checkName(h.Name) != nil {
			continue
		}
		attrs = append(attrs, Attribute{Name: h.Name, DataType: "String", StringValue: h.Value})
	}
	return attrs, m // hs is sorted by name, and so are these
}
