package lease

// Stats is a point-in-time snapshot of a Table, for metrics and admin.
type Stats struct {
	Partition       int
	Frontier        uint64
	FrontierVersion uint64 // bumped whenever Frontier moves
	InFlight        int    // live leases
	AckedAhead      int    // offsets acked above a gap
	SkippedRanges   int    // skipped-corrupt ranges held above the frontier
	DeadLetter      int    // offsets held for the dead-letter topic (dead.go)
	// Unsticking is true while the acked-ahead set is full and Reserve
	// hands out only the frontier record.
	Unsticking bool

	// Cumulative counters since the table was created.
	Skipped          uint64 // offsets newly marked skipped-corrupt
	Expired          uint64 // leases that reached their visibility timeout
	RetentionDropped uint64 // unsettled offsets AdvanceTo passed over
	Deferred         uint64 // records handed to the schedule (Defer)
}

// Stats returns a snapshot, after purging expired leases so that
// InFlight counts only live ones.
func (t *Table) Stats() Stats {
	t.mu.Lock()
	defer t.unlock()
	t.purge(t.clock.Now())
	return Stats{
		Partition:        t.partition,
		Frontier:         t.frontier,
		FrontierVersion:  t.version,
		InFlight:         len(t.leases),
		AckedAhead:       len(t.ackedAhead),
		SkippedRanges:    t.skipped.len(),
		Deferred:         t.deferredTotal,
		DeadLetter:       len(t.dead),
		Unsticking:       t.unsticking(),
		Skipped:          t.skippedTotal,
		Expired:          t.expiredTotal,
		RetentionDropped: t.retentionDropped,
	}
}
