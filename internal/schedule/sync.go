package schedule

// Sync makes every Add and Settle made before it durable: their entries
// are appended to the journal, which is fdatasynced once, and to their
// bucket files. When the journal has grown past the checkpoint size, the
// bucket files are fsynced, those of settled buckets removed, and the
// journal emptied. On an error the entries stay pending for the next
// Sync, and the caller must not rely on them (a consumer frontier must
// not pass them).
func (x *Index) Sync() error {
	x.syncMu.Lock()
	defer x.syncMu.Unlock()
	x.mu.Lock()
	if x.closed {
		x.mu.Unlock()
		return errClosed
	}
	ops := x.pend
	x.pend, x.writing = nil, ops
	x.mu.Unlock()

	var err error
	if len(ops) > 0 {
		err = x.files.write(ops)
	}
	x.mu.Lock()
	x.writing = nil
	if err != nil {
		x.pend = append(ops, x.pend...)
	}
	x.mu.Unlock()
	if err != nil || x.files.jsize < x.ckpt {
		return err
	}
	return x.checkpoint()
}

// checkpoint fsyncs the bucket files written since the last one, removes
// the files of loaded buckets whose every add is settled and whose minute
// has passed (no add can come for it any more: a record due in the past
// is delivered, not scheduled), and empties the journal. syncMu is held.
func (x *Index) checkpoint() error {
	x.mu.Lock()
	nowMin := minuteOf(x.now().UnixMilli())
	var done []int64
	for m, b := range x.buckets {
		if b.loaded && b.live == 0 && m < nowMin {
			done = append(done, m)
			delete(x.buckets, m)
		}
	}
	x.mu.Unlock()
	return x.files.checkpoint(done)
}
