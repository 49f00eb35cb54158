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

// quietPlane accepts batches without recording them: the benchmark
// measures the API's own work (routing, reading, decoding, answering).
type quietPlane struct{ fakePlane }

func (*quietPlane) ProduceBatchWithIDs(_ context.Context, _ string, recs []broker.ProduceRecord) ([]broker.Accepted, error) {
	acc := make([]broker.Accepted, len(recs))
	for i := range acc {
		acc[i] = broker.Accepted{ID: "w0000000000000000000000000g", Partition: i % 8}
	}
	return acc, nil
}

// BenchmarkProduceBatch is one batch produce of 100 keyed 100-byte JSON
// records through the handler, the path remote children and batching
// producers take.
func BenchmarkProduceBatch(b *testing.B) {
	s := New(&quietPlane{fakePlane{recorder: &recorder{}}}, nil, metrics.New(), nil,
		func() (bool, string) { return true, "" }, slog.New(slog.DiscardHandler), Options{})
	var body strings.Builder
	body.WriteString(`{"records":[`)
	for i := range 100 {
		if i > 0 {
			body.WriteByte(',')
		}
		fmt.Fprintf(&body, `{"key":"customer-%d","payload":{"id":%d,"note":"%s"}}`, i, i, strings.Repeat("n", 70))
	}
	body.WriteString(`]}`)
	payload := body.String()
	b.SetBytes(int64(len(payload)))
	b.ReportAllocs()
	for b.Loop() {
		w := httptest.NewRecorder()
		s.ServeHTTP(w, httptest.NewRequest("POST", "/v1/topics/orders/produce/batch", strings.NewReader(payload)))
		if w.Code != 202 {
			b.Fatalf("%d %s", w.Code, w.Body)
		}
	}
}
