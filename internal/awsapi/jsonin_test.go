package awsapi

import (
	"bytes"
	"encoding/json"
	"reflect"
	"strings"
	"testing"
)

// stdDecode is what decodeJSON read with encoding/json: a Decoder with
// UseNumber, one object; and nothing after it, which that Decoder did
// not check.
func stdDecode(body []byte) (map[string]any, bool) {
	d := json.NewDecoder(bytes.NewReader(body))
	d.UseNumber()
	var m map[string]any
	if err := d.Decode(&m); err != nil || m == nil {
		return nil, false
	}
	if len(bytes.TrimSpace(body[d.InputOffset():])) > 0 {
		return nil, false // data after the object, which the reader refuses
	}
	return m, true
}

var jsonSeeds = []string{
	`{}`, ` { } `, `{"a":1}`, `{"a":-0.5e+3,"b":[1,2,{"c":null}],"d":true,"e":false}`,
	`{"QueueUrl":"http://localhost:7942/000000000000/q","MessageBody":"hello","DelaySeconds":5}`,
	`{"Entries":[{"Id":"0","MessageBody":"x"},{"Id":"1","MessageBody":"y","MessageAttributes":{"a":{"DataType":"String","StringValue":"v"}}}]}`,
	`{"s":"\"\\\/\b\f\n\r\t\u00e9\ud83d\ude00\ud800x\udc00\u0041"}`, `{"s":"héllo ✓ 😀"}`, "{\"s\":\"\xff\xfe bad utf8\"}",
	`{"a":1,"a":2}`, `{"a":[]}`, `{"a":[[[]]]}`, `{"n":0}`, `{"n":-0}`, `{"n":1E5}`, `{"n":12.0}`,
	// Refused by both.
	``, `[]`, `"s"`, `1`, `null`, `{`, `{"a"}`, `{"a":}`, `{"a":1,}`, `{"a":01}`, `{"a":1.}`, `{"a":.5}`, `{"a":-}`,
	`{"a":1e}`, `{"a":tru}`, `{"a":nul}`, `{"a":"\x"}`, `{"a":"\u12"}`, "{\"a\":\"tab\there\"}", `{"a":1}x`, `{"a":1}{}`,
	`{a:1}`, `{"a":[1,]}`, `{"a":[1 2]}`, `{"a":"unterminated}`, `{"a":"\ud800\uzzzz"}`,
}

// decodeJSON reads what encoding/json reads into the same values, and
// refuses what it refuses (an empty body aside: no parameters).
func TestDecodeJSONMatchesEncodingJSON(t *testing.T) {
	for _, s := range jsonSeeds {
		checkDecode(t, []byte(s))
	}
	deep := strings.Repeat(`{"a":`, maxDepth+1) + "1" + strings.Repeat("}", maxDepth+1)
	if _, err := decodeJSON([]byte(deep)); err == nil {
		t.Errorf("a body nested %d deep was read", maxDepth+1)
	}
}

func FuzzDecodeJSON(f *testing.F) {
	for _, s := range jsonSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		if bytes.Count(body, []byte("{"))+bytes.Count(body, []byte("[")) >= maxDepth {
			return // nesting only the new reader bounds
		}
		checkDecode(t, body)
	})
}

func checkDecode(t *testing.T, body []byte) {
	t.Helper()
	if len(bytes.TrimSpace(body)) == 0 {
		return
	}
	want, ok := stdDecode(body)
	got, err := decodeJSON(body)
	switch {
	case ok && err != nil:
		t.Errorf("%q: refused (%v), encoding/json reads %v", body, err, want)
	case !ok && err == nil:
		t.Errorf("%q: read as %v, encoding/json refuses it", body, got)
	case ok && !reflect.DeepEqual(map[string]any(got), want):
		t.Errorf("%q: read as %#v, encoding/json %#v", body, got, want)
	}
}
