package lease

import "math"

// Frontier returns the frontier: every offset below it is settled.
func (t *Table) Frontier() uint64 {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.frontier
}

// FrontierVersion returns the frontier and a counter bumped every time it
// moves. The frontier is persisted by the caller, not here: it polls this
// (say every 100 ms) and writes the frontier only when version differs
// from the one it last wrote, so a busy partition costs at most one write
// per period and an idle one none.
func (t *Table) FrontierVersion() (frontier, version uint64) {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.frontier, t.version
}

// MarkSkipped settles [from, to) as skipped-corrupt: frames that can never
// be read. It returns how many of those offsets were not settled before.
// Leases on them are dropped (their handles become ErrGone), acked-ahead
// entries among them are absorbed, and the frontier advances if the range
// reaches it. Offsets below the frontier are ignored.
//
// Cost: O(min(to-from, n) + log n) with n the leases, acked-ahead and
// delivery counts held; ranges are stored as ranges, never per offset.
func (t *Table) MarkSkipped(from, to uint64) int {
	t.mu.Lock()
	defer t.unlock()
	t.purge(t.clock.Now())
	lo := max(from, t.frontier)
	if lo >= to {
		return 0
	}
	newly := to - lo
	newly -= t.dropRange(lo, to)
	newly -= t.skipped.add(lo, to)
	t.skippedTotal += newly
	if lo == t.frontier {
		t.moveFrontier(lo)
	}
	if newly > math.MaxInt {
		return math.MaxInt
	}
	return int(newly)
}

// AdvanceTo moves the frontier up to oldest, the oldest offset retention
// still keeps: records below it no longer exist, so they count as settled.
// Leases, acked-ahead entries, skipped ranges and delivery counts below
// oldest are dropped; handles of dropped leases become ErrGone. A no-op if
// oldest is not above the frontier.
//
// Cost: O(min(oldest-frontier, n) + log n), like MarkSkipped.
func (t *Table) AdvanceTo(oldest uint64) {
	t.mu.Lock()
	defer t.unlock()
	t.purge(t.clock.Now())
	t.retentionDropped += t.settleBelow(oldest)
}

// PurgeTo settles every offset below hwm (the partition's high watermark
// at a purge: the caller passes it, never more) and returns how many of
// them were not settled before — leased, awaiting redelivery or never
// delivered; acked-ahead and skipped ones do not count. Like AdvanceTo it
// drops the leases (their handles get ErrSettled), acked-ahead entries,
// skipped ranges and delivery counts below hwm and moves the frontier to
// it. A second call with the same hwm returns 0.
//
// Cost: O(min(hwm-frontier, n) + log n), like AdvanceTo.
func (t *Table) PurgeTo(hwm uint64) uint64 {
	t.mu.Lock()
	defer t.unlock()
	t.purge(t.clock.Now())
	return t.settleBelow(hwm)
}

// settleBelow moves the frontier up to to, settling everything below it
// wholesale, and returns how many offsets were unsettled.
func (t *Table) settleBelow(to uint64) uint64 {
	if to <= t.frontier {
		return 0
	}
	unsettled := to - t.frontier
	unsettled -= t.dropRange(t.frontier, to)
	for _, sp := range t.skipped.spans {
		unsettled -= overlap(sp, span{t.frontier, to})
	}
	t.skipped.dropBelow(to)
	t.moveFrontier(to)
	return unsettled
}

// dropRange drops leases, delivery counts and acked-ahead entries in
// [lo, hi), because those offsets are being settled wholesale, and
// returns how many acked-ahead entries it dropped (offsets that were
// already settled). It walks whichever is smaller, the range or each map,
// so a huge range costs no more than the state held.
func (t *Table) dropRange(lo, hi uint64) (acked uint64) {
	in := func(x uint64) bool { return x >= lo && x < hi }
	t.dropDeadRange(lo, hi)
	t.ungroupRange(lo, hi)
	width := hi - lo
	if width <= uint64(len(t.leases)) {
		for x := lo; x < hi; x++ {
			if e := t.leases[x]; e != nil {
				t.dropLease(e)
			}
		}
	} else {
		for x, e := range t.leases {
			if in(x) {
				t.dropLease(e)
			}
		}
	}
	had := len(t.deliveries)
	if width <= uint64(len(t.deliveries)) {
		for x := lo; x < hi; x++ {
			delete(t.deliveries, x)
		}
	} else {
		for x := range t.deliveries {
			if in(x) {
				delete(t.deliveries, x)
			}
		}
	}
	if len(t.deliveries) != had {
		t.countsVersion++
	}
	if width <= uint64(len(t.ackedAhead)) {
		for x := lo; x < hi; x++ {
			if _, ok := t.ackedAhead[x]; ok {
				delete(t.ackedAhead, x)
				acked++
			}
		}
	} else {
		for x := range t.ackedAhead {
			if in(x) {
				delete(t.ackedAhead, x)
				acked++
			}
		}
	}
	return acked
}

// moveFrontier sets the frontier to f (>= the current one) and then
// carries it over the contiguous settled run above: acked-ahead offsets
// one at a time, skipped ranges whole. The run is walked once per offset
// ever settled, so the cost is amortised O(1) per ack.
func (t *Table) moveFrontier(f uint64) {
	for {
		if _, ok := t.ackedAhead[f]; ok {
			delete(t.ackedAhead, f)
			f++
			continue
		}
		if sp, ok := t.skipped.takeFront(f); ok {
			f = max(f, sp.hi)
			continue
		}
		break
	}
	if f == t.frontier {
		return
	}
	t.frontier = f
	t.version++
	t.free.dropBelow(f)
	t.cursor = max(t.cursor, f)
}
