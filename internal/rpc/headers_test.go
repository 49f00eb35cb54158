package rpc

import (
	"context"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/narad-io/narad/internal/apierr"
	"github.com/narad-io/narad/internal/header"
	"github.com/narad-io/narad/internal/storage"
)

// Headers travel with their records to the owner, the broker's own
// (narad-) included; records without headers arrive without.
func TestCommitCarriesHeaders(t *testing.T) {
	sent := []storage.Record{
		{Key: []byte("k"), Payload: []byte("a"), Headers: []header.Header{{Name: "narad-dlq-topic", Value: "orders"}, {Name: "trace", Value: "ü"}}},
		{Payload: []byte("b")},
		{Payload: []byte("c"), Headers: []header.Header{{Name: "x", Value: ""}}},
	}
	var got []storage.Record
	f := &fake{commit: func(_ context.Context, _ string, _ uint64, _ int, recs []storage.Record, _ uint64) error {
		got = recs
		return nil
	}}
	addr, _ := startServer(t, f)
	p := testPool(t, testSecret)
	if err := p.Commit(context.Background(), addr, "orders", 0, 0, sent, 1); err != nil {
		t.Fatal(err)
	}
	for i := range sent {
		if !slices.Equal(got[i].Headers, sent[i].Headers) {
			t.Errorf("record %d: headers %v, want %v", i, got[i].Headers, sent[i].Headers)
		}
	}
	if got[1].Headers != nil {
		t.Errorf("a record without headers arrived with %v", got[1].Headers)
	}
}

// A peer that sends headers the owner's log could not read back (over the
// stored caps) is refused with 400 and nothing reaches the handler.
func TestCommitRefusesHeadersOverTheStoredCaps(t *testing.T) {
	called := false
	f := &fake{commit: func(context.Context, string, uint64, int, []storage.Record, uint64) error {
		called = true
		return nil
	}}
	addr, _ := startServer(t, f)
	p := testPool(t, testSecret)
	bad := []storage.Record{{Payload: []byte("a"), Headers: []header.Header{{Name: "big", Value: strings.Repeat("v", header.MaxValue+1)}}}}
	err := p.Commit(context.Background(), addr, "orders", 0, 0, bad, 1)
	if apierr.Status(err) != http.StatusBadRequest || !strings.Contains(err.Error(), `"big"`) || called {
		t.Fatalf("err %v (status %d), handler called %v", err, apierr.Status(err), called)
	}
}
