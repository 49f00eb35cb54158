package httpapi

import (
	"context"
	"fmt"
	"log/slog"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/narad-io/narad/internal/broker"
	"github.com/narad-io/narad/internal/metrics"
)

// quietConsumer hands out canned messages and settles every handle,
// recording nothing: the benchmarks measure the API's own work on the
// consume and ack routes (routing, query, encoding the answer, decoding
// the ack body, wording the results).
type quietConsumer struct {
	fakePlane
	out []broker.Message
}

func (q *quietConsumer) Consume(_ context.Context, req broker.ConsumeRequest) ([]broker.Message, error) {
	return q.out[:max(req.Max, 1)], nil
}

func (*quietConsumer) Ack(context.Context, string, string, broker.AckOp) error { return nil }

func (*quietConsumer) AckBatch(_ context.Context, _ string, handles []string) ([]error, error) {
	return make([]error, len(handles)), nil
}

// benchMessages are n records as narad bench sends them: 256 bytes of
// text payload, no key, partitions 0..2.
func benchMessages(n int) []broker.Message {
	out := make([]broker.Message, n)
	for i := range out {
		out[i] = broker.Message{Topic: "orders", Partition: i % 3, Offset: uint64(100000 + i),
			Payload: []byte(strings.Repeat("x", 256)), CommittedAt: 1783615560123,
			ReceiptHandle: fmt.Sprintf("%d:%d:%d", i%3, 100000+i, 12345678901234567890-uint64(i)), DeliveryCount: 1}
	}
	return out
}

func newQuietConsumer(n int) (*Server, []broker.Message) {
	msgs := benchMessages(n)
	s := New(&quietConsumer{fakePlane: fakePlane{recorder: &recorder{}}, out: msgs}, nil, metrics.New(), nil,
		func() (bool, string) { return true, "" }, slog.New(slog.DiscardHandler), Options{})
	return s, msgs
}

// BenchmarkConsumeOne is GET consume (one record) and its ack by
// receipt_handle through the handler: the per-call consumer's two requests.
func BenchmarkConsumeOne(b *testing.B) {
	s, msgs := newQuietConsumer(1)
	ack := "/v1/topics/orders/ack?receipt_handle=" + msgs[0].ReceiptHandle
	b.ReportAllocs()
	for b.Loop() {
		w := httptest.NewRecorder()
		s.ServeHTTP(w, httptest.NewRequest("GET", "/v1/topics/orders/consume?wait=1s", nil))
		if w.Code != 200 {
			b.Fatalf("%d %s", w.Code, w.Body)
		}
		w = httptest.NewRecorder()
		s.ServeHTTP(w, httptest.NewRequest("POST", ack, nil))
		if w.Code != 204 {
			b.Fatalf("%d %s", w.Code, w.Body)
		}
	}
}

// BenchmarkConsumeBatch is GET consume max=100 and one batch ack of its
// 100 handles through the handler.
func BenchmarkConsumeBatch(b *testing.B) {
	s, msgs := newQuietConsumer(100)
	var body strings.Builder
	body.WriteString(`{"receipt_handles":[`)
	for i, m := range msgs {
		if i > 0 {
			body.WriteByte(',')
		}
		fmt.Fprintf(&body, "%q", m.ReceiptHandle)
	}
	body.WriteString(`]}`)
	ack := body.String()
	b.ReportAllocs()
	for b.Loop() {
		w := httptest.NewRecorder()
		s.ServeHTTP(w, httptest.NewRequest("GET", "/v1/topics/orders/consume?wait=1s&max=100", nil))
		if w.Code != 200 {
			b.Fatalf("%d %s", w.Code, w.Body)
		}
		w = httptest.NewRecorder()
		s.ServeHTTP(w, httptest.NewRequest("POST", "/v1/topics/orders/ack", strings.NewReader(ack)))
		if w.Code != 200 {
			b.Fatalf("%d %s", w.Code, w.Body)
		}
	}
}
