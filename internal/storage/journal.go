package storage

// A held log opened with Options.Journal (package journal) makes a
// commit's or an Append's frames durable by journaling them — one write
// and one fdatasync of the node's journal, shared with every other copy
// on the node — rather than by an fdatasync of its own segment. The
// frames are in the segment file too (written, read back, verified), but
// only in the page cache until a roll, Flush, Close, a truncation or the
// journal's retirement (SyncJournaled) fdatasyncs the file; fileDirty
// says so meanwhile. End is the journaled end.
//
// The journal's two rules, kept here:
//
//   - every file a journaled write names exists durably first: a segment
//     is created with its directory fsynced (createSegment), and the
//     previous one is fdatasynced at the roll;
//   - before a truncation cuts files, and before Close, the log
//     fdatasyncs its active segment and forgets its directory in the
//     journal, so that no replay can put back bytes that were cut, or
//     write into a directory made anew.
//
// A failed fdatasync of a segment holding journaled frames fences the log
// as for lost lazy frames (fence.go): the kernel may have dropped them.
// Close then forgets nothing, and the next Open puts them back from the
// journal (Journal.Restore) before recovery reads the files.

// durableLocked makes a held commit's frames, written and published at
// pos of the active segment, durable: by an fdatasync of the segment, or
// by the journal. Called under commitMu.
func (l *Log) durableLocked(active *segment, pos int64, frames []byte) error {
	if l.jnl == nil {
		return l.syncActiveLocked(active)
	}
	if err := l.jnl.Write(l, active.path, pos, frames); err != nil {
		return l.fence(active, active.size, "journal", err)
	}
	l.fileDirty = true
	l.flushedPos = active.size
	l.flushed.Store(active.end)
	return nil
}

// forgetJournalLocked makes the active segment durable and then forgets
// the log's directory in the journal, so that no replay puts back what
// a truncation is about to cut (or writes into files after Close);
// nothing without a journal. Called under commitMu.
func (l *Log) forgetJournalLocked() error {
	if l.jnl == nil {
		return nil
	}
	if err := l.syncActiveLocked(l.activeSegment()); err != nil {
		return err
	}
	return l.jnl.Forget(l, l.dir)
}

// SyncJournaled fdatasyncs the active segment if it holds journaled
// frames, so that the journal may drop them (journal.Owner). A closed log
// answers ErrClosed: it forgot its directory when it closed, or could not
// make its files durable, and then the journal must keep its writes.
func (l *Log) SyncJournaled() error {
	l.commitMu.Lock()
	defer l.commitMu.Unlock()
	l.mu.RLock()
	a, closed := l.segs[len(l.segs)-1], l.closed
	l.mu.RUnlock()
	if closed {
		return ErrClosed
	}
	return l.syncActiveLocked(a)
}

// activeSegment is the segment appends go to.
func (l *Log) activeSegment() *segment {
	l.mu.RLock()
	defer l.mu.RUnlock()
	return l.segs[len(l.segs)-1]
}
