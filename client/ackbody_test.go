package client

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"pgregory.net/rapid"
)

// FuzzAckResults holds the hand reader of a batch ack's answer to
// encoding/json: whatever it takes is valid JSON and decodes to the very
// same results.
func FuzzAckResults(f *testing.F) {
	for _, s := range []string{
		`{"results":[{"receipt_handle":"0:1:2","status":204},{"receipt_handle":"x","status":400,"error":"malformed receipt handle"}]}` + "\n",
		`{"results":[]}`, `{"results":null}`, `{"results":[{}]}`, `{"results":[{"status":204}]}`,
		`{"results":[{"receipt_handle":"a","status":204,"status":404}]}`,
		`{"results":[{"receipt_handle":"a","Status":204}]}`,
		`{"results":[{"receipt_handle":"a\u0041","status":204}]}`,
		`{"results":[{"receipt_handle":"a","status":204,"error":1}]}`,
		`{"results":[{"receipt_handle":"a","status":204.0}]}`,
		`{"results":[{"receipt_handle":"a","status":0204}]}`,
		"{\"results\":[{\"receipt_handle\":\"a\x01\",\"status\":204}]}",
		`{"results":[{"receipt_handle":"a","status":204}],"more":1}`,
		`{"results":[{"receipt_handle":"a","status":204},]}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		fast, ok := fastAckResults(body)
		if !ok {
			return
		}
		if !json.Valid(body) {
			t.Fatalf("fast reader took %q, which is not valid JSON", body)
		}
		var slow struct {
			Results []AckResult `json:"results"`
		}
		if err := json.Unmarshal(body, &slow); err != nil {
			t.Fatalf("fast reader took %q, which encoding/json refuses: %v", body, err)
		}
		if !reflect.DeepEqual(fast, slow.Results) {
			t.Fatalf("%q:\nfast %#v\nslow %#v", body, fast, slow.Results)
		}
	})
}

// TestFastAckResultsTakesServerAnswers: the server's answer shape (its
// writeAckResults) takes the hand path, not the fallback.
func TestFastAckResultsTakesServerAnswers(t *testing.T) {
	body := `{"results":[{"receipt_handle":"0:1:2","status":204},{"receipt_handle":"bad","status":400,"error":"malformed receipt handle"}]}` + "\n"
	res, ok := fastAckResults([]byte(body))
	want := []AckResult{{"0:1:2", 204}, {"bad", 400}}
	if !ok || !reflect.DeepEqual(res, want) {
		t.Fatalf("got %v %v, want %v", res, ok, want)
	}
}

// TestAckBatchBody: the request body carries exactly the handles, as
// encoding/json reads it, whatever the handles hold; plain handles are the
// encoder's bytes.
func TestAckBatchBody(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		handles := rapid.SliceOf(rapid.OneOf(
			rapid.StringMatching(`[0-9]{1,3}:[0-9]{1,8}:[0-9a-z]{1,12}`),
			rapid.String(),
		)).Draw(t, "handles")
		body, err := ackBatchBody(handles)
		if err != nil {
			t.Fatal(err)
		}
		var got struct {
			ReceiptHandles []string `json:"receipt_handles"`
		}
		if err := json.Unmarshal(body, &got); err != nil {
			t.Fatalf("%q: %v", body, err)
		}
		want, _ := json.Marshal(struct {
			ReceiptHandles []string `json:"receipt_handles"`
		}{handles})
		var again struct {
			ReceiptHandles []string `json:"receipt_handles"`
		}
		json.Unmarshal(want, &again)
		if !reflect.DeepEqual(got.ReceiptHandles, again.ReceiptHandles) {
			t.Fatalf("body %q reads as %q, encoding/json's as %q", body, got.ReceiptHandles, again.ReceiptHandles)
		}
		if !strings.ContainsAny(strings.Join(handles, ""), "<>&") && string(body) != string(want) {
			t.Fatalf("body %q, encoder's %q", body, want)
		}
	})
}
