package lease

// Defer settles the record of the live lease (offset, nonce) as
// scheduled for later: the caller read it, found its due time ahead, and
// added it to the partition's durable schedule, which delivers it when due
// (package schedule; Due is its lease table). Here it is settled like a
// skipped record — a range the frontier passes, so a record due in an
// hour never holds back the records behind it — but it is not counted as
// skipped or acked-ahead, and this delivery is not counted (the record
// was not handed to anyone). On a topic with message groups it leaves
// its group's order: the group's next record is offered at once, and the
// scheduled one when due. It returns ErrGone if (offset, nonce) is not a
// live lease.
//
// The caller must not let a persisted frontier pass offset before the
// schedule's entry for it is durable.
func (t *Table) Defer(offset, nonce uint64) error {
	t.mu.Lock()
	defer t.unlock()
	t.purge(t.clock.Now())
	e, err := t.live(offset, nonce)
	if err != nil {
		return err
	}
	t.dropLease(e)
	t.ungroup(offset) // filed: it no longer holds its group (groups.go)
	if _, ok := t.deliveries[offset]; ok {
		delete(t.deliveries, offset)
		t.countsVersion++
	}
	t.skipped.add(offset, offset+1)
	t.deferredTotal++
	if offset == t.frontier {
		t.moveFrontier(offset)
	}
	return nil
}
