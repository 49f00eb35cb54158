package awsapi

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strconv"
	"sync"
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

// An object answers in JSON exactly as its map would: the same fields,
// empty ones left out alike, in the same order.
func TestObjectsAnswerAsTheirMaps(t *testing.T) {
	objects := []object{
		&sendResult{messageID: "m1", md5Body: "b"},
		&sendResult{entryID: "e-1", messageID: "m1", md5Body: "b", md5Attrs: "a", md5Sys: "s"},
		&sendResult{messageID: "", md5Body: ""},
		&receivedMessage{messageID: "m", receiptHandle: "h", md5Body: "d", body: []byte("hé \"x\"\n\u2028")},
		&receivedMessage{body: []byte{}},
		&receivedMessage{messageID: "m", receiptHandle: "h", md5Body: "d", body: []byte("x"),
			attrs: map[string]any{"b": map[string]any{"DataType": "String", "StringValue": "2"}}, md5Attrs: "ma",
			sys: map[string]string{"SentTimestamp": "1", "ApproximateReceiveCount": "2"}},
	}
	for _, o := range objects {
		want := appendValue(nil, o.asMap())
		if got := appendValue(nil, o); string(got) != string(want) {
			t.Errorf("%T answers %s\nits map is %s", o, got, want)
		}
		if got := o.appendJSON([]byte("x")); string(got) != "x"+string(want) {
			t.Errorf("%T appended to a prefix: %s", o, got)
		}
	}
}

// Answers written into pooled buffers carry nothing of the answers
// written before them, in turn or at once: a short answer after a long
// one is exactly itself.
func TestPooledAnswersAreTheirOwn(t *testing.T) {
	e := benchEdge()
	const want = `{"MD5OfMessageBody":"5d41402abc4b2a76b9719d911017c592","MessageId":"w5ftc2tq8cgp1c00000000000fg"}`
	var wg sync.WaitGroup
	for range 4 {
		wg.Go(func() {
			for range 50 {
				long := httptest.NewRecorder()
				e.ServeHTTP(long, sqsRequest("ReceiveMessage", `{"QueueUrl":"http://localhost:7942/000000000000/q"}`))
				short := httptest.NewRecorder()
				e.ServeHTTP(short, sqsRequest("SendMessage", `{"QueueUrl":"http://localhost:7942/000000000000/q","MessageBody":"hello"}`))
				if long.Code != http.StatusOK || !json.Valid(long.Body.Bytes()) || short.Body.String() != want {
					t.Errorf("receive %d %s\nthen send %s\nwant %s", long.Code, long.Body, short.Body, want)
					return
				}
			}
		})
	}
	wg.Wait()
}
