package httpapi

import (
	"net/http/httptest"
	"reflect"
	"strings"
	"testing"
)

// FuzzAckHandlesFast holds the batch ack's one-pass reader to the strict
// decode it stands in for: whatever body it accepts, decodeStrict accepts
// too with the very same handles. (What it declines goes to decodeStrict,
// so declining is always safe.)
func FuzzAckHandlesFast(f *testing.F) {
	for _, s := range []string{
		`{"receipt_handles":["0:12:1735689600000000000","3:0:9"]}`,
		` { "receipt_handles" : [ "0:1:2" , "1:2:3" ] } `, `{"receipt_handles":[]}`,
		`{"receipt_handles":["a\"b"]}`, `{"receipt_handles":["é"]}`, `{"Receipt_handles":["0:1:2"]}`,
		`{"receipt_handles":["0:1:2"],"receipt_handles":["1:1:1"]}`, `{"receipt_handles":["0:1:2"]} []`,
		`{"receipt_handles":["0:1:2",]}`, `{"receipt_handles":null}`, `{"receipt_handles":["0:1:2"]`, ``,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		fast, ok := ackHandlesFast(body)
		if !ok {
			return
		}
		var strict struct {
			ReceiptHandles []string `json:"receipt_handles"`
		}
		if err := decodeStrict(body, &strict); err != nil {
			t.Fatalf("fast path took %q, which the strict decode refuses: %v", body, err)
		}
		if len(fast) != len(strict.ReceiptHandles) || (len(fast) > 0 && !reflect.DeepEqual(fast, strict.ReceiptHandles)) {
			t.Fatalf("%q: fast path %q, strict decode %q", body, fast, strict.ReceiptHandles)
		}
	})
}

// TestAckResultsAsWriteJSON: the hand-written batch ack answer is byte for
// byte the encoding/json one it replaced, escapes and all.
func TestAckResultsAsWriteJSON(t *testing.T) {
	for _, res := range [][]AckResult{
		{},
		{{ReceiptHandle: "0:1:2", Status: 204}},
		{{ReceiptHandle: "0:1:2", Status: 204}, {ReceiptHandle: "x\"y\\z<>&\b\f\n\u2028", Status: 400, Error: `receipt_handle "x" is malformed`},
			{ReceiptHandle: "bad \xff utf-8", Status: 410, Error: "tab\there"}},
	} {
		want := httptest.NewRecorder()
		writeJSON(want, 200, map[string]any{"results": res})
		got := httptest.NewRecorder()
		writeAckResults(got, res)
		if got.Body.String() != want.Body.String() || got.Code != want.Code || got.Header().Get("Content-Type") != want.Header().Get("Content-Type") {
			t.Errorf("writeAckResults %d %q\nwriteJSON       %d %q", got.Code, got.Body, want.Code, want.Body)
		}
	}
}

// TestTextPayloadEncodingAllocatesNothing: telling a text payload from
// JSON builds no refusal (json.Valid's *SyntaxError was three allocations
// per record delivered).
func TestTextPayloadEncodingAllocatesNothing(t *testing.T) {
	p := []byte(strings.Repeat("x", 256))
	if n := testing.AllocsPerRun(100, func() {
		if payloadEncoding(p) != encodingText {
			t.Fatal("not text")
		}
	}); n != 0 {
		t.Errorf("payloadEncoding of a text payload: %v allocations, want 0", n)
	}
}
