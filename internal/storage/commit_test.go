package storage

import (
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// Group commit under load, with segments small enough that groups roll in
// their middle: every batch lands whole and contiguous at the offset its
// Commit returned, commit times never decrease, and the HWM is exact.
func TestGroupCommitManyWritersAcrossRolls(t *testing.T) {
	var fsyncs atomic.Int64
	dir := t.TempDir()
	l := openT(t, dir, Options{SegmentBytes: 2048, Hooks: Hooks{Fsync: func(time.Duration) { fsyncs.Add(1) }}})
	const writers, each = 32, 20
	type done struct {
		base uint64
		id   string
		n    int
	}
	results := make(chan done, writers*each)
	var wg sync.WaitGroup
	for w := 0; w < writers; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			for i := 0; i < each; i++ {
				n := 1 + (w+i)%4
				id := fmt.Sprintf("w%d-%d", w, i)
				base := commitT(t, l, recs(id, n, w%2 == 0))
				results <- done{base, id, n}
			}
		}(w)
	}
	wg.Wait()
	close(results)
	all := readAll(t, l, 0)
	if uint64(len(all)) != l.HWM() {
		t.Fatalf("read %d records, hwm %d", len(all), l.HWM())
	}
	count := 0
	for r := range results {
		count++
		for j := 0; j < r.n; j++ {
			if got, want := string(all[r.base+uint64(j)].Payload), fmt.Sprintf("%s-%d", r.id, j); got != want {
				t.Fatalf("offset %d holds %q, want %q", r.base+uint64(j), got, want)
			}
		}
	}
	for i := 1; i < len(all); i++ {
		if all[i].CommittedAt < all[i-1].CommittedAt {
			t.Fatalf("commit time decreased at %d", i)
		}
	}
	if len(segmentFiles(t, dir)) < 3 {
		t.Fatalf("want rolls during the run, got %d segments", len(segmentFiles(t, dir)))
	}
	t.Logf("%d commits shared %d fsyncs", count, fsyncs.Load())
	l.Close()
	l = openT(t, dir, Options{SegmentBytes: 2048})
	defer l.Close()
	if got := len(readAll(t, l, 0)); got != len(all) {
		t.Fatalf("after reopen: %d records, want %d", got, len(all))
	}
}
