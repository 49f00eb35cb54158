package httpapi

import (
	"encoding/json"
	"net/http"
	"testing"

	"github.com/narad-io/narad/internal/apierr"
	"github.com/narad-io/narad/internal/history"
)

// The first ask for a topic's history records a sample, so the second
// has two (the ring's and the live one); an unknown topic is the
// describe's 404.
func TestStatsHistoryRecordsTheFirstAsk(t *testing.T) {
	book := history.NewBook()
	e := newEnv(t, func(e *env) { e.opts.History = book })
	for want := 1; want <= 2; want++ {
		w := e.do(request{method: "GET", target: "/v1/topics/orders/stats/history"})
		if w.Code != http.StatusOK {
			t.Fatalf("%d %s", w.Code, w.Body)
		}
		var v historyView
		if err := json.Unmarshal(w.Body.Bytes(), &v); err != nil {
			t.Fatal(err)
		}
		if v.Topic != "orders" || len(v.Samples) != want || v.WindowMs != 900_000 || v.IntervalMs != 10_000 {
			t.Fatalf("ask %d: %+v", want, v)
		}
	}
	if book.Topics() != 1 {
		t.Fatalf("%d rings, want 1", book.Topics())
	}
	e.rec.failWith("DescribeTopic", apierr.NotFound("topic %q does not exist", "gone"))
	if w := e.do(request{method: "GET", target: "/v1/topics/gone/stats/history"}); w.Code != http.StatusNotFound {
		t.Fatalf("%d %s, want 404", w.Code, w.Body)
	}
}
