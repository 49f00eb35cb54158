package fanout

import (
	"fmt"
	"testing"

	"github.com/narad-io/narad/internal/storage"
	"github.com/narad-io/narad/internal/topic"
)

// rule lanes by key: the sender splits a slab into lanes by key: every
// record of a key is in one lane, in slab order, and keyless records keep
// their slab order together in one lane. Lanes are sent in parallel, so a
// key split over two would lose its order at the target.
func TestLanesSplitBySlabKey(t *testing.T) {
	var slab []storage.Record
	for i := 0; i < 64; i++ {
		r := storage.Record{Offset: uint64(100 + i), Payload: []byte(fmt.Sprint(i))}
		if i%5 != 0 {
			r.Key = []byte(fmt.Sprintf("k%d", i%7))
		}
		slab = append(slab, r)
	}
	lanes := laneize(slab)
	if len(lanes) != remoteLanes {
		t.Fatalf("%d lanes, want %d", len(lanes), remoteLanes)
	}
	laneOf := map[string]int{}
	total := 0
	for i, lane := range lanes {
		last := uint64(0)
		for _, r := range lane {
			total++
			if r.Offset <= last {
				t.Fatalf("lane %d out of slab order: offset %d after %d", i, r.Offset, last)
			}
			last = r.Offset
			k := string(r.Key)
			if l, seen := laneOf[k]; seen && l != i {
				t.Fatalf("key %q in lanes %d and %d", k, l, i)
			}
			laneOf[k] = i
			if len(r.Key) > 0 && i != topic.KeyPartition(r.Key, remoteLanes) {
				t.Fatalf("key %q in lane %d, want its hash's lane %d", k, i, topic.KeyPartition(r.Key, remoteLanes))
			}
		}
	}
	if total != len(slab) || laneOf[""] != 0 {
		t.Fatalf("%d of %d records laned; keyless in lane %d", total, len(slab), laneOf[""])
	}
}

// rule remote start points: start=frontier records each parent partition's
// consumer frontier at attach time (not its high watermark); start=oldest
// its oldest retained offset.
func TestRemoteStartFrontierRecordsTheFrontier(t *testing.T) {
	n := newNode(t, Config{})
	n.createTopic("orders", 2, 0)
	n.commit("orders", 0, "a", "b", "c", "d")
	n.commit("orders", 1, "e", "f")
	n.stats.mu.Lock()
	n.stats.local = func(reps []topic.PartitionReport) []topic.PartitionReport {
		for i := range reps {
			reps[i].Frontier = uint64(1 + reps[i].Partition) // consumers acked part of each partition
		}
		return reps
	}
	n.stats.mu.Unlock()
	c := n.attachRemote("orders", "dr", "http://dr.example:7942", "frontier")
	if fmt.Sprint(c.AttachOffsets) != "[1 2]" {
		t.Fatalf("start=frontier: attach offsets %v, want the frontiers [1 2] (high watermarks [4 2])", c.AttachOffsets)
	}
}
