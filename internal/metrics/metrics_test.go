package metrics

import (
	"io"
	"net/http/httptest"
	"strings"
	"testing"
)

func TestExposition(t *testing.T) {
	m := New()
	m.MessagesProduced.WithLabelValues("orders").Add(3)
	m.OpenPartitionLogs.Set(2)
	rec := httptest.NewRecorder()
	m.Handler().ServeHTTP(rec, httptest.NewRequest("GET", "/metrics", nil))
	body, _ := io.ReadAll(rec.Body)
	for _, want := range []string{
		`narad_messages_produced_total{topic="orders"} 3`,
		`narad_open_partition_logs 2`,
		`narad_storage_fsync_duration_seconds_bucket`,
	} {
		if !strings.Contains(string(body), want) {
			t.Errorf("exposition lacks %q", want)
		}
	}
	// A second Metrics has its own registry: no duplicate-registration panic.
	New()
}
