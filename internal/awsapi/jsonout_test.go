package awsapi

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strconv"
	"testing"
)

// appendValue writes what encoding/json writes for the shapes answers are
// built of (HTML escaping aside: none of these strings has <, > or &).
func TestAppendValueMatchesEncodingJSON(t *testing.T) {
	for _, v := range []any{
		map[string]any{},
		map[string]any{"Messages": []any{map[string]any{"Body": "hé \"x\"\n\u2028", "MessageId": "m", "Attributes": map[string]string{"b": "2", "a": "1"}}}},
		map[string]any{"Successful": []any{}, "Failed": []any{map[string]any{"Id": "1", "SenderFault": true, "Code": "X"}}},
		map[string]any{"QueueUrls": []string{"u1", "u2"}, "n": 3, "m": int64(-4), "num": json.Number("5"), "none": nil, "ok": false},
		map[string]any{"list": []map[string]any{{"k": "v"}}, "nilList": []string(nil), "other": []int{1, 2}},
	} {
		want, err := json.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		if got := appendValue(nil, v); string(got) != string(want) {
			t.Errorf("appendValue = %s\nencoding/json  %s", got, want)
		}
	}
}

// A JSON answer carries its Content-Length, so that net/http sends it in
// one piece rather than in chunks (a receive of ten passes the server's
// 4 KiB buffer).
func TestJSONAnswerHasContentLength(t *testing.T) {
	e := benchEdge()
	w := httptest.NewRecorder()
	e.ServeHTTP(w, sqsRequest("ReceiveMessage", `{"QueueUrl":"http://localhost:7942/000000000000/q","MaxNumberOfMessages":10}`))
	if w.Code != http.StatusOK {
		t.Fatalf("%d %s", w.Code, w.Body)
	}
	if got, want := w.Header().Get("Content-Length"), strconv.Itoa(w.Body.Len()); got != want {
		t.Fatalf("Content-Length %q, want %s", got, want)
	}
}
