package hosted

import (
	"context"
	"fmt"
	"testing"

	"github.com/narad-io/narad/internal/header"
	"github.com/narad-io/narad/internal/storage"
)

// idRecs builds records carrying the given msg ids ("" for none).
func idRecs(ids ...string) []storage.Record {
	recs := make([]storage.Record, len(ids))
	for i, id := range ids {
		recs[i].Payload = []byte(fmt.Sprintf("p%d", i))
		if id != "" {
			recs[i].Headers = []header.Header{{Name: header.MsgID, Value: id}}
		}
	}
	return recs
}

// stamp gives recs the commit time at, as a commit would.
func stamp(recs []storage.Record, at int64) []storage.Record {
	for i := range recs {
		recs[i].CommittedAt = at
	}
	return recs
}

// admitOne runs one admit and settles it as committed at now.
func admitOne(t *testing.T, w *idWindow, recs []storage.Record, now, window int64) (kept []int, dups int) {
	t.Helper()
	idx, dups, c, err := w.admit(context.Background(), recs, now, window)
	if err != nil {
		t.Fatal(err)
	}
	keep := recs
	if idx != nil {
		keep = nil
		for _, j := range idx {
			keep = append(keep, recs[j])
		}
	}
	w.settle(c, stamp(keep, now), true)
	if idx == nil {
		for i := range recs {
			idx = append(idx, i)
		}
	}
	return idx, dups
}

func TestIDWindowRules(t *testing.T) {
	const window = 1000
	w := newIDWindow(100)
	if kept, dups := admitOne(t, w, idRecs("a", "", "b"), 10_000, window); len(kept) != 3 || dups != 0 {
		t.Fatalf("first: kept %v, %d dups", kept, dups)
	}
	// Within the window: a and b are stored already; a record without an
	// id is always kept; c is new.
	if kept, dups := admitOne(t, w, idRecs("b", "", "c", "a"), 10_999, window); fmt.Sprint(kept) != "[1 2]" || dups != 2 {
		t.Fatalf("retry within the window: kept %v, %d dups; want [1 2], 2", kept, dups)
	}
	// A batch's own duplicates count too.
	if kept, dups := admitOne(t, w, idRecs("d", "d", "e", "d"), 11_000, window); fmt.Sprint(kept) != "[0 2]" || dups != 2 {
		t.Fatalf("duplicates within a batch: kept %v, %d dups; want [0 2], 2", kept, dups)
	}
	// a and b were committed at 10,000: at 11,001 they are out of the
	// window (10,000 < 11,001 − 1,000), c (10,999) and d (11,000) are not.
	if kept, dups := admitOne(t, w, idRecs("a", "b", "c", "d"), 11_001, window); fmt.Sprint(kept) != "[0 1]" || dups != 2 {
		t.Fatalf("after the window: kept %v, %d dups; want [0 1], 2", kept, dups)
	}
}

func TestIDWindowCapForgetsOldest(t *testing.T) {
	w := newIDWindow(3)
	admitOne(t, w, idRecs("a", "b", "c"), 1, 1_000_000)
	idx, _, c, _ := w.admit(context.Background(), idRecs("d"), 2, 1_000_000)
	if forgotten := w.settle(c, stamp(idRecs("d"), 2), true); forgotten != 1 {
		t.Fatalf("a fourth id over a cap of 3 forgot %d ids, want 1", forgotten)
	}
	_ = idx
	// a, the oldest, was forgotten: a retry of it is stored again; b is not.
	if kept, dups := admitOne(t, w, idRecs("a", "b"), 3, 1_000_000); fmt.Sprint(kept) != "[0]" || dups != 1 {
		t.Fatalf("after the cap: kept %v, %d dups; want [0] (a forgotten), 1", kept, dups)
	}
	if len(w.seen) > 3 {
		t.Fatalf("%d ids remembered over a cap of 3", len(w.seen))
	}
}

// A commit carrying an id another commit is storing right now waits for
// that one's outcome: stored, it is a duplicate; failed, it stores it.
func TestIDWindowClaimWaitsForOutcome(t *testing.T) {
	for _, ok := range []bool{true, false} {
		w := newIDWindow(100)
		_, _, first, _ := w.admit(context.Background(), idRecs("x"), 1, 1000)
		// While x's commit runs, a batch carrying x is not decided: it is
		// told to wait for that claim (checked directly, not by timing).
		w.mu.Lock()
		_, _, c, wait := w.decide(idRecs("x", "y"))
		w.mu.Unlock()
		if c != nil || wait != first.done {
			t.Fatalf("a batch carrying x was decided (claim %v) while the first commit of x was running", c)
		}
		type result struct {
			idx  []int
			dups int
		}
		got := make(chan result, 1)
		go func() {
			idx, dups, c, err := w.admit(context.Background(), idRecs("x", "y"), 1, 1000)
			if err != nil {
				t.Error(err)
			}
			w.settle(c, nil, false)
			got <- result{idx, dups}
		}()
		w.settle(first, stamp(idRecs("x"), 1), ok)
		r := <-got
		if ok && (fmt.Sprint(r.idx) != "[1]" || r.dups != 1) {
			t.Fatalf("after x was stored: kept %v, %d dups; want [1], 1", r.idx, r.dups)
		}
		if !ok && (r.idx != nil || r.dups != 0) {
			t.Fatalf("after x's commit failed: kept %v, %d dups; want all, 0", r.idx, r.dups)
		}
	}
}

func TestIDWindowClaimWaitHonoursContext(t *testing.T) {
	w := newIDWindow(100)
	w.admit(context.Background(), idRecs("x"), 1, 1000)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, _, _, err := w.admit(ctx, idRecs("x"), 1, 1000); err == nil {
		t.Fatal("an admit waiting on a claim ignored its cancelled context")
	}
}
