package hosted

import (
	"errors"
	"path/filepath"
	"slices"
	"sync"
	"time"

	"github.com/narad-io/narad/internal/lease"
	"github.com/narad-io/narad/internal/replica"
	"github.com/narad-io/narad/internal/storage"
)

// The side state of a replicated partition follows its leader
// (docs/replication.md): the delivery counts of its
// unsettled records (delivery.counts, package hosted) and the cursor files of
// the fan-out links that copy it into children. The leader snapshots them
// at most once per CountsEvery (the counts' own persistence cadence; the
// cursor files as its cursors last wrote them) and the engine sends a
// snapshot to a follower only when its version differs from the one the
// follower echoes (replica.SideState). The follower writes the counts
// file and each cursor file beside its copy of the log, never past its
// own visible high watermark, so that when it becomes the leader its
// queue loads the copied counts (dead-letter counting goes on: a record
// at max_deliveries-1 is dead-lettered after one more delivery) and its
// fan-out cursors resume from the copied positions (same attach epoch: no
// anchor), copying again at most what the old leader advanced in the
// last interval: duplicates in the child, never a gap, never everything
// from the attach point.

// CursorCopies reads and writes the fan-out cursor files of a parent
// partition for its followers (*fanout.Engine; the server wires it, as the
// broker may not import the fan-out engine).
type CursorCopies interface {
	// CursorCopies lists the cursor files of parent/partition here.
	CursorCopies(parent string, partition int) ([]replica.CursorPosition, error)
	// WriteCursorCopy writes a copy of a leader's cursor file here; it
	// writes nothing (false, nil) for a child not attached at that epoch,
	// a file already at or past the position, or a file a cursor runs on
	// here; an error is a write that failed.
	WriteCursorCopy(parent string, partition int, c replica.CursorPosition) (bool, error)
}

// cursorFiles are the fan-out engine's cursor files, or nil.
func (r *Roles) cursorFiles() CursorCopies { return r.cfg.CursorCopies }

// sideState is one hosted replica's side-state bookkeeping: on a leader
// the last snapshot and what it was taken from, on a follower the counts
// it last wrote.
type sideState struct {
	mu sync.Mutex
	at time.Time
	st replica.SideState
	// The counts' source of the snapshot: a loaded queue's table at a
	// counts version, or the counts file (table nil, fromFile).
	table         *lease.Table
	countsVersion uint64
	fromFile      bool
	// Follower: the counts last written to delivery.counts here.
	written      []storage.CountEntry
	countsLanded bool
}

// leaderSideState is the snapshot a leader's fetch answers carry, taken
// again when CountsEvery has passed since the last one; its version moves
// only when the counts or the cursor positions changed.
func (r *Roles) leaderSideState(h *Role) replica.SideState {
	s := &h.side
	s.mu.Lock()
	defer s.mu.Unlock()
	now := r.cfg.Now()
	if s.st.Version != 0 && now.Sub(s.at) < CountsEvery {
		return s.st
	}
	s.at = now
	counts, changed := r.snapshotCounts(h, s)
	cursors := s.st.Cursors
	if cc := r.cursorFiles(); cc != nil {
		if cs, err := cc.CursorCopies(h.key.Topic, h.key.Partition); err == nil && !slices.Equal(cs, cursors) {
			cursors, changed = cs, true
		}
	}
	if !changed && s.st.Version != 0 {
		return s.st
	}
	v := s.st.Version + 1
	if s.st.Version == 0 {
		// From the clock: a later leadership here (a restart in the same
		// epoch) never reuses a version a follower still echoes.
		v = max(uint64(now.UnixNano()), 1)
	}
	s.st = replica.SideState{Version: v, Counts: counts, Cursors: cursors}
	return s.st
}

// snapshotCounts takes the delivery counts from the loaded queue's table,
// or from the counts file while no queue is loaded, and says whether they
// changed since the last snapshot.
func (r *Roles) snapshotCounts(h *Role, s *sideState) ([]storage.CountEntry, bool) {
	if q := r.parts.PeekQueue(h.key.Topic, h.key.Partition); q != nil {
		if q.Table == s.table && q.Table.CountsVersion() == s.countsVersion {
			return s.st.Counts, false
		}
		es, version := q.CountEntries()
		s.table, s.countsVersion, s.fromFile = q.Table, version, false
		return es, !slices.Equal(es, s.st.Counts)
	}
	if s.table == nil && s.fromFile {
		return s.st.Counts, false
	}
	dir, err := r.parts.Dir(h.key.Topic, h.key.Partition)
	if err != nil {
		return s.st.Counts, false
	}
	es, _, err := storage.ReadDeliveryCountsFS(r.parts.FS(), filepath.Join(dir, storage.DeliveryCountsFile))
	if err != nil && !errors.Is(err, storage.ErrBadCounts) {
		return s.st.Counts, false // a failed read: nothing learnt, try again next time (package hosted)
	}
	if err != nil {
		es = nil // damaged here: the queue would start from no counts too (package hosted)
	}
	s.table, s.fromFile = nil, true
	return es, !slices.Equal(es, s.st.Counts)
}

// applySideState writes a leader's side state beside this follower's copy
// of the log: the counts file when the counts changed, and each cursor
// file (fan-out writes only current links, never back), nothing past the
// visible high watermark here. An error (the state did not land whole)
// makes the engine leave the version unechoed, so the next answer carries
// it again.
func (r *Roles) applySideState(h *Role, st replica.SideState) error {
	s := &h.side
	s.mu.Lock()
	defer s.mu.Unlock()
	hwm := h.log.HWM()
	counts := make([]storage.CountEntry, 0, len(st.Counts))
	for _, c := range st.Counts {
		if c.Offset < hwm {
			counts = append(counts, c)
		}
	}
	var first error
	if !s.countsLanded || !slices.Equal(counts, s.written) {
		dir, err := r.parts.Dir(h.key.Topic, h.key.Partition)
		if err == nil {
			err = storage.WriteDeliveryCountsFS(r.parts.FS(), filepath.Join(dir, storage.DeliveryCountsFile), counts)
		}
		if err != nil {
			r.m.Errors.WithLabelValues("broker", "counts_copy").Inc()
			first = err
		} else {
			s.written, s.countsLanded = counts, true
		}
	}
	if cc := r.cursorFiles(); cc != nil {
		for _, c := range st.Cursors {
			c.NextOffset = min(c.NextOffset, hwm)
			if _, err := cc.WriteCursorCopy(h.key.Topic, h.key.Partition, c); err != nil {
				r.m.Errors.WithLabelValues("broker", "cursor_copy").Inc()
				if first == nil {
					first = err
				}
			}
		}
	}
	if first != nil {
		r.cfg.Logger.Warn("leader's delivery counts or fan-out cursors not copied here; the next fetch answer carries them again",
			"topic", h.key.Topic, "partition", h.key.Partition, "err", first)
	}
	return first
}
