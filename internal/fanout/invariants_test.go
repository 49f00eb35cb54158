package fanout

import (
	"strings"
	"sync/atomic"
	"testing"

	"github.com/narad-io/narad/internal/storage"
	"github.com/narad-io/narad/internal/testutil"
)

// Each rule invariants.go checks fires on a state that breaks it. A
// cursor's checks run on its own goroutine, where a panic ends the test
// process, so they are driven here directly with the state a bug would
// leave (scripts/mutate.sh's advance-before-commit is such a bug: the
// suite then stops on "commit before advance"). Outside race builds the
// checks compile away, and these tests are skipped.

func TestInvariantCommitBeforeAdvance(t *testing.T) {
	testutil.RequireChecks(t, assertInvariants)
	var k cursorChecks
	k.start(10)
	k.clear(15) // a slab 10..14 committed
	if err := k.advanceError(15, 20, true); err != nil {
		t.Fatalf("advance over committed records: %v", err)
	}
	for name, c := range map[string]struct {
		next, flushed uint64
		want          string
	}{
		"past the committed":   {16, 20, "commit before advance: the cursor file would record 16, but the child has committed only the records below 15"},
		"backward":             {9, 20, "cursor offset moves backward from 10 to 9"},
		"past the flushed hwm": {15, 12, "would record 15, past the parent's flushed high watermark 12"},
	} {
		if err := k.advanceError(c.next, c.flushed, true); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want %q", name, err, c.want)
		}
	}
	// With the parent log closed there is no flushed mark to check.
	if err := k.advanceError(15, 0, false); err != nil {
		t.Fatalf("advance with the parent closed: %v", err)
	}
	got := testutil.PanicOf(func() { k.beforeAdvance(cursorKey{parent: "p", child: "c", partition: 3}, 16, nil) })
	if !strings.Contains(got, "cursor p -> c partition 3: invariant broken: commit before advance") {
		t.Fatalf("beforeAdvance past the committed records panicked with %q", got)
	}
	k.advanced(15)
	if err := k.advanceError(14, 20, true); err == nil {
		t.Fatal("an advance below the last durable one passed")
	}
}

// A slab's buckets keep slab order; a bucket holding its records in
// another order, or a record in the wrong bucket, panics.
func TestInvariantBucketKeepsSlabOrder(t *testing.T) {
	testutil.RequireChecks(t, assertInvariants)
	recs := []storage.Record{
		{Key: []byte("a"), Payload: []byte("0")},
		{Key: []byte("b"), Payload: []byte("1")},
		{Key: []byte("a"), Payload: []byte("2")},
		{Payload: []byte("3")},
	}
	var rr atomic.Uint64
	out := bucketize(recs, 1, 1, 0, &rr) // one bucket: the slab itself, in order
	dest := []int32{0, 0, 0, 0}
	if err := bucketError(recs, dest, out); err != nil {
		t.Fatalf("bucketize's own result: %v", err)
	}
	out[0][0], out[0][2] = out[0][2], out[0][0]
	got := testutil.PanicOf(func() { checkBuckets(recs, dest, out) })
	if !strings.Contains(got, "invariant broken: bucket keeps slab order: slab record 0 is not record 0 of bucket 0") {
		t.Fatalf("a reordered bucket panicked with %q", got)
	}
	two := [][]storage.Record{{recs[0], recs[2]}, {recs[1], recs[3]}}
	if err := bucketError(recs, []int32{0, 1, 0, 1}, two); err != nil {
		t.Fatalf("two buckets in slab order: %v", err)
	}
	if err := bucketError(recs, []int32{0, 1, 1, 1}, two); err == nil || !strings.Contains(err.Error(), "slab record 2 is not record 1 of bucket 1") {
		t.Fatalf("a record in another bucket than placed: %v", err)
	}
}
