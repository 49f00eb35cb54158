package hosted

import (
	"errors"
	"fmt"
	"io/fs"
	"syscall"
	"time"

	"github.com/narad-io/narad/internal/refusal"
	"github.com/narad-io/narad/internal/storage"
)

// Partition health: what the Set does when a partition log cannot be
// opened or has fenced itself, and how that reaches clients (503 with a
// reason that names no server path), the topic describe and the log.
//
//   - A log that cannot be opened — mid-segment damage (*storage.
//     CorruptError), a full or failing disk — answers 503 on every use. The
//     reason is kept for the describe, the open is retried at most once per
//     retry interval (opening scans the active segment), and it comes back
//     on its own once the cause is gone: the disk has space again, or the
//     node was restarted with storage.skip_corrupt.
//   - A fenced log (an fdatasync or read-back failed) keeps serving reads;
//     its commits answer 503, and the next use after the retry interval
//     runs its Recover, so a full disk heals without a restart. A
//     replicated leader's log whose sync failed after followers could copy
//     the records (storage.Log.LostPublished) refuses Recover; its role
//     reopens it instead (Roles.reconcileReplicas).
const (
	openRetry    = time.Second
	corruptRetry = 5 * time.Second
	recoverRetry = time.Second
)

// openFailure is a partition whose last open failed.
type openFailure struct {
	err     error // the refusal answered while it lasts
	reason  string
	retryAt time.Time
}

// failedOpen answers a use of a partition whose recent open failed, without
// trying again before its retry time. Called under s.mu.
func (s *Set) failedOpen(k Key) error {
	if p, ok := s.parts[k]; ok && p.failure != nil && s.now().Before(p.failure.retryAt) {
		return p.failure.err
	}
	return nil
}

// openFailed records and reports a failed open. Called under s.mu.
func (s *Set) openFailed(k Key, dir string, err error) error {
	retry := openRetry
	var reason string
	var ce *storage.CorruptError
	if errors.As(err, &ce) {
		retry = corruptRetry
		reason = fmt.Sprintf("damaged: an unreadable frame holds offsets %d..%d of the active segment and valid records follow it, so nothing was truncated; "+
			"to serve the partition again, restart the node with NARAD_STORAGE_SKIP_CORRUPT=true (storage.skip_corrupt), which skips the damaged records "+
			"(recorded loss, counted in narad_consumer_corrupt_skipped_total)", ce.From, ce.ResumeOffset-1)
		s.hook.StorageError("corrupt")
	} else {
		reason = "cannot be opened: " + PublicCause(err)
		s.hook.StorageError("open")
	}
	p := s.entry(k)
	if p.failure == nil {
		s.log.Error("partition log cannot be opened; it answers 503 until this is fixed",
			"topic", k.Topic, "partition", k.Partition, "dir", dir, "err", err)
	}
	e := refusal.New(refusal.ErrUnavailable, retry, "partition %d of %q is %s", k.Partition, k.Topic, reason)
	p.failure = &openFailure{err: e, reason: reason, retryAt: s.now().Add(retry)}
	return e
}

// recoverFenced runs a fenced log's Recover, at most once per retry
// interval, outside the Set's lock (it writes and fsyncs).
func (s *Set) recoverFenced(k Key, ol *openLog) {
	now := s.now().UnixNano()
	next := ol.recoverAt.Load()
	if now < next || !ol.recoverAt.CompareAndSwap(next, now+int64(recoverRetry)) {
		return
	}
	if err := ol.log.Recover(); err != nil {
		s.hook.StorageError("fence_recover")
		s.log.Warn("fenced partition log not recovered yet; retrying on next use",
			"topic", k.Topic, "partition", k.Partition, "err", err)
	}
}

// Unavailable says why a partition cannot serve now ("" when it can): its
// open failed, or its log is fenced.
func (s *Set) Unavailable(name string, partition int) string {
	s.mu.RLock()
	defer s.mu.RUnlock()
	p, ok := s.parts[Key{name, partition}]
	switch {
	case !ok:
		return ""
	case p.log != nil:
		if p.log.log.Fenced() {
			return "fenced after an I/O error on its active segment: it serves reads, refuses commits, and recovers on next use"
		}
		return ""
	case p.failure != nil:
		return p.failure.reason
	}
	return ""
}

// StorageErr maps a partition log's failure to commit or to read (act:
// "commit", "be read") onto a temporary refusal whose message names no
// server path: ErrFenced for a fenced log, ErrDiskFull for a write undone
// on a full disk, a plain 503 for another undone write or a failed read.
func StorageErr(name string, p int, act string, err error) error {
	var ioe *storage.IOError
	if !errors.As(err, &ioe) {
		return err
	}
	const format = "partition %d of %q cannot %s now: %s"
	switch {
	case errors.Is(err, storage.ErrFenced):
		return refusal.New(refusal.ErrFenced, time.Second, format, p, name, act, ioe.Reason())
	case errors.Is(err, syscall.ENOSPC):
		return refusal.New(refusal.ErrDiskFull, time.Second, format, p, name, act, ioe.Reason())
	}
	return refusal.New(refusal.ErrUnavailable, time.Second, format, p, name, act, ioe.Reason())
}

// PublicCause is the part of a file error a client may see: the errno's
// text, never the path that *fs.PathError and storage wrap around it.
func PublicCause(err error) string {
	var ioe *storage.IOError
	if errors.As(err, &ioe) {
		return ioe.Reason()
	}
	var errno syscall.Errno
	if errors.As(err, &errno) {
		return errno.Error()
	}
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Op + ": " + pe.Err.Error()
	}
	return "unexpected error (the node's log has the details)"
}
