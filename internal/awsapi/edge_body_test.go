package awsapi

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// The body is read whole whether its length is declared or not; a body
// over maxBody, or shorter than it declared, is refused before anything
// is done.
func TestEdgeReadsTheBodyWhole(t *testing.T) {
	e := benchEdge()
	send := `{"QueueUrl":"http://localhost:7942/000000000000/q","MessageBody":"hello"}`
	for _, declared := range []bool{true, false} {
		r := sqsRequest("SendMessage", send)
		if !declared {
			r.ContentLength = -1 // as a chunked body arrives
			r.Body = io.NopCloser(strings.NewReader(send))
		}
		w := httptest.NewRecorder()
		e.ServeHTTP(w, r)
		if w.Code != http.StatusOK || !strings.Contains(w.Body.String(), `"MD5OfMessageBody":"5d41402abc4b2a76b9719d911017c592"`) {
			t.Fatalf("length declared %v: %d %s", declared, w.Code, w.Body)
		}
	}

	short := sqsRequest("SendMessage", send)
	short.ContentLength = int64(len(send) + 10)
	w := httptest.NewRecorder()
	e.ServeHTTP(w, short)
	if w.Code != http.StatusBadRequest || !strings.Contains(w.Body.String(), "Reading the request body") {
		t.Fatalf("a body shorter than declared: %d %s", w.Code, w.Body)
	}

	for _, declared := range []bool{true, false} {
		big := sqsRequest("SendMessage", strings.Repeat(" ", maxBody+1))
		if !declared {
			big.ContentLength = -1
		}
		w := httptest.NewRecorder()
		e.ServeHTTP(w, big)
		if w.Code != http.StatusBadRequest || !strings.Contains(w.Body.String(), "request body is over") {
			t.Fatalf("a body over maxBody, length declared %v: %d %s", declared, w.Code, w.Body)
		}
	}
}
