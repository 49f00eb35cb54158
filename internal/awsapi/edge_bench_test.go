package awsapi

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/narad-io/narad/internal/auth"
)

// stubAPI answers the in-process /v1 requests an SQS send and receive
// make, so the benchmarks below time the edge alone.
func stubAPI() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "application/json")
		switch {
		case strings.HasSuffix(r.URL.Path, "/produce/batch"):
			w.WriteHeader(http.StatusAccepted)
			io.WriteString(w, `{"accepted":1,"ids":["w5ftc2tq8cgp1c00000000000fg"]}`)
		case strings.HasSuffix(r.URL.Path, "/consume"):
			io.WriteString(w, `{"messages":[{"topic":"q","partition":0,"offset":7,"id":"w5ftc2tq8cgp1c00000000000fg","payload":"hello","payload_encoding":"text","timestamp":1796323045,"timestamp_ms":1796323045123,"receipt_handle":"0:7:123","delivery_count":1,"headers":{"store":"north"}}]}`)
		default: // GET /v1/topics/q: the queue's record
			io.WriteString(w, `{"name":"q","partitions":3,"retention_ms":604800000,"visibility_timeout_ms":30000}`)
		}
	})
}

func benchEdge() *Edge {
	return New(Options{API: stubAPI(), Next: http.NotFoundHandler(),
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

func BenchmarkEdgeSendMessage(b *testing.B) {
	e := benchEdge()
	body := `{"QueueUrl":"http://localhost:7942/000000000000/q","MessageBody":"` + strings.Repeat("x", 256) + `"}`
	b.ReportAllocs()
	for b.Loop() {
		w := httptest.NewRecorder()
		e.ServeHTTP(w, sqsRequest("SendMessage", body))
		if w.Code != http.StatusOK {
			b.Fatalf("%d %s", w.Code, w.Body)
		}
	}
}

func BenchmarkEdgeReceiveMessage(b *testing.B) {
	e := benchEdge()
	body := `{"QueueUrl":"http://localhost:7942/000000000000/q","MaxNumberOfMessages":10,"MessageAttributeNames":["All"]}`
	b.ReportAllocs()
	for b.Loop() {
		w := httptest.NewRecorder()
		e.ServeHTTP(w, sqsRequest("ReceiveMessage", body))
		if w.Code != http.StatusOK {
			b.Fatalf("%d %s", w.Code, w.Body)
		}
	}
}
