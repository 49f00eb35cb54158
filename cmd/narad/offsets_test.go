package main

import (
	"encoding/json"
	"strings"
	"testing"
)

func TestOffsetsTableAndJSON(t *testing.T) {
	b := newBroker(t, func(r req) (int, string) {
		if r.Path != "/v1/topics/orders/offsets" {
			return 404, `{"error":"no"}`
		}
		if r.q("partition") == "1" {
			return 200, `{"topic":"orders","time_ms":1796320800000,"partitions":[{"partition":1,"offset":1187}]}`
		}
		return 200, `{"topic":"orders","time_ms":1796320800000,"partitions":[{"partition":0,"offset":1200},{"partition":1,"offset":1187}]}`
	})
	r := against(b).run(t, "offsets", "orders", "--time", "10m")
	mustOK(t, r)
	want := "offsets of orders at 2026-12-03T18:00:00Z\nPARTITION  OFFSET  ERROR\n0          1200    -\n1          1187    -\n"
	if r.stdout != want {
		t.Errorf("stdout %q, want %q", r.stdout, want)
	}
	if q := b.requests()[0].Query.Encode(); q != "time=10m" {
		t.Errorf("query %s", q)
	}
	r = against(b).run(t, "offsets", "orders", "--time", "1796320800000", "--partition", "1", "-o", "json")
	mustOK(t, r)
	var v struct {
		TimeMs     int64 `json:"time_ms"`
		Partitions []struct {
			Partition int     `json:"partition"`
			Offset    *uint64 `json:"offset"`
		} `json:"partitions"`
	}
	if err := json.Unmarshal([]byte(r.stdout), &v); err != nil || v.TimeMs != 1796320800000 || len(v.Partitions) != 1 || *v.Partitions[0].Offset != 1187 {
		t.Errorf("json %q: %v", r.stdout, err)
	}
	if q := b.requests()[1].Query.Encode(); q != "partition=1&time=1796320800000" {
		t.Errorf("query %s", q)
	}
}

// A partition that could not answer is shown, and the command fails after
// printing the others.
func TestOffsetsPartitionErrorFails(t *testing.T) {
	b := newBroker(t, func(req) (int, string) {
		return 200, `{"topic":"orders","time_ms":0,"partitions":[{"partition":0,"offset":3},{"partition":1,"error":"partition 1 of \"orders\" is being moved; retry"}]}`
	})
	r := against(b).run(t, "offsets", "orders", "--time", "0")
	if r.code != 1 || !strings.Contains(r.stdout, "being moved") || !strings.Contains(r.stdout, "0          3") ||
		!strings.Contains(r.stderr, "1 partition of 2 could not answer") {
		t.Errorf("exit %d stdout %q stderr %q", r.code, r.stdout, r.stderr)
	}
	if r := against(b).run(t, "offsets", "orders"); r.code != 1 || !strings.Contains(r.stderr, `"time" not set`) {
		t.Errorf("no --time: exit %d stderr %q", r.code, r.stderr)
	}
}
