package httpapi

import (
	"net/http"
	"strings"
	"testing"
)

// Narad-Delay and Narad-Deliver-At reach the broker as the record's delay
// or due time; a malformed one, or both, is a 400 naming the header, and
// nothing is produced.
func TestSingleProduceScheduleHeaders(t *testing.T) {
	e := newEnv(t)
	for _, c := range []struct {
		header map[string]string
		want   string
	}{
		{map[string]string{"Narad-Delay": "90s"}, "delay=1m30s"},
		{map[string]string{"Narad-Delay": "1500"}, "delay=1.5s"},
		{map[string]string{"Narad-Deliver-At": "1764000000000"}, "deliver_at=1764000000000"},
		{map[string]string{"Narad-Deliver-At": "2025-11-24T16:00:00Z"}, "deliver_at=1764000000000"},
	} {
		w := e.do(request{method: "POST", target: "/v1/topics/orders/produce", body: "x", header: c.header})
		if w.Code != http.StatusAccepted {
			t.Fatalf("%v: %d %s", c.header, w.Code, w.Body)
		}
		if got := e.rec.last("Produce"); !strings.Contains(got, c.want) {
			t.Errorf("%v: produced %s, want %s", c.header, got, c.want)
		}
	}
	before := e.rec.count("Produce")
	for _, c := range []struct {
		header map[string]string
		names  string
	}{
		{map[string]string{"Narad-Delay": "soon"}, "Narad-Delay"},
		{map[string]string{"Narad-Delay": "-5s"}, "Narad-Delay"},
		{map[string]string{"Narad-Deliver-At": "tomorrow"}, "Narad-Deliver-At"},
		{map[string]string{"Narad-Deliver-At": "-1"}, "Narad-Deliver-At"},
		{map[string]string{"Narad-Delay": "1s", "Narad-Deliver-At": "5"}, "both given"},
	} {
		w := e.do(request{method: "POST", target: "/v1/topics/orders/produce", body: "x", header: c.header})
		if w.Code != http.StatusBadRequest || !strings.Contains(w.Body.String(), c.names) {
			t.Errorf("%v: %d %s, want 400 naming %s", c.header, w.Code, w.Body, c.names)
		}
	}
	if n := e.rec.count("Produce"); n != before {
		t.Fatalf("a refused schedule produced %d records", n-before)
	}
}
