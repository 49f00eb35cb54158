package awsapi

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"

	"github.com/narad-io/narad/internal/auth"
)

// stubAPI answers the in-process /v1 requests an SQS send and receive
// make, so the benchmarks below time the edge alone: a produce accepts n
// records, a consume serves n messages.
func stubAPI(n int) http.Handler {
	ids := `"w5ftc2tq8cgp1c00000000000fg"` + strings.Repeat(`,"w5ftc2tq8cgp1c00000000000fg"`, n-1)
	msg := `{"topic":"q","partition":0,"offset":7,"id":"w5ftc2tq8cgp1c00000000000fg","payload":"` + strings.Repeat("x", 256) + `","payload_encoding":"text","timestamp":1796323045,"timestamp_ms":1796323045123,"receipt_handle":"0:7:123","delivery_count":1,"headers":{"store":"north"}}`
	msgs := msg + strings.Repeat(","+msg, n-1)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "application/json")
		switch {
		case strings.HasSuffix(r.URL.Path, "/produce/batch"):
			w.WriteHeader(http.StatusAccepted)
			io.WriteString(w, `{"accepted":`+strconv.Itoa(n)+`,"ids":[`+ids+`]}`)
		case strings.HasSuffix(r.URL.Path, "/consume"):
			io.WriteString(w, `{"messages":[`+msgs+`]}`)
		default: // GET /v1/topics/q: the queue's record
			io.WriteString(w, `{"name":"q","partitions":3,"retention_ms":604800000,"visibility_timeout_ms":30000}`)
		}
	})
}

func benchEdge() *Edge { return benchEdgeOf(1) }

// benchEdgeOf is an edge over stubAPI(n).
func benchEdgeOf(n int) *Edge {
	return New(Options{API: stubAPI(n), Next: http.NotFoundHandler(),
		Verify: func(r *http.Request, _ []byte) (auth.Principal, bool, error) {
			return auth.Principal{}, false, auth.CheckSigV4Shape(r)
		}})
}

func sqsRequest(action, body string) *http.Request {
	r := httptest.NewRequest(http.MethodPost, "/", strings.NewReader(body))
	r.Header.Set("X-Amz-Target", "AmazonSQS."+action)
	r.Header.Set("Content-Type", "application/x-amz-json-1.0")
	r.Header.Set("X-Amz-Date", "20261204T043000Z")
	r.Header.Set("Authorization", "AWS4-HMAC-SHA256 Credential=test/20261204/us-east-1/sqs/aws4_request, SignedHeaders=content-type;host;x-amz-date;x-amz-target, Signature=0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef")
	return r
}

// benchAction times action with body on e; every answer must be a 200
// with no failed entry.
func benchAction(b *testing.B, e *Edge, action, body string) {
	b.ReportAllocs()
	for b.Loop() {
		w := httptest.NewRecorder()
		e.ServeHTTP(w, sqsRequest(action, body))
		if w.Code != http.StatusOK || strings.Contains(w.Body.String(), `"Failed":[{`) {
			b.Fatalf("%d %s", w.Code, w.Body)
		}
	}
}

func BenchmarkEdgeSendMessage(b *testing.B) {
	benchAction(b, benchEdge(), "SendMessage",
		`{"QueueUrl":"http://localhost:7942/000000000000/q","MessageBody":"`+strings.Repeat("x", 256)+`"}`)
}

func BenchmarkEdgeReceiveMessage(b *testing.B) {
	benchAction(b, benchEdge(), "ReceiveMessage",
		`{"QueueUrl":"http://localhost:7942/000000000000/q","MaxNumberOfMessages":10,"MessageAttributeNames":["All"]}`)
}

// BenchmarkEdgeSendMessageBatch sends ten messages of 256 bytes.
func BenchmarkEdgeSendMessageBatch(b *testing.B) {
	var entries []string
	for i := range 10 {
		entries = append(entries, `{"Id":"m`+strconv.Itoa(i)+`","MessageBody":"`+strings.Repeat("x", 256)+`"}`)
	}
	benchAction(b, benchEdgeOf(10), "SendMessageBatch",
		`{"QueueUrl":"http://localhost:7942/000000000000/q","Entries":[`+strings.Join(entries, ",")+`]}`)
}

// BenchmarkEdgeReceiveMessage10 receives ten messages of 256 bytes.
func BenchmarkEdgeReceiveMessage10(b *testing.B) {
	benchAction(b, benchEdgeOf(10), "ReceiveMessage",
		`{"QueueUrl":"http://localhost:7942/000000000000/q","MaxNumberOfMessages":10}`)
}
