package lease

import (
	"container/heap"
	"fmt"
	"slices"
	"time"
)

// Message groups (docs/concepts.md, "Message groups").
//
// On a topic with ordering "group" a record's group is its key (keyless
// records have none). Within a group records are offered in offset order,
// and while any record of the group is outstanding — leased, or held for
// the dead-letter topic — no later record of it is offered.
//
// Reserve cannot keep that order: it hands out the lowest free offsets, and
// the lowest free offsets of a partition with one stuck group are the
// blocked records behind it, so every round would pick them only to give
// them back, and other groups would starve. The table does not read
// records, so it cannot know their groups either. A group walk therefore
// splits the work with the caller (package hosted):
//
//  1. A zero GroupWalk is a walk not yet started.
//  2. Candidates starts it at the frontier (the first call) and names the next free offsets in order (the free list, then
//     from the cursor), a chunk at a time; the caller reads those records
//     and hashes their keys.
//  3. ReserveGroups walks the candidates in offset order and leases each
//     one whose group is not blocked. A group is blocked while it has an
//     outstanding entry that this walk did not grant, and a group passed
//     over earlier in the walk stays blocked for the rest of it — so a
//     walk may lease several consecutive records of one group (a consume
//     with max=N), never a record with an earlier one of its group left
//     free behind it.
//
// The records read for the walk are the answer too: nothing is read twice.
//
// State: grouped maps each outstanding offset leased by a group walk to
// its group's hash, and groupOut counts the outstanding entries per group
// (a group is deleted at zero) and names the walk that granted them (none
// once one is held for the dead-letter topic), so a walk knows its own. An entry leaves when its offset stops
// being outstanding — markFree (nack, expiry, release, revive of a dead
// hold), settle (ack, SettleDead) or dropRange (retention, skip, purge) —
// so expiry, nack, ack and dead-lettering unlock a group with no work of
// their own, and memory is bounded by the outstanding entries (MaxInFlight
// leases plus dead-letter holds), not by the groups ever seen. A lapse
// into a dead-letter hold keeps the entry: the group stays locked until
// the hold is settled.
//
// Races: the table's mutex is released while the caller reads, so between
// Candidates and ReserveGroups an earlier record of a group may become
// free again (a nack or expiry) without being among the candidates. Every
// markFree bumps freeGen; a walk remembers it, and Candidates and
// ReserveGroups refuse a walk whose generation is stale (the caller starts
// over). Acks need no such care: a settled record never has to come first.
//
// Invariant (checked with the others, see checkGroups): every offset in
// grouped is leased or held for the dead-letter topic, and groupOut[g].n is
// the number of offsets in grouped with group g, never zero.
//
// Leases granted by Reserve (ordering "none", or before a PATCH to
// "group") carry no group: the change applies to leases granted after it.

// Candidate is a record the caller read for a group walk: its offset and,
// for a keyed record, the hash of its key.
type Candidate struct {
	Offset uint64
	Group  uint64 // hash of the key; ignored unless Keyed
	Keyed  bool   // false: no group, leased as under ordering "none"
}

// GroupWalk is one lease round in group order (ReserveGroups); the zero
// value is ready to use, and Candidates starts it. It is used by one
// goroutine and must not outlive the round.
type GroupWalk struct {
	// Visibility, set by the caller before the walk, is how long the
	// walk's leases live (one consume's own visibility), or the
	// visibility timeout when <= 0, as ReserveFor's d.
	Visibility time.Duration

	started bool                // Candidates has started it
	gen     uint64              // freeGen when the walk started
	next    uint64              // every offset below it has been walked
	passed  map[uint64]struct{} // groups passed over: blocked for the rest
	id      uint64              // tells the walk's grants from others' (groupState.walk)
	done    bool                // stopped by a cap: nothing more to find
}

// Candidates returns up to limit free offsets below hwm that w has not yet
// walked, lowest first, appended to dst; none once a cap stopped w
// (ReserveGroups). The first call starts w at the frontier. stale means an offset became free since w started
// (nack, expiry, release): the caller must start a new walk.
//
// Cost: O(f log f) for f offsets in the free list, plus the offsets
// returned.
func (t *Table) Candidates(w *GroupWalk, dst []uint64, hwm uint64, limit int) (offsets []uint64, stale bool) {
	t.mu.Lock()
	defer t.unlock()
	t.purge(t.clock.Now())
	if !w.started {
		t.walks++
		*w = GroupWalk{Visibility: w.Visibility, started: true, gen: t.freeGen, next: t.frontier, id: t.walks}
	}
	if t.freeGen != w.gen {
		return nil, true
	}
	if w.done {
		return nil, false
	}
	if cap(dst) < limit {
		dst = make([]uint64, 0, min(limit, 1024))
	}
	offsets = dst[:0]
	from := max(w.next, t.frontier)
	for _, x := range t.free {
		if x >= from && x < hwm && t.isFree(x) {
			offsets = append(offsets, x)
		}
	}
	slices.Sort(offsets)
	if len(offsets) > limit {
		return offsets[:limit], false
	}
	x := max(t.cursor, from)
	i := t.skipped.search(x)
	for len(offsets) < limit && x < hwm {
		if i < len(t.skipped.spans) && t.skipped.spans[i].lo <= x {
			x = t.skipped.spans[i].hi
			i++
			continue
		}
		offsets = append(offsets, x)
		x++
	}
	return offsets, false
}

// ReserveGroups walks cands (offsets from Candidates, in order, with the
// groups the caller read) and leases up to want of them, in offset order,
// each only if its group is not blocked (see the comment at the top of
// this file). It stops at the first record the acked-ahead capacity cannot take, as
// Reserve does. A record whose deliveries are used up is held for the
// dead-letter topic, which blocks its group. stale: as for Candidates;
// nothing was leased.
func (t *Table) ReserveGroups(w *GroupWalk, hwm uint64, cands []Candidate, want int) (out []Lease, stale bool) {
	t.mu.Lock()
	defer t.unlock()
	now := t.clock.Now()
	t.purge(now)
	if !w.started || t.freeGen != w.gen {
		return nil, true
	}
	n := min(want, t.limits.MaxInFlight-len(t.leases))
	t.capped = n < want
	if n <= 0 {
		w.done = true
		return nil, false
	}
	ackRoom := t.limits.MaxAckedAhead - len(t.ackedAhead) - t.leasesAboveFrontier()
	if t.unsticking() {
		ackRoom = 0 // only the frontier record, as Reserve
	}
	expiry := now.Add(t.limits.visibility(w.Visibility))
	fromFree := false
	for _, c := range cands {
		x := c.Offset
		if len(out) >= n || x >= hwm {
			break
		}
		if x < w.next {
			continue
		}
		if !t.isFree(x) {
			// Taken since Candidates (another walk): later records of its
			// group wait. Outstanding in groupOut, it blocks them as long
			// as it is out (and once settled it need not come first);
			// leased by Reserve, it is not there, so the walk passes it.
			if _, out := t.groupOut[c.Group]; c.Keyed && !out && !t.settled(x) {
				w.pass(c.Group)
			}
			w.next = x + 1
			continue
		}
		if c.Keyed && w.blocked(t, c.Group) {
			w.pass(c.Group)
			w.next = x + 1
			continue
		}
		if x != t.frontier && ackRoom <= 0 {
			t.capped, w.done = true, true
			break // every later record is above the frontier too
		}
		fromFree = t.take(x) || fromFree
		w.next = x + 1
		if x != t.frontier {
			ackRoom-- // its settle will join acked-ahead
		}
		if t.exhausted(x) {
			// A count carried over from an earlier life, or MaxDeliveries
			// lowered: the record goes to the dead-letter topic, and its
			// group waits for that.
			t.hold(x, ReasonExpired)
			if c.Keyed {
				t.group(x, c.Group, 0)
				w.pass(c.Group)
			}
			continue
		}
		out = t.grant(out, n, x, expiry)
		if c.Keyed {
			t.group(x, c.Group, w.id)
		}
	}
	if fromFree {
		t.free.keepFree(t)
	}
	return out, false
}

// take removes free offset x from where Reserve would find it, and says
// whether it was in the free list. Below the cursor it is in the free list,
// left for the caller to drop (keepFree, once per walk: the list is a heap
// with no removal by value). At or above it, the cursor moves past x, and
// the free offsets it steps over (records the walk passed over, blocked by
// their group) go to the free list, keeping invariant 8.
func (t *Table) take(x uint64) (fromFree bool) {
	if x < t.cursor {
		return true
	}
	y := t.cursor
	i := t.skipped.search(y)
	for y < x {
		if i < len(t.skipped.spans) && t.skipped.spans[i].lo <= y {
			y = t.skipped.spans[i].hi
			i++
			continue
		}
		if t.isFree(y) {
			t.free.push(y)
		}
		y++
	}
	t.cursor = x + 1
	return false
}

// keepFree drops every entry that is no longer free (leased or held by a
// group walk) and restores heap order: O(len).
func (f *freeList) keepFree(t *Table) {
	kept := (*f)[:0]
	for _, x := range *f {
		if t.isFree(x) {
			kept = append(kept, x)
		}
	}
	*f = kept
	heap.Init(f)
}

// blocked reports whether group g may not be leased now by w: it was
// passed over earlier in the walk, or it has an outstanding entry that w
// did not grant.
func (w *GroupWalk) blocked(t *Table, g uint64) bool {
	if _, ok := w.passed[g]; ok {
		return true
	}
	st, ok := t.groupOut[g]
	return ok && st.walk != w.id
}

func (w *GroupWalk) pass(g uint64) {
	if w.passed == nil {
		w.passed = make(map[uint64]struct{})
	}
	w.passed[g] = struct{}{}
}

// groupState is a group with outstanding entries: how many, and which
// walk granted them — every entry of a group comes from one walk, since
// no other walk leases a group while it has any (0: a dead-letter hold,
// which no walk may pass).
type groupState struct {
	n    int
	walk uint64
}

// group records outstanding offset x as a member of group g, granted by
// walk.
func (t *Table) group(x, g, walk uint64) {
	if t.grouped == nil {
		t.grouped = make(map[uint64]uint64)
		t.groupOut = make(map[uint64]groupState)
	}
	t.grouped[x] = g
	st := t.groupOut[g]
	t.groupOut[g] = groupState{n: st.n + 1, walk: walk}
}

// groupHeld notes that outstanding offset x is now held for the
// dead-letter topic: its group, if it has one, is no walk's any more, so
// not even the walk that leased it may lease past it.
func (t *Table) groupHeld(x uint64) {
	if g, ok := t.grouped[x]; ok {
		st := t.groupOut[g]
		st.walk = 0
		t.groupOut[g] = st
	}
}

// ungroup forgets x's group entry, if it has one: x is no longer
// outstanding. Free when no group walk ever leased (one length check).
func (t *Table) ungroup(x uint64) {
	if len(t.grouped) == 0 {
		return
	}
	g, ok := t.grouped[x]
	if !ok {
		return
	}
	delete(t.grouped, x)
	if st := t.groupOut[g]; st.n > 1 {
		st.n--
		t.groupOut[g] = st
	} else {
		delete(t.groupOut, g)
	}
}

// ungroupRange forgets the group entries of [lo, hi), settled wholesale.
// The map holds at most the outstanding entries, so walking it is cheap.
func (t *Table) ungroupRange(lo, hi uint64) {
	for x := range t.grouped {
		if x >= lo && x < hi {
			t.ungroup(x)
		}
	}
}

// Groups returns how many groups hold outstanding entries (leases or
// dead-letter holds granted by group walks): what the group state costs.
func (t *Table) Groups() int {
	t.mu.Lock()
	defer t.unlock()
	t.purge(t.clock.Now())
	return len(t.groupOut)
}

// checkGroups reports a broken group invariant (see the top of the file).
func (t *Table) checkGroups() error {
	counts := make(map[uint64]int, len(t.groupOut))
	for x, g := range t.grouped {
		if t.leases[x] == nil && !t.isDead(x) {
			return fmt.Errorf("grouped offset %d is neither leased nor held", x)
		}
		counts[g]++
	}
	if len(counts) != len(t.groupOut) {
		return fmt.Errorf("%d groups counted, %d outstanding", len(t.groupOut), len(counts))
	}
	for g, st := range t.groupOut {
		if counts[g] != st.n {
			return fmt.Errorf("group %x counts %d entries, holds %d", g, st.n, counts[g])
		}
	}
	return nil
}
