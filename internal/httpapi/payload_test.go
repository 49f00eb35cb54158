package httpapi

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"strings"
	"testing"

	"github.com/narad-io/narad/internal/broker"
)

// Payloads come back byte for byte (docs/concepts.md, "Records"): a JSON
// payload is embedded with its own bytes, whitespace included; text is a JSON
// string flagged "text", so that the text hello and the JSON string "hello"
// are told apart; anything else — invalid UTF-8 inside JSON too — is base64;
// a key that is not UTF-8 comes back as key_base64.
func TestPayloadsComeBackByteForByte(t *testing.T) {
	cases := []struct {
		name     string
		key      []byte
		payload  []byte
		raw      string // the payload field as it must appear in the answer
		encoding string
		keyField string // `"key":...` or `"key_base64":...` as it must appear; "" none
	}{
		{name: "JSON with whitespace", payload: []byte(`{"a": 1,   "b":[1, 2]}`), raw: `{"a": 1,   "b":[1, 2]}`},
		{name: "JSON with newlines", payload: []byte("{\n  \"a\": 1\n}\n"), raw: "{\n  \"a\": 1\n}\n"},
		{name: "JSON escapes kept", payload: []byte(`{"s":"\u00e9\/"}`), raw: `{"s":"\u00e9\/"}`},
		{name: "JSON string", payload: []byte(`"hello"`), raw: `"hello"`},
		{name: "JSON number", payload: []byte(`1.50`), raw: `1.50`},
		{name: "text", payload: []byte(`hello`), raw: `"hello"`, encoding: "text"},
		{name: "text with quotes and controls", payload: []byte("a \"b\"\n\t\x01 <&> \u2028"), raw: `"a \"b\"\n\t\u0001 <&> \u2028"`, encoding: "text"},
		{name: "binary", payload: []byte{0xff, 0, 1}, raw: `"/wAB"`, encoding: "base64"},
		{name: "JSON with invalid UTF-8", payload: []byte("\"\xff\""), raw: `"Iv8i"`, encoding: "base64"},
		{name: "UTF-8 key", key: []byte("café"), payload: []byte("x"), raw: `"x"`, encoding: "text", keyField: `"key":"café"`},
		{name: "binary key", key: []byte{0xc3, 0x28}, payload: []byte("x"), raw: `"x"`, encoding: "text", keyField: `"key_base64":"wyg="`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			e := newEnv(t)
			e.plane.msgs = []broker.Message{{Topic: "orders", Partition: 1, Offset: 4, Key: c.key, Payload: c.payload, CommittedAt: 5000}}
			for _, target := range []string{"/v1/topics/orders/consume", "/v1/topics/orders/consume?partition=1&offset=4&max=2"} {
				w := e.do(request{method: "GET", target: target})
				body := w.Body.String()
				if w.Code != 200 || !json.Valid(w.Body.Bytes()) {
					t.Fatalf("%s: %d %q is not a JSON answer", target, w.Code, body)
				}
				if !strings.Contains(body, `"payload":`+c.raw+`,`) {
					t.Errorf("%s: answer %s does not hold the payload as %s", target, body, c.raw)
				}
				if has := strings.Contains(body, `"payload_encoding"`); c.encoding == "" && has {
					t.Errorf("%s: a JSON payload is flagged: %s", target, body)
				}
				if c.encoding != "" && !strings.Contains(body, `"payload_encoding":"`+c.encoding+`"`) {
					t.Errorf("%s: answer %s is not flagged %q", target, body, c.encoding)
				}
				if c.keyField != "" && !strings.Contains(body, c.keyField) {
					t.Errorf("%s: answer %s does not hold %s", target, body, c.keyField)
				}
				if c.keyField == "" && strings.Contains(body, `"key`) {
					t.Errorf("%s: a keyless record has a key: %s", target, body)
				}
				// And the bytes can be had back from what was sent.
				var m struct {
					Messages []struct {
						Payload         json.RawMessage `json:"payload"`
						PayloadEncoding string          `json:"payload_encoding"`
					} `json:"messages"`
				}
				if strings.Contains(target, "max=") {
					decode(t, w, &m)
					want := c.payload
					if c.encoding == "" {
						// A decoder hands out a value without the JSON
						// whitespace around it; the bytes inside are kept.
						want = bytes.Trim(want, " \t\r\n")
					}
					if got := originalBytes(t, m.Messages[0].Payload, m.Messages[0].PayloadEncoding); !bytes.Equal(got, want) {
						t.Errorf("decoded back to %q, want %q", got, c.payload)
					}
				}
			}
		})
	}
}

// originalBytes is what a client does with a payload field.
func originalBytes(t *testing.T, raw json.RawMessage, encoding string) []byte {
	t.Helper()
	var s string
	switch encoding {
	case "":
		return raw
	case "text":
		if err := json.Unmarshal(raw, &s); err != nil {
			t.Fatal(err)
		}
		return []byte(s)
	}
	if err := json.Unmarshal(raw, &s); err != nil {
		t.Fatal(err)
	}
	b, err := base64.StdEncoding.DecodeString(s)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// Whatever a record holds, its answer is valid JSON that gives the key
// and the payload back exactly, and a JSON payload's bytes appear in it
// as they are.
func FuzzAppendMessage(f *testing.F) {
	for _, s := range [][2]string{{"", `{"a": 1}`}, {"k", "hello"}, {"\xff", "\xff\x00"}, {"\u2028", "\"\\u2028\""}, {"a\"b", " [1, 2] "}} {
		f.Add([]byte(s[0]), []byte(s[1]))
	}
	f.Fuzz(func(t *testing.T, key, payload []byte) {
		if len(payload) == 0 {
			return // produce refuses empty payloads
		}
		b := appendMessage(nil, broker.Message{Topic: "t", Key: key, Payload: payload, ReceiptHandle: "0:1:2"})
		var m struct {
			Key             *string         `json:"key"`
			KeyBase64       *string         `json:"key_base64"`
			Payload         json.RawMessage `json:"payload"`
			PayloadEncoding string          `json:"payload_encoding"`
		}
		if err := json.Unmarshal(b, &m); err != nil {
			t.Fatalf("answer %q is not JSON: %v", b, err)
		}
		var gotKey []byte
		switch {
		case m.Key != nil && m.KeyBase64 != nil:
			t.Fatalf("both key and key_base64: %s", b)
		case m.Key != nil:
			gotKey = []byte(*m.Key)
		case m.KeyBase64 != nil:
			k, err := base64.StdEncoding.DecodeString(*m.KeyBase64)
			if err != nil {
				t.Fatal(err)
			}
			gotKey = k
		}
		if !bytes.Equal(gotKey, key) {
			t.Fatalf("key %q came back as %q", key, gotKey)
		}
		want := payload
		if m.PayloadEncoding == "" {
			want = bytes.Trim(payload, " \t\r\n")
			if !bytes.Contains(b, payload) {
				t.Fatalf("JSON payload %q is not in the answer as it is: %s", payload, b)
			}
		}
		if got := originalBytes(t, m.Payload, m.PayloadEncoding); !bytes.Equal(got, want) {
			t.Fatalf("payload %q came back as %q (%s)", payload, got, b)
		}
	})
}
