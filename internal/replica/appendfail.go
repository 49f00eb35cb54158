package replica

import (
	"errors"
	"time"

	"github.com/narad-io/narad/internal/storage"
)

// A follower whose log refuses what its leader sent (records that do not
// continue it: storage.ErrAppendMismatch, an offset out of step or a
// commit time below the log's newest; a fenced log; a failed write of
// the epoch mark) fetches the same records again after its backoff, and
// again, for as long as the cause lasts: the copy falls behind and out
// of the in-sync set. So that this is never silent, each refusal is
// counted (FollowerConfig.OnAppendFailure: the broker's metric) and
// logged: the first of a run, then at most once per AppendLogEvery with
// the number since the last line, and once when appends succeed again.

// AppendLogEvery is the most often a follower logs refused appends.
const AppendLogEvery = time.Minute

// The reasons of a refused append, as OnAppendFailure is told them (the
// metric's reason label: a short, fixed set).
const (
	AppendMismatch  = "mismatch"   // the records do not continue the log (storage.ErrAppendMismatch)
	AppendFenced    = "fenced"     // the log is fenced after an I/O error (storage.ErrFenced)
	AppendEpochMark = "epoch_mark" // replica.state's epoch mark could not be written
	AppendOther     = "other"      // any other error of the log's
)

// appendError is a fetch's answer the log refused.
type appendError struct {
	reason  string
	records int // in the answer
	err     error
}

func (e *appendError) Error() string { return e.err.Error() }
func (e *appendError) Unwrap() error { return e.err }

// refusedAppend classifies the log's refusal of records.
func refusedAppend(err error, records int) error {
	reason := AppendOther
	switch {
	case errors.Is(err, storage.ErrAppendMismatch):
		reason = AppendMismatch
	case errors.Is(err, storage.ErrFenced):
		reason = AppendFenced
	}
	return &appendError{reason: reason, records: records, err: err}
}

// appendRun is what the follower remembers of its refused appends
// (Run's goroutine only).
type appendRun struct {
	loggedAt time.Time // of the last line about a failure (zero: none)
	unlogged int       // failures since that line
	open     bool      // a failure was logged and no success since
}

// noteAppend counts and logs the outcome of one fetch applied from req's
// offset: a refused append (err an *appendError), or records appended
// (the log's end moved past req.Offset). Anything else (a failed fetch,
// an answer dropped as late) says nothing about appending.
func (f *Follower) noteAppend(leader string, req FetchRequest, err error) {
	run := &f.appends
	var ae *appendError
	if !errors.As(err, &ae) {
		if err == nil && run.open && f.log.End() > req.Offset {
			f.logger.Info("follower appends again", "topic", req.Topic, "partition", req.Partition,
				"epoch", req.Epoch, "leader", leader, "end", f.log.End(), "unlogged_failures", run.unlogged)
			run.open, run.unlogged = false, 0
		}
		return
	}
	if f.cfg.OnAppendFailure != nil {
		f.cfg.OnAppendFailure(ae.reason)
	}
	run.unlogged++
	now := f.clk.Now()
	if !run.loggedAt.IsZero() && now.Sub(run.loggedAt) < AppendLogEvery {
		return
	}
	f.logger.Warn("follower cannot append what its leader sent: it fetches the records again after a backoff, "+
		"and this copy falls behind until the cause is gone (docs/replication.md, \"Seeing it\")",
		"topic", req.Topic, "partition", req.Partition, "epoch", req.Epoch, "leader", leader,
		"offset", req.Offset, "records", ae.records, "reason", ae.reason,
		"failures_since_last_line", run.unlogged, "err", ae.err)
	run.loggedAt, run.unlogged, run.open = now, 0, true
}
