package httpapi

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"net/http"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/narad-io/narad/internal/apierr"
	"github.com/narad-io/narad/internal/broker"
	"github.com/narad-io/narad/internal/header"
)

// The decoders a client's produce and ack bodies reach, fuzzed without a
// server: they are pure functions of the bytes. Each target checks a rule
// the handlers rely on, not only "no panic".

// clientErr fails t unless err is a refusal the client can act on: an
// *apierr.Error with status 400 or 413 (never a 500, which would blame the
// server for a bad body).
func clientErr(t *testing.T, what string, err error) *apierr.Error {
	t.Helper()
	var ae *apierr.Error
	if !errors.As(err, &ae) || (ae.Status != http.StatusBadRequest && ae.Status != http.StatusRequestEntityTooLarge) {
		t.Fatalf("%s: refusal %v (%T) is not a 400 or 413", what, err, err)
	}
	return ae
}

func sameRecord(a, b broker.ProduceRecord) bool {
	samePart := (a.Partition == nil) == (b.Partition == nil) && (a.Partition == nil || *a.Partition == *b.Partition)
	return samePart && bytes.Equal(a.Key, b.Key) && bytes.Equal(a.Payload, b.Payload) && (a.Key == nil) == (b.Key == nil) &&
		a.MsgID == b.MsgID && a.HasMsgID == b.HasMsgID && sameHeaders(a.Headers, b.Headers) &&
		samePtr(a.Delay, b.Delay) && samePtr(a.DeliverAt, b.DeliverAt)
}

// samePtr says two optional values are both absent or equal.
func samePtr[T comparable](a, b *T) bool {
	return (a == nil) == (b == nil) && (a == nil || *a == *b)
}

// sameHeaders compares two lists as sets: the oracle's come from a map.
func sameHeaders(a, b []header.Header) bool {
	if (a == nil) != (b == nil) || len(a) != len(b) {
		return false
	}
	a, b = slices.Clone(a), slices.Clone(b)
	header.Sort(a)
	header.Sort(b)
	return slices.Equal(a, b)
}

// FuzzDecodeBatchRecord is one record of a batch (an NDJSON line or an
// element of "records"), read by the one-pass scanner: what is stored must
// be what the client meant. A
// JSON string payload is stored as its text — the decoder's shortcut for
// strings without escapes must give encoding/json's answer — base64 as its
// bytes, any other JSON value as its JSON text; never over 1 MiB, never a
// negative partition.
func FuzzDecodeBatchRecord(f *testing.F) {
	for _, s := range []string{
		`{"payload":"plain"}`, `{"payload":"esc\\n\"q\""}`, `{"key":"","payload":{"a":[1,2]}}`,
		`{"payload_base64":"aGk="}`, `{"partition":0,"payload":" 7 "}`, `{"payload":null}`,
		`{"payload":"\u0000"}`, `{}`, `[]`, `{"partition":-3,"payload":1}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		rec, err := scanRecord(3, raw)
		if err != nil {
			if ae := clientErr(t, "record", err); !strings.HasPrefix(ae.Message, "record 3: ") {
				t.Fatalf("refusal does not name the record: %q", ae.Message)
			}
			return
		}
		if len(rec.Payload) > broker.MaxPayloadBytes {
			t.Fatalf("accepted a payload of %d bytes", len(rec.Payload))
		}
		if rec.Partition != nil && *rec.Partition < 0 {
			t.Fatalf("accepted partition %d", *rec.Partition)
		}
		var lenient struct {
			Key           *string         `json:"key"`
			KeyBase64     *string         `json:"key_base64"`
			Payload       json.RawMessage `json:"payload"`
			PayloadBase64 *string         `json:"payload_base64"`
		}
		if err := json.Unmarshal(raw, &lenient); err != nil {
			t.Fatalf("strict decoder took a record encoding/json refuses: %v", err)
		}
		if lenient.KeyBase64 != nil {
			if k, err := base64.StdEncoding.DecodeString(*lenient.KeyBase64); err != nil || !bytes.Equal(k, rec.Key) {
				t.Fatalf("key_base64 %q stored as %q", *lenient.KeyBase64, rec.Key)
			}
		} else if (lenient.Key == nil) != (rec.Key == nil) || (lenient.Key != nil && *lenient.Key != string(rec.Key)) {
			t.Fatalf("key %q stored as %q", derefOr(lenient.Key), rec.Key)
		}
		if lenient.PayloadBase64 != nil {
			return // decoded by encoding/base64 itself
		}
		p := bytes.TrimSpace(lenient.Payload)
		if !utf8.Valid(p) {
			// KNOWN DIVERGENCE, reported, not decided in this round (no
			// behaviour change): a JSON string holding invalid UTF-8 (not
			// JSON by RFC 8259, but encoding/json takes it) is stored
			// byte for byte when it has no escape, and with U+FFFD in
			// place of the bad bytes when it has one. Remove this skip
			// once the handler refuses such payloads or stores them one
			// way.
			return
		}
		want := p
		if len(p) > 0 && p[0] == '"' {
			var s string
			if err := json.Unmarshal(p, &s); err != nil {
				t.Fatalf("accepted payload %q that is no JSON string", p)
			}
			want = []byte(s)
		}
		if !bytes.Equal(rec.Payload, want) {
			t.Fatalf("payload %q stored as %q, want %q", p, rec.Payload, want)
		}
	})
}

func derefOr(s *string) string {
	if s == nil {
		return "<none>"
	}
	return *s
}
