package broker

import "testing"

// A topic's describe shows segments ≥ 1 from its creation, as the
// reference's does (it creates the first segment with the partition):
// the empty active segment a log opens with is counted. Describing still
// opens no log, and after the first write the count is the open log's.
func TestDescribeShowsASegmentFromCreation(t *testing.T) {
	b := newTestBroker(t, Config{})
	createTestTopic(t, b, "fresh", 2)
	v, err := b.DescribeTopic("fresh")
	if err != nil {
		t.Fatal(err)
	}
	for _, ps := range v.PartitionStats {
		if ps.Segments == nil || *ps.Segments != 1 || ps.Available != nil {
			t.Fatalf("partition %d of a new topic: segments %v, available %v; want 1 and no flag", ps.Index, ps.Segments, ps.Available)
		}
		if b.reg.Peek("fresh", ps.Index) != nil {
			t.Fatalf("describing opened partition %d", ps.Index)
		}
	}
	commitSized(t, b, "fresh", 0, 1, 10)
	v, _ = b.DescribeTopic("fresh")
	if s := v.PartitionStats[0].Segments; s == nil || *s != 1 {
		t.Fatalf("after a write: segments %v, want the open log's 1", s)
	}
}
