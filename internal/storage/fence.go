package storage

import (
	"errors"
	"fmt"
	"io/fs"
	"syscall"
)

// ErrFenced is wrapped by every commit refused because the log is fenced:
// an earlier fdatasync or read-back of its active segment failed, so that
// file's state is unknown (the kernel may have dropped the pages it could
// not write and reported the error only once — "fsyncgate"). The log
// acknowledges nothing more on that file; Recover resumes on a fresh one.
var ErrFenced = errors.New("partition log fenced after an I/O error")

// IOError is a failed file operation of the log.
type IOError struct {
	Op     string // what failed: "write", "fdatasync", "read back", "verify", "create segment", …
	Path   string // the file
	Err    error
	Fenced bool // the failure fenced the log
}

func (e *IOError) Error() string {
	msg := fmt.Sprintf("partition log %s %s: %v", e.Op, e.Path, e.Err)
	if e.Fenced {
		msg += "; the log is fenced: it acknowledges nothing more on this file until it is recovered"
	}
	return msg
}

func (e *IOError) Unwrap() []error {
	if e.Fenced {
		return []error{ErrFenced, e.Err}
	}
	return []error{e.Err}
}

// Reason says what failed without naming any path: the sentence a client
// may see.
func (e *IOError) Reason() string {
	err := e.Err
	for {
		var pe *fs.PathError
		if !errors.As(err, &pe) {
			break
		}
		err = pe.Err
	}
	var errno syscall.Errno
	if errors.As(err, &errno) {
		err = errno
	}
	r := e.Op + ": " + err.Error()
	if e.Fenced {
		r += " (the partition log is fenced until it is recovered)"
	}
	return r
}

// The sticky-failure rule. A failed write (ENOSPC, EIO) before any
// fdatasync is undone by truncating back to the verified end: nothing of it
// was acknowledged and the file is as it was, so the next commit may simply
// try again (a full disk heals once space is freed). A failed fdatasync, or
// a read-back that fails or differs from what was written, fences the log:
//
//   - commits are refused with ErrFenced, and readers keep reading the
//     verified records (those were fsynced and verified before);
//   - the unverified tail is cut at once (truncate to the verified end), so
//     neither a reader nor a later recovery can see bytes the kernel may
//     never write;
//   - Recover, called by the owner on next use, cuts the tail again if that
//     failed, fdatasyncs the cut (which also rewrites the partial last page
//     from memory) and continues in a fresh segment file: a file whose
//     fdatasync failed is never written again.
//
// A write whose undo (the truncate) also fails fences the same way.

// fence records a fencing failure of s's write at pos. Called under
// commitMu.
func (l *Log) fence(s *segment, pos int64, op string, err error) error {
	e := &IOError{Op: op, Path: s.path, Err: err, Fenced: true}
	l.failed = e
	l.fenced.Store(true)
	if l.flushedPos < pos || l.fileDirty {
		// Published lazy frames were not on disk yet: after a failed
		// fdatasync (or a read-back that failed: the file's state is
		// unknown) they may be gone (see Flush). They stay readable from memory
		// and are not cut (readers saw their offsets); the log stays fenced
		// until it is reopened.
		l.lostLazy = true
	}
	cutTail(s, pos)
	l.log.Error("partition log fenced: its active segment failed an I/O call after a write, so its state is unknown; commits are refused until it is recovered (the broker does that on next use)",
		"file", s.path, "op", op, "verified_bytes", pos, "err", err)
	if h := l.opts.Hooks.Fenced; h != nil {
		h()
	}
	return e
}

// cutTail truncates s to size if it is longer, and makes that durable.
func cutTail(s *segment, size int64) error {
	fi, err := s.f.Stat()
	if err != nil {
		return err
	}
	if fi.Size() > size {
		if err := s.f.Truncate(size); err != nil {
			return err
		}
	}
	return s.f.Datasync()
}

// Fenced reports whether the log refuses commits until Recover.
func (l *Log) Fenced() bool { return l.fenced.Load() }

// LostPublished reports whether a held log's fdatasync failed after its
// records were published: a commit's to ReadTo (followers may have copied
// records past End that are gone from the disk), or journaled ones
// (journal.go: gone from the segment, still in the journal). Recover
// refuses such a log; its replica role closes it and reopens it from what
// the disk and the journal hold, a leader in a new epoch (package hosted,
// Roles).
func (l *Log) LostPublished() bool {
	if !l.opts.Held || !l.fenced.Load() {
		// The common answer without commitMu, which a commit holds for
		// its fdatasync: the role manager asks every second.
		return false
	}
	l.commitMu.Lock()
	defer l.commitMu.Unlock()
	return l.lostLazy
}

// Recover lifts a fence: it drops whatever was not verified from the
// fenced segment, makes that durable, and continues in a fresh segment
// file named by the log's end. Every record below the end
// stays as it was: those were fsynced and verified before the fence. A
// failure leaves the log fenced (try again later). Recover on a log that is
// not fenced does nothing.
func (l *Log) Recover() error {
	l.commitMu.Lock()
	defer l.commitMu.Unlock()
	if l.failed == nil {
		return nil
	}
	l.mu.RLock()
	closed, active := l.closed, l.segs[len(l.segs)-1]
	l.mu.RUnlock()
	if closed {
		return ErrClosed
	}
	if l.mustReopen {
		return fmt.Errorf("%w: a truncation failed part way; the partition recovers when its log is reopened", l.failed)
	}
	if l.lostLazy {
		return fmt.Errorf("%w: lazily committed records may have been lost with a failed fdatasync; the partition recovers when the node restarts (its ingress WAL still holds them)", l.failed)
	}
	if err := cutTail(active, active.size); err != nil {
		return &IOError{Op: "cut the unverified tail", Path: active.path, Err: err, Fenced: true}
	}
	// A fenced segment holding no verified frame has nothing to protect:
	// emptied, it is as fresh as a new file (and a new one would need its
	// very name).
	if active.size > 0 {
		if _, err := l.roll(); err != nil {
			return err
		}
	}
	l.log.Warn("partition log recovered from its fence; commits resume in a fresh segment",
		"fenced_file", active.path, "fence", l.failed)
	l.failed = nil
	l.fenced.Store(false)
	return nil
}
