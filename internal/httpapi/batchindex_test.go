package httpapi

import (
	"context"
	"encoding/json"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/narad-io/narad/internal/broker"
	"github.com/narad-io/narad/internal/meta/metatest"
	"github.com/narad-io/narad/internal/metrics"
	"github.com/narad-io/narad/internal/wal"
)

// A refused batch produce names the refused record in a structured field
// beside the message ({"error": "record 2: ...", "index": 2}), whether the
// HTTP decoder or the broker's validation refused it, so a client (a
// remote child's sender) need not parse the text. Refusals that are not
// about one record carry no index; the message is as before.
func TestBatchRefusalNamesTheIndex(t *testing.T) {
	dir := t.TempDir()
	ms := metatest.Leader(t, dir, "n1")
	w, err := wal.Open(filepath.Join(dir, "ingress"), wal.Options{})
	if err != nil {
		t.Fatal(err)
	}
	b := broker.New(broker.Config{DataDir: dir, NodeID: "n1", DefaultPartitions: 2, MaxPartitions: 8,
		DefaultRetentionMs: 3_600_000, DefaultVisibilityMs: 30_000, DefaultMaxInFlight: 1024, DefaultMaxAckedAhead: 1024,
		Logger: slog.New(slog.DiscardHandler)}, ms, w, metrics.New())
	b.Start()
	b.OpenCreateGate()
	t.Cleanup(func() { b.Close(); w.Close() })
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if _, err := b.CreateTopic(ctx, broker.CreateTopicRequest{Name: "orders"}, ""); err != nil {
		t.Fatal(err)
	}
	s := New(b, nil, metrics.New(), nil, func() (bool, string) { return true, "" }, slog.New(slog.DiscardHandler), Options{})
	for _, tc := range []struct {
		name, topic, body string
		status            int
		index             *int
		says              string
	}{
		{"decoder: negative partition", "orders", `{"records":[{"payload":"a"},{"payload":"b"},{"payload":"c","partition":-1}]}`,
			400, ptr(2), "record 2: partition -1 is negative"},
		{"decoder: unknown field", "orders", `{"records":[{"payload":"a","nope":1}]}`, 400, ptr(0), "record 0:"},
		{"broker: partition out of range", "orders", `{"records":[{"payload":"a"},{"payload":"b","partition":5}]}`,
			400, ptr(1), "record 1: partition 5 is out of range"},
		{"not about a record: no topic", "missing", `{"records":[{"payload":"a"}]}`, 404, nil, "does not exist"},
		{"not about a record: empty batch", "orders", `{"records":[]}`, 400, nil, "records is empty"},
	} {
		rec := httptest.NewRecorder()
		req := httptest.NewRequest(http.MethodPost, "/v1/topics/"+tc.topic+"/produce/batch", strings.NewReader(tc.body))
		req.Header.Set("Content-Type", "application/json")
		s.ServeHTTP(rec, req)
		var got struct {
			Error string `json:"error"`
			Index *int   `json:"index"`
		}
		if err := json.Unmarshal(rec.Body.Bytes(), &got); err != nil {
			t.Fatalf("%s: body %q: %v", tc.name, rec.Body.String(), err)
		}
		indexOK := (got.Index == nil) == (tc.index == nil) && (got.Index == nil || *got.Index == *tc.index)
		if rec.Code != tc.status || !indexOK || !strings.Contains(got.Error, tc.says) {
			t.Errorf("%s: %d %s; want %d, index %v, mentioning %q", tc.name, rec.Code, rec.Body.String(), tc.status, deref(tc.index), tc.says)
		}
	}
}

func ptr(i int) *int { return &i }

func deref(p *int) any {
	if p == nil {
		return "none"
	}
	return *p
}
