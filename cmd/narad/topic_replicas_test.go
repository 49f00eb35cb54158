package main

import (
	"strings"
	"testing"
)

// Replication is visible outside -o json: topic add says how many copies,
// topic info names each partition's leader, copies and in-sync set, and
// why a partition cannot commit.
func TestTopicShowsReplication(t *testing.T) {
	b := newBroker(t, func(r req) (int, string) {
		if r.Method == "POST" {
			return 201, `{"name":"orders","partitions":2,"retention_ms":604800000,"visibility_timeout_ms":30000,"replication_factor":3}`
		}
		return 200, `{"name":"orders","partitions":2,"replication_factor":3,
			"partition_stats":[{"index":0,"owner_node":"n1","next_offset":10,"high_watermark":10,"consumer_frontier":4,"replicas":["n1","n2","n3"],"in_sync":["n1","n2","n3"]},
			{"index":1,"owner_node":"n2","next_offset":5,"high_watermark":3,"consumer_frontier":3,"replicas":["n2","n3","n1"],"in_sync":["n2"],"commit_stall":"waiting for in-sync follower n3"}]}`
	})
	c := against(b)
	r := c.run(t, "topic", "add", "orders", "--replication-factor", "3")
	mustOK(t, r)
	if !strings.Contains(r.stdout, "3 copies of each partition") {
		t.Errorf("topic add: %q", r.stdout)
	}
	r = c.run(t, "topic", "info", "orders")
	mustOK(t, r)
	for _, want := range []string{
		"PARTITION  LEADER  OLDEST",
		"AVAILABLE  REPLICAS  IN SYNC",
		"yes        n1,n2,n3  n1,n2,n3",
		"yes        n2,n3,n1  n2 (1 of 3)",
		"partition 1 cannot commit: waiting for in-sync follower n3",
	} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("topic info lacks %q:\n%s", want, r.stdout)
		}
	}
}
