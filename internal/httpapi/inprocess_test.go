package httpapi

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/narad-io/narad/internal/broker"
	"github.com/narad-io/narad/internal/storage"
)

// An in-process batch produce takes its records from the context
// (WithRecords) and answers as for a body, or gives what it accepted as
// values (WithAccepted); an in-process consume with a
// sink (WithMessages) gets the messages as values and an empty 200,
// while the same consume without one answers their JSON.
func TestInProcessRecordsAndMessages(t *testing.T) {
	b := realBroker(t, nil, "q")
	api := apiOver(b)
	ctx := WithRecords(context.Background(), []broker.ProduceRecord{{Payload: []byte("a")}, {Payload: []byte("b")}})
	w := httptest.NewRecorder()
	api.ServeHTTP(w, httptest.NewRequestWithContext(ctx, http.MethodPost, "/v1/topics/q/produce/batch", http.NoBody))
	if w.Code != http.StatusAccepted || !strings.Contains(w.Body.String(), `"accepted":2`) {
		t.Fatalf("in-process produce: %d %s", w.Code, w.Body)
	}
	// With WithAccepted, what it accepted comes as values, the body empty.
	var acc []broker.Accepted
	ctx = WithAccepted(WithRecords(context.Background(), []broker.ProduceRecord{{Payload: []byte("c")}}), &acc)
	w = httptest.NewRecorder()
	api.ServeHTTP(w, httptest.NewRequestWithContext(ctx, http.MethodPost, "/v1/topics/q/produce/batch", http.NoBody))
	if w.Code != http.StatusAccepted || w.Body.Len() != 0 || len(acc) != 1 || acc[0].ID == "" {
		t.Fatalf("in-process produce with a sink: %d %q, sink %+v", w.Code, w.Body, acc)
	}
	// A refused one answers its error and leaves the sink alone.
	acc = nil
	ctx = WithAccepted(WithRecords(context.Background(), []broker.ProduceRecord{{Payload: []byte("d")}}), &acc)
	w = httptest.NewRecorder()
	api.ServeHTTP(w, httptest.NewRequestWithContext(ctx, http.MethodPost, "/v1/topics/nope/produce/batch", http.NoBody))
	if w.Code != http.StatusNotFound || acc != nil {
		t.Fatalf("refused in-process produce with a sink: %d %q, sink %+v", w.Code, w.Body, acc)
	}
	if _, err := b.Commit(context.Background(), "q", 0, 0, []storage.Record{{Payload: []byte("hi")}}, storage.Source{}); err != nil {
		t.Fatal(err)
	}
	var got []broker.Message
	w = httptest.NewRecorder()
	api.ServeHTTP(w, httptest.NewRequestWithContext(WithMessages(context.Background(), &got), http.MethodGet, "/v1/topics/q/consume?max=10&partition=0", nil))
	if w.Code != http.StatusOK || w.Body.Len() != 0 || len(got) != 1 || string(got[0].Payload) != "hi" || got[0].ReceiptHandle == "" {
		t.Fatalf("a consume with a sink: %d %q, sink %+v", w.Code, w.Body, got)
	}
	// An in-process batch ack takes its handles and gives its results as
	// values (WithAcks), a bad handle's result in its place.
	var res []AckResult
	ctx = WithAcks(context.Background(), []string{got[0].ReceiptHandle, "not-a-handle"}, &res)
	w = httptest.NewRecorder()
	api.ServeHTTP(w, httptest.NewRequestWithContext(ctx, http.MethodPost, "/v1/topics/q/ack", http.NoBody))
	if w.Code != http.StatusOK || w.Body.Len() != 0 || len(res) != 2 || res[0].Status != http.StatusNoContent || res[1].Status != http.StatusBadRequest {
		t.Fatalf("an in-process batch ack: %d %q, results %+v", w.Code, w.Body, res)
	}
	// Nothing left to take: 204, and the sink untouched.
	got = nil
	w = httptest.NewRecorder()
	api.ServeHTTP(w, httptest.NewRequestWithContext(WithMessages(context.Background(), &got), http.MethodGet, "/v1/topics/q/consume?max=10&partition=0", nil))
	if w.Code != http.StatusNoContent || got != nil {
		t.Fatalf("an empty consume with a sink: %d, sink %+v", w.Code, got)
	}
}
