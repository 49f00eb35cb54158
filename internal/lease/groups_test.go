package lease

import (
	"slices"
	"testing"

	"pgregory.net/rapid"
)

// keyed is a partition's records for group walks: keys[x] is offset x's
// group, -1 for a keyless record.
type keyed []int

// walk runs one group walk of want records over tb as package hosted does:
// candidates a chunk at a time, their groups from keys, until want or the
// records run out; a stale walk starts over.
func (k keyed) walk(t fataler, tb *Table, want, chunk int) []Lease {
	t.Helper()
	hwm := uint64(len(k))
	for attempt := 0; attempt < 10; attempt++ {
		w := new(GroupWalk)
		var out []Lease
		stale := false
		for len(out) < want {
			offs, st := tb.Candidates(w, nil, hwm, chunk)
			if st {
				stale = true
				break
			}
			if len(offs) == 0 {
				break
			}
			cands := make([]Candidate, len(offs))
			for i, x := range offs {
				cands[i] = Candidate{Offset: x, Group: uint64(k[x]), Keyed: k[x] >= 0}
			}
			ls, st := tb.ReserveGroups(w, hwm, cands, want-len(out))
			if st {
				stale = true
				break
			}
			out = append(out, ls...)
		}
		if !stale {
			return out
		}
		for _, l := range out {
			must(t, "release after a stale walk", tb.Release(l.Offset, l.Nonce))
		}
	}
	t.Fatalf("group walk stale ten times in a row")
	return nil
}

func TestGroupWalkOffersOneGroupInOrder(t *testing.T) {
	tb, _ := newTable(t, defaultLimits)
	k := keyed{0, 0, 1, 0, 1, 2}
	step := func(want int, expect ...uint64) map[uint64]Lease {
		t.Helper()
		got := k.walk(t, tb, want, 16)
		if !slices.Equal(offsets(got), expect) {
			t.Fatalf("walk(%d) leased %v, want %v", want, offsets(got), expect)
		}
		return byOffset(got)
	}
	l0 := step(1, 0)
	l2 := step(1, 2) // 1 is group 0's, locked by 0
	l5 := step(5, 5) // 1, 3 wait behind 0; 4 behind 2
	step(5)
	mustNil(t, "ack 0", tb.Ack(0, l0[0].Nonce))
	l1 := step(1, 1)
	mustNil(t, "ack 2", tb.Ack(2, l2[2].Nonce))
	l4 := step(1, 4) // 3 waits behind 1
	mustNil(t, "ack 1", tb.Ack(1, l1[1].Nonce))
	l3 := step(1, 3)
	for x, l := range map[uint64]Lease{3: l3[3], 4: l4[4], 5: l5[5]} {
		mustNil(t, "ack", tb.Ack(x, l.Nonce))
	}
	if f := tb.Frontier(); f != 6 {
		t.Fatalf("frontier %d, want 6", f)
	}
	if n := tb.Groups(); n != 0 {
		t.Fatalf("%d groups held after every record settled, want 0", n)
	}
}

func TestGroupWalkLeasesConsecutiveRecordsOfAGroupAtOnce(t *testing.T) {
	tb, _ := newTable(t, defaultLimits)
	k := keyed{0, 0, 1, 0, -1, -1}
	// One walk of 10 takes every record: a consume with max=N may hold
	// several records of one group, in order.
	got := k.walk(t, tb, 10, 2)
	if !slices.Equal(offsets(got), []uint64{0, 1, 2, 3, 4, 5}) {
		t.Fatalf("leased %v, want all six", offsets(got))
	}
	// Acking the first two keeps the group locked by the third.
	ls := byOffset(got)
	mustNil(t, "ack 0", tb.Ack(0, ls[0].Nonce))
	mustNil(t, "ack 1", tb.Ack(1, ls[1].Nonce))
	if n := tb.Groups(); n != 2 {
		t.Fatalf("%d groups held, want 2 (0 by offset 3, 1 by offset 2)", n)
	}
}

func TestGroupStaysLockedUntilAllItsRecordsSettle(t *testing.T) {
	tb, _ := newTable(t, defaultLimits)
	k := keyed{0, 0, 0}
	got := byOffset(k.walk(t, tb, 3, 16))
	// Give back the first only: the group stays locked by the other two
	// (until all are settled), then the first comes back before anything.
	mustNil(t, "nack 0", tb.Nack(0, got[0].Nonce))
	if again := k.walk(t, tb, 3, 16); len(again) != 0 {
		t.Fatalf("after nack of 0 with 1, 2 leased: leased %v, want nothing", offsets(again))
	}
	mustNil(t, "ack 2", tb.Ack(2, got[2].Nonce))
	mustNil(t, "ack 1", tb.Ack(1, got[1].Nonce))
	again := k.walk(t, tb, 3, 16)
	if !slices.Equal(offsets(again), []uint64{0}) {
		t.Fatalf("after nack of 0 leased %v, want [0]", offsets(again))
	}
}

func TestGroupNackOrExpiryMakesTheRecordNextAgain(t *testing.T) {
	for _, nack := range []bool{true, false} {
		tb, clk := newTable(t, defaultLimits)
		k := keyed{0, 0, 1}
		got := byOffset(k.walk(t, tb, 1, 16))
		if nack {
			mustNil(t, "nack 0", tb.Nack(0, got[0].Nonce))
		} else {
			clk.Advance(vt)
			if n := tb.Expire(); n != 1 {
				t.Fatalf("expired %d, want 1", n)
			}
		}
		if n := tb.Groups(); n != 0 {
			t.Fatalf("nack=%v: %d groups held after the lease ended, want 0", nack, n)
		}
		again := k.walk(t, tb, 1, 16)
		if !slices.Equal(offsets(again), []uint64{0}) {
			t.Fatalf("nack=%v: leased %v, want [0] again before 1", nack, offsets(again))
		}
		if again[0].DeliveryCount != 2 {
			t.Fatalf("nack=%v: delivery count %d, want 2", nack, again[0].DeliveryCount)
		}
	}
}

func TestStuckGroupDoesNotBlockAnother(t *testing.T) {
	l := defaultLimits
	l.MaxInFlight = 10
	tb, _ := newTable(t, l)
	// Group 0 has 300 records and is stuck on its first; group 1's record
	// comes after all of them.
	k := make(keyed, 301)
	k[300] = 1
	first := k.walk(t, tb, 1, 64)
	if !slices.Equal(offsets(first), []uint64{0}) {
		t.Fatalf("leased %v, want [0]", offsets(first))
	}
	for range 3 {
		got := k.walk(t, tb, 5, 64)
		if !slices.Equal(offsets(got), []uint64{300}) && !slices.Equal(offsets(got), nil) {
			t.Fatalf("leased %v, want [300] or nothing", offsets(got))
		}
		if len(got) == 1 {
			return
		}
	}
	t.Fatal("group 1 never offered while group 0 was stuck")
}

func TestGroupDeadLetterHoldLocksUntilSettled(t *testing.T) {
	tb, _ := newTable(t, deadLimits(1))
	k := keyed{0, 0, 1}
	got := byOffset(k.walk(t, tb, 1, 16))
	mustNil(t, "nack 0", tb.Nack(0, got[0].Nonce)) // deliveries used up: held
	if n := tb.DeadCount(); n != 1 {
		t.Fatalf("held %d, want 1", n)
	}
	next := k.walk(t, tb, 5, 16)
	if !slices.Equal(offsets(next), []uint64{2}) {
		t.Fatalf("while 0 is held leased %v, want [2] (1 waits for the dead-letter topic)", offsets(next))
	}
	if n := tb.Groups(); n != 2 {
		t.Fatalf("%d groups held, want 2", n)
	}
	mustNil(t, "settle dead 0", tb.SettleDead(0))
	after := k.walk(t, tb, 5, 16)
	if !slices.Equal(offsets(after), []uint64{1}) {
		t.Fatalf("after dead-lettering 0 leased %v, want [1]", offsets(after))
	}
}

func TestGroupStateEmptiesWhenLeasesSettle(t *testing.T) {
	l := defaultLimits
	l.MaxInFlight, l.MaxAckedAhead = 1000, 1000
	tb, clk := newTable(t, l)
	k := make(keyed, 900)
	for i := range k {
		k[i] = i % 300
	}
	got := k.walk(t, tb, 900, 128)
	if len(got) != 900 {
		t.Fatalf("leased %d, want 900 (each group's three records at once)", len(got))
	}
	if n := tb.Groups(); n != 300 {
		t.Fatalf("%d groups held, want 300", n)
	}
	// Settle by every way out: ack, nack, release, expiry.
	for _, le := range got {
		switch le.Offset / 300 { // each group's first, second, third record
		case 0:
			mustNil(t, "ack", tb.Ack(le.Offset, le.Nonce))
		case 1:
			mustNil(t, "nack", tb.Nack(le.Offset, le.Nonce))
		}
	}
	if n := tb.Groups(); n != 300 {
		t.Fatalf("%d groups held with a third still leased, want 300", n)
	}
	clk.Advance(vt)
	tb.Expire()
	if n := tb.Groups(); n != 0 {
		t.Fatalf("%d groups held after every lease ended, want 0", n)
	}
	tb.PurgeTo(900)
	if len(tb.grouped) != 0 || len(tb.groupOut) != 0 {
		t.Fatalf("group maps hold %d offsets, %d groups after purge", len(tb.grouped), len(tb.groupOut))
	}
}

// TestGroupWalkProperty drives random walks, acks, nacks, expiries and
// dead-letter settles, and checks at every lease that the record is the
// first unsettled one of its group, or follows the earlier ones this very
// walk leased; and that whenever nothing is outstanding, a walk leases
// something if anything is unsettled (a group never stays locked).
func TestGroupWalkProperty(t *testing.T) {
	rapid.Check(t, func(rt *rapid.T) {
		n := rapid.IntRange(1, 60).Draw(rt, "records")
		groups := rapid.IntRange(1, 6).Draw(rt, "groups")
		k := make(keyed, n)
		for i := range k {
			k[i] = rapid.IntRange(-1, groups-1).Draw(rt, "key")
		}
		l := defaultLimits
		l.MaxInFlight = rapid.IntRange(1, 8).Draw(rt, "inflight")
		l.MaxAckedAhead = rapid.IntRange(0, 8).Draw(rt, "ackedahead")
		l.MaxDeliveries = rapid.IntRange(0, 3).Draw(rt, "maxdeliveries")
		tb, clk := newTable(t, l)
		settled := make([]bool, n)
		out := map[uint64]Lease{}
		for step := 0; step < 200; step++ {
			switch rapid.IntRange(0, 4).Draw(rt, "op") {
			case 0, 1:
				want := rapid.IntRange(1, 5).Draw(rt, "want")
				got := k.walk(rt, tb, want, rapid.IntRange(1, 8).Draw(rt, "chunk"))
				mine := map[uint64]bool{}
				for _, le := range got {
					mine[le.Offset] = true
				}
				for _, le := range got {
					x := le.Offset
					if k[x] < 0 {
						out[x] = le
						continue
					}
					for y := range uint64(n) {
						if y == x || k[y] != k[x] || settled[y] || mine[y] {
							continue
						}
						if y < x {
							rt.Fatalf("leased %d of group %d with %d unsettled before it", x, k[x], y)
						}
						if _, ok := out[y]; ok {
							rt.Fatalf("leased %d of group %d while %d of it is leased", x, k[x], y)
						}
					}
					out[x] = le
				}
			case 2:
				if x, ok := pick(rt, out); ok && tb.Ack(x, out[x].Nonce) == nil {
					settled[x] = true
					delete(out, x)
				}
			case 3:
				if x, ok := pick(rt, out); ok {
					must(rt, "nack", tb.Nack(x, out[x].Nonce))
					delete(out, x)
				}
			case 4:
				clk.Advance(vt)
				tb.Expire()
				clear(out)
				for _, d := range tb.DueDead(n) {
					must(rt, "settle dead", tb.SettleDead(d.Offset))
					settled[d.Offset] = true
				}
			}
			if len(out) == 0 && tb.DeadCount() == 0 && slices.Contains(settled, false) {
				if tb.Groups() != 0 {
					rt.Fatalf("%d groups held with nothing outstanding", tb.Groups())
				}
				if got := k.walk(rt, tb, 1, 4); len(got) == 0 {
					rt.Fatalf("nothing outstanding, records unsettled, and a walk leased nothing")
				} else {
					must(rt, "release", tb.Release(got[0].Offset, got[0].Nonce))
				}
			}
		}
	})
}

func must(t fataler, what string, err error) {
	t.Helper()
	if err != nil {
		t.Fatalf("%s: unexpected error %v", what, err)
	}
}

// pick draws one of m's offsets, lowest-first order for reproducibility.
func pick(rt *rapid.T, m map[uint64]Lease) (uint64, bool) {
	if len(m) == 0 {
		return 0, false
	}
	keys := make([]uint64, 0, len(m))
	for x := range m {
		keys = append(keys, x)
	}
	slices.Sort(keys)
	return keys[rapid.IntRange(0, len(keys)-1).Draw(rt, "pick")], true
}

func TestGroupRecordHeldByTheWalkLocksItsGroup(t *testing.T) {
	tb, _ := newTable(t, deadLimits(2))
	// Offset 1 used its deliveries in an earlier life: the walk holds it
	// for the dead-letter topic, and its group's later records wait for
	// that, in this walk and after it.
	tb.SeedDeliveries([]DeliveryCount{{Offset: 1, Count: 2}})
	k := keyed{0, 0, 0, 1}
	got := k.walk(t, tb, 4, 16)
	if !slices.Equal(offsets(got), []uint64{0, 3}) {
		t.Fatalf("leased %v, want [0 3] (1 held, 2 behind it)", offsets(got))
	}
	mustNil(t, "ack 0", tb.Ack(0, got[0].Nonce))
	if again := k.walk(t, tb, 4, 16); len(again) != 0 {
		t.Fatalf("with 1 held leased %v, want nothing", offsets(again))
	}
	mustNil(t, "settle dead 1", tb.SettleDead(1))
	if after := k.walk(t, tb, 4, 16); !slices.Equal(offsets(after), []uint64{2}) {
		t.Fatalf("after 1 was dead-lettered leased %v, want [2]", offsets(after))
	}
}

// cands makes candidates of offs from k.
func (k keyed) cands(offs []uint64) []Candidate {
	out := make([]Candidate, len(offs))
	for i, x := range offs {
		out[i] = Candidate{Offset: x, Group: uint64(k[x]), Keyed: k[x] >= 0}
	}
	return out
}

func TestGroupPassedOverStaysBlockedForTheWalk(t *testing.T) {
	tb, _ := newTable(t, defaultLimits)
	k := keyed{0, 0, 0}
	first := k.walk(t, tb, 1, 16) // 0 leased
	w := new(GroupWalk)
	offs, _ := tb.Candidates(w, nil, 3, 1)
	if got, _ := tb.ReserveGroups(w, 3, k.cands(offs), 5); len(got) != 0 {
		t.Fatalf("leased %v while 0 is out", offsets(got))
	}
	// 0 is acked between two chunks of the walk: 1, passed over while 0
	// was out, is still free, so 2 must not be leased before it.
	mustNil(t, "ack 0", tb.Ack(0, first[0].Nonce))
	offs, _ = tb.Candidates(w, nil, 3, 16)
	if got, _ := tb.ReserveGroups(w, 3, k.cands(offs), 5); len(got) != 0 {
		t.Fatalf("leased %v with 1 passed over earlier in the walk", offsets(got))
	}
}

func TestGroupWalkIsStaleOnceARecordIsFreed(t *testing.T) {
	tb, _ := newTable(t, defaultLimits)
	k := keyed{0, 0}
	first := k.walk(t, tb, 1, 16) // 0 leased
	w := new(GroupWalk)
	offs, _ := tb.Candidates(w, nil, 2, 16) // [1], 0 being out
	// 0 is given back while the caller reads: unseen by the walk, it
	// must still come before 1.
	mustNil(t, "nack 0", tb.Nack(0, first[0].Nonce))
	got, stale := tb.ReserveGroups(w, 2, k.cands(offs), 5)
	if !stale || len(got) != 0 {
		t.Fatalf("ReserveGroups after a nack = %v, stale %v; want nothing, stale", offsets(got), stale)
	}
	if _, stale := tb.Candidates(w, nil, 2, 16); !stale {
		t.Fatal("Candidates of a stale walk not stale")
	}
}

func TestGroupWalkKeepsTheCaps(t *testing.T) {
	k := keyed{0, 1, 2, 3, 4, 5}
	l := defaultLimits
	l.MaxInFlight = 2
	tb, _ := newTable(t, l)
	if got := k.walk(t, tb, 5, 16); !slices.Equal(offsets(got), []uint64{0, 1}) {
		t.Fatalf("in-flight cap 2: leased %v, want [0 1]", offsets(got))
	}
	// Acked-ahead capacity: with one ack above the frontier allowed, the frontier
	// record and one more.
	l = defaultLimits
	l.MaxAckedAhead = 1
	tb, _ = newTable(t, l)
	if got := k.walk(t, tb, 5, 16); !slices.Equal(offsets(got), []uint64{0, 1}) {
		t.Fatalf("acked-ahead cap 1: leased %v, want [0 1]", offsets(got))
	}
}
