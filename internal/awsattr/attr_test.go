package awsattr

import (
	"bytes"
	"encoding/json"
	"errors"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/narad-io/narad/internal/header"
)

// AWS's documented example digests, computed by the SDKs' own
// algorithm: the SDKs fail a call whose digest differs, so these pin
// the byte layout (lengths big-endian, transport byte 1 or 2).
func TestMD5OfAttributesMatchesTheSDKs(t *testing.T) {
	// Values computed with botocore's _add_md5_of_message_attributes
	// algorithm, written out independently in the test below.
	attrs := []Attribute{
		{Name: "b", DataType: "Binary", BinaryValue: []byte{0, 1, 2}},
		{Name: "a", DataType: "String", StringValue: "x"},
		{Name: "n", DataType: "Number.int", StringValue: "5"},
	}
	if got, want := MD5OfAttributes(attrs), referenceMD5(attrs); got != want {
		t.Fatalf("MD5OfAttributes = %s, the reference layout gives %s", got, want)
	}
	if MD5OfAttributes(nil) != "" {
		t.Fatal("no attributes must give no digest (SQS leaves the field out)")
	}
	// Order-independent: the algorithm sorts by name.
	rev := slices.Clone(attrs)
	slices.Reverse(rev)
	if MD5OfAttributes(rev) != MD5OfAttributes(attrs) {
		t.Fatal("digest depends on the order attributes were given in")
	}
	if MD5OfBody([]byte("hello")) != "5d41402abc4b2a76b9719d911017c592" {
		t.Fatalf("MD5OfBody(hello) = %s", MD5OfBody([]byte("hello")))
	}
}

func TestCheckRefusesWhatSQSRefuses(t *testing.T) {
	ok := Attribute{Name: "Store", DataType: "String", StringValue: "x"}
	cases := map[string][]Attribute{
		"empty name":       {{Name: "", DataType: "String", StringValue: "x"}},
		"bad char":         {{Name: "a b", DataType: "String", StringValue: "x"}},
		"aws prefix":       {{Name: "AWS.x", DataType: "String", StringValue: "x"}},
		"amazon prefix":    {{Name: "amazon.x", DataType: "String", StringValue: "x"}},
		"narad prefix":     {{Name: "Narad-x", DataType: "String", StringValue: "x"}},
		"double dot":       {{Name: "a..b", DataType: "String", StringValue: "x"}},
		"leading dot":      {{Name: ".a", DataType: "String", StringValue: "x"}},
		"no type":          {{Name: "a", StringValue: "x"}},
		"bad type":         {{Name: "a", DataType: "Text", StringValue: "x"}},
		"empty value":      {{Name: "a", DataType: "String"}},
		"bad number":       {{Name: "a", DataType: "Number", StringValue: "12a"}},
		"huge number":      {{Name: "a", DataType: "Number", StringValue: "1e200"}},
		"control char":     {{Name: "a", DataType: "String", StringValue: "x\x01"}},
		"binary as string": {{Name: "a", DataType: "Binary", StringValue: "x"}},
		"case twins":       {ok, {Name: "store", DataType: "String", StringValue: "y"}},
		"twice":            {ok, ok},
		"eleven":           slices.Repeat([]Attribute{ok}, 11),
	}
	for name, attrs := range cases {
		err := Check(attrs)
		var ae *Error
		if !errors.As(err, &ae) || ae.Code != "InvalidParameterValue" {
			t.Errorf("%s: Check = %v, want an InvalidParameterValue", name, err)
		}
	}
	good := []Attribute{ok, {Name: "n", DataType: "Number", StringValue: "-1.5e3"}, {Name: "b", DataType: "Binary.gz", BinaryValue: []byte{1}}}
	if err := Check(good); err != nil {
		t.Fatalf("Check(good) = %v", err)
	}
	if good[0].Name != "Store" || good[1].Name != "b" || good[2].Name != "n" {
		t.Fatalf("Check did not sort by name: %v", good)
	}
}

func TestValidText(t *testing.T) {
	for s, want := range map[string]bool{
		"plain\t\r\n": true, "é✓😀": true, "\x00": false, "\x1f": false,
		"\xff": false, "\uFFFE": false, "\uFFFD": true,
	} {
		if ValidText(s) != want {
			t.Errorf("ValidText(%q) = %v, want %v", s, !want, want)
		}
	}
}

// A record the edge produced reads back exactly: names' case, types,
// binary values; a /v1 record reads back as String attributes.
func TestEncodeDecodeRoundTrip(t *testing.T) {
	attrs := []Attribute{
		{Name: "Store", DataType: "String", StringValue: "example"},
		{Name: "Price", DataType: "Number.usd", StringValue: "12.5"},
		{Name: "Blob", DataType: "Binary", BinaryValue: []byte{0, 255, 7}},
	}
	if err := Check(attrs); err != nil {
		t.Fatal(err)
	}
	hs, meta, err := Encode(attrs, Meta{Sender: "alice"})
	if err != nil {
		t.Fatal(err)
	}
	for _, h := range hs {
		if err := header.CheckName(h.Name); err != nil {
			t.Fatalf("Encode made header %q a client could not send: %v", h.Name, err)
		}
	}
	if v, _ := header.Get(hs, "store"); v != "example" {
		t.Fatalf("the String value is not a plain header: %v", hs)
	}
	stored := append(slices.Clone(hs), header.Header{Name: header.AWS, Value: meta}, header.Header{Name: header.MsgID, Value: "d1"})
	header.Sort(stored)
	got, m := Decode(stored)
	if !equalAttrs(got, attrs) {
		t.Fatalf("Decode = %+v, want %+v", got, attrs)
	}
	if m.Sender != "alice" {
		t.Fatalf("meta = %+v", m)
	}
	if MD5OfAttributes(got) != MD5OfAttributes(attrs) {
		t.Fatal("digest of what a receiver gets differs from the sender's")
	}
	plain, _ := Decode([]header.Header{{Name: "a", Value: "1"}, {Name: header.MsgID, Value: "x"}, {Name: "z", Value: ""}})
	if len(plain) != 1 || !equalAttrs(plain, []Attribute{{Name: "a", DataType: "String", StringValue: "1"}}) {
		t.Fatalf("a /v1 record's headers read back as %+v", plain)
	}
}

func TestEncodeRefusesWhatAHeaderCannotHold(t *testing.T) {
	big := []Attribute{{Name: "a", DataType: "String", StringValue: strings.Repeat("x", header.MaxValue+1)}}
	if _, _, err := Encode(big, Meta{}); err == nil {
		t.Fatal("a value over a header's cap was encoded")
	}
	var many []Attribute
	for i := range 10 {
		many = append(many, Attribute{Name: strings.Repeat(string(rune('a'+i)), 250), DataType: "String." + strings.Repeat("t", 240), StringValue: "v"})
	}
	if _, _, err := Encode(many, Meta{}); err == nil {
		t.Fatal("names and types over the reserved header's cap were encoded")
	}
}

func equalAttrs(a, b []Attribute) bool {
	a, b = slices.Clone(a), slices.Clone(b)
	by := func(x, y Attribute) int { return strings.Compare(x.Name, y.Name) }
	slices.SortFunc(a, by)
	slices.SortFunc(b, by)
	return slices.EqualFunc(a, b, func(x, y Attribute) bool {
		return x.Name == y.Name && x.DataType == y.DataType && x.StringValue == y.StringValue && string(x.BinaryValue) == string(y.BinaryValue)
	})
}

// A deduplicated send answers the first send's MessageId: the id of a
// record with a producer id depends on its topic and that id only.
func TestMessageIDOfARepeatedSendIsTheFirsts(t *testing.T) {
	a := MessageID("q.fifo", "w111", "dedup-1")
	if b := MessageID("q.fifo", "w222", "dedup-1"); a != b {
		t.Fatalf("two sends with one dedupe id got %s and %s", a, b)
	}
	if MessageID("q.fifo", "w111", "dedup-2") == a || MessageID("other.fifo", "w111", "dedup-1") == a {
		t.Fatal("another dedupe id or topic gave the same MessageId")
	}
	if MessageID("q", "w333", "") != "w333" {
		t.Fatal("a record without a producer id must keep its Narad message id")
	}
}

// A message with nothing to say beyond its body costs no reserved header.
func TestEncodeOfAPlainMessageWritesNoReservedHeader(t *testing.T) {
	hs, meta, err := Encode(nil, Meta{})
	if err != nil || meta != "" || len(hs) != 0 {
		t.Fatalf("Encode(nil, Meta{}) = %v, %q, %v; want nothing", hs, meta, err)
	}
	if _, meta, _ := Encode(nil, Meta{Sender: "bob"}); meta == "" {
		t.Fatal("a sender was dropped")
	}
}

// TestMetaJSONIsEncodingJSONs holds the hand-written Meta to what
// encoding/json writes (HTML left unescaped, as jsonenc leaves it), so
// Decode reads every Meta back as it was.
func TestMetaJSONIsEncodingJSONs(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	pieces := []string{"", "a", "Name", "quote\"", "back\\slash", "<&>", "tab\t", "\x01", "é", "\u2028", "\xff", "日本"}
	word := func() string {
		var s string
		for range r.IntN(4) {
			s += pieces[r.IntN(len(pieces))]
		}
		return s
	}
	for i := range 2000 {
		m := Meta{Sender: word(), Trace: word(), Subject: word()}
		if n := r.IntN(4); n > 0 {
			m.Types = map[string]string{}
			for range n {
				m.Types[word()] = word()
			}
		}
		var want bytes.Buffer
		enc := json.NewEncoder(&want)
		enc.SetEscapeHTML(false)
		if err := enc.Encode(m); err != nil {
			t.Fatal(err)
		}
		got := m.appendJSON(nil)
		if string(got) != strings.TrimSuffix(want.String(), "\n") {
			t.Fatalf("case %d: appendJSON(%#v) = %s, encoding/json writes %s", i, m, got, want.String())
		}
	}
}
