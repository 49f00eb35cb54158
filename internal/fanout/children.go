package fanout

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"sync"
	"time"

	"github.com/narad-io/narad/internal/meta"
	"github.com/narad-io/narad/internal/refusal"
	"github.com/narad-io/narad/internal/topic"
)

// ChildView is one entry of GET /v1/topics/{parent}/children.
type ChildView struct {
	Name            string   `json:"name"`
	DelayMs         int64    `json:"delay_ms"`
	AttachEpoch     string   `json:"attach_epoch"`
	LagMessages     uint64   `json:"lag_messages"`
	DueLagSeconds   *float64 `json:"due_lag_seconds,omitempty"`
	LagComplete     bool     `json:"lag_complete"`
	DroppedMessages uint64   `json:"dropped_messages"`

	// Filtered links (rule: filtered links): the filter, canonical, and
	// its scope; Filtered counts the records this node's cursors of the
	// link stepped over since the node started (so 0 for partitions
	// another node owns, and after a restart).
	Filter      json.RawMessage `json:"filter,omitempty"`
	FilterScope string          `json:"filter_scope,omitempty"`
	Filtered    uint64          `json:"filtered"`

	// Enveloped links (rule: enveloped links): how the link wraps each
	// copy; absent when it copies as published.
	Envelope *meta.LinkEnvelope `json:"envelope,omitempty"`

	// Remote children (rules: refusal stops the link, acked time): the
	// target without credentials, the worst state of the link's cursors and
	// why (the reason of the partition in that state, which names the
	// refused record's parent offset when it is "rejected"), and per parent
	// partition the recovery point: the target holds everything committed
	// before it.
	Remote        *meta.RemoteTarget `json:"remote,omitempty"`
	State         string             `json:"state,omitempty"`
	StateReason   string             `json:"state_reason,omitempty"`
	RecoveryPoint []RecoveryPoint    `json:"recovery_point,omitempty"`
}

// RecoveryPoint is one parent partition's part of a remote child's
// recovery point; CommittedAtMs is 0 until the target acknowledged a
// record since this node started the cursor. State is the partition's
// link state once its cursor sent anything; RejectedOffset is the parent
// offset the link stopped at when the target rejects that record.
type RecoveryPoint struct {
	Partition      int     `json:"partition"`
	NextOffset     uint64  `json:"next_offset"`
	CommittedAtMs  int64   `json:"committed_at_ms"`
	State          string  `json:"state,omitempty"`
	RejectedOffset *uint64 `json:"rejected_offset,omitempty"`
}

// ChildrenView is the children listing.
type ChildrenView struct {
	Parent   string      `json:"parent"`
	Children []ChildView `json:"children"`
}

// Children lists a parent's children with their lag. It never opens a
// partition log (rule: listing opens no log): open logs are read through
// Peek, closed ones from their directory; a closed partition whose hwm file
// has no boundary is left out and its child's lag_complete reads false.
func (e *Engine) Children(parentName string) (ChildrenView, error) {
	if err := topic.ValidateName(parentName); err != nil {
		return ChildrenView{}, err
	}
	parent, ok := e.meta.Topic(parentName)
	if !ok {
		return ChildrenView{}, refusal.New(refusal.ErrTopicNotFound, 0, "topic %q does not exist", parentName)
	}
	out := ChildrenView{Parent: parentName, Children: []ChildView{}}
	remote := e.remoteReports(parent)
	for _, name := range parent.Children {
		child, ok := e.meta.Topic(name)
		if !ok || child.Parent != parentName {
			continue
		}
		out.Children = append(out.Children, e.childView(parent, child, remote))
	}
	return out, nil
}

// remoteReports fetches the reports of the parent's partitions owned
// elsewhere, from all their owners concurrently (rule: listing opens no
// log).
func (e *Engine) remoteReports(parent meta.Topic) map[int]topic.PartitionReport {
	byOwner := map[string][]int{}
	for p := 0; p < parent.Partitions; p++ {
		if owner, _ := e.meta.Owner(parent.Name, p); owner != e.self && owner != "" {
			byOwner[owner] = append(byOwner[owner], p)
		}
	}
	out := map[int]topic.PartitionReport{}
	var mu sync.Mutex
	var wg sync.WaitGroup
	sem := make(chan struct{}, 16)
	for owner, parts := range byOwner {
		wg.Add(1)
		sem <- struct{}{}
		go func(owner string, parts []int) {
			defer func() { <-sem; wg.Done() }()
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			defer cancel()
			reps, err := e.stats.RemoteStats(ctx, owner, parent.Name, parts)
			if err != nil {
				return
			}
			mu.Lock()
			for _, r := range reps {
				out[r.Partition] = r
			}
			mu.Unlock()
		}(owner, parts)
	}
	wg.Wait()
	return out
}

// remoteCursor is the child's cursor entry of this epoch on a remote
// partition (zero if it has none yet).
func remoteCursor(r topic.PartitionReport, child meta.Topic) topic.CursorPosition {
	for _, c := range r.Cursors {
		if c.Child == child.Name && c.Epoch == child.AttachEpoch {
			return c
		}
	}
	return topic.CursorPosition{}
}

// remotePosition is the child's cursor on a remote partition: the cursor
// of this epoch, else the attach point it would start from.
func remotePosition(r topic.PartitionReport, child meta.Topic) (uint64, bool) {
	for _, c := range r.Cursors {
		if c.Child == child.Name && c.Epoch == child.AttachEpoch {
			return c.NextOffset, true
		}
	}
	switch offs := child.AttachOffsets; {
	case r.Partition < len(offs):
		return offs[r.Partition], true
	case len(offs) > 0:
		return 0, true
	}
	return 0, false
}

// CursorPositions reports the cursors of every child on a parent partition
// this node owns (for a Stats call): never opening the log.
func (e *Engine) CursorPositions(parentName string, p int) []topic.CursorPosition {
	parent, ok := e.meta.Topic(parentName)
	if !ok {
		return nil
	}
	var out []topic.CursorPosition
	for _, name := range parent.Children {
		child, ok := e.meta.Topic(name)
		if !ok || child.Parent != parentName {
			continue
		}
		e.mu.Lock()
		c, running := e.running[cursorKey{parentName, name, p}]
		e.mu.Unlock()
		if running && c.started.Load() && c.link.epoch == child.AttachEpoch {
			reason, rejected := linkDetailOf(c)
			out = append(out, topic.CursorPosition{Child: name, Epoch: child.AttachEpoch, NextOffset: c.pos.Load(),
				State: linkState(c), AckedAtMs: c.ackedAt.Load(), StateReason: reason, RejectedOffset: rejected})
			continue
		}
		dir, err := e.logs.Dir(parentName, p)
		if err != nil {
			continue
		}
		if st, exists, err := readCursorFile(e.cfg.FS, filepath.Join(dir, CursorFileName(name))); err == nil && exists {
			out = append(out, topic.CursorPosition{Child: name, Epoch: st.Epoch, NextOffset: st.NextOffset})
		}
	}
	return out
}

func (e *Engine) childView(parent, child meta.Topic, remote map[int]topic.PartitionReport) ChildView {
	v := ChildView{Name: child.Name, DelayMs: child.FanoutDelayMs, AttachEpoch: child.AttachEpoch, LagComplete: true,
		DroppedMessages: e.droppedCounter(parent.Name, child.Name).Load(), Filtered: e.filteredCounter(parent.Name, child.Name).Load()}
	v.Filter, v.FilterScope = shownFilter(child)
	v.Envelope = child.FanoutEnvelope
	if child.Remote != nil {
		v.Remote, v.State, v.RecoveryPoint = child.Remote.Public(), StateRunning, []RecoveryPoint{}
	}
	// notePoint notes a remote child's partition: its recovery point,
	// state and the state's reason.
	notePoint := func(p int, pos uint64, cp topic.CursorPosition) {
		if child.Remote == nil {
			return
		}
		v.RecoveryPoint = append(v.RecoveryPoint, RecoveryPoint{Partition: p, NextOffset: pos, CommittedAtMs: cp.AckedAtMs,
			State: cp.State, RejectedOffset: cp.RejectedOffset})
		if stateRank(cp.State) > stateRank(v.State) {
			v.State, v.StateReason = cp.State, ""
			if cp.StateReason != "" {
				v.StateReason = fmt.Sprintf("partition %d: %s", p, cp.StateReason)
			}
		}
	}
	var dueLag float64
	for p := 0; p < parent.Partitions; p++ {
		if owner, _ := e.meta.Owner(parent.Name, p); owner != e.self {
			r, ok := remote[p]
			if !ok || !r.Available || !r.Stats.Exact {
				v.LagComplete = false
				continue
			}
			pos, found := remotePosition(r, child)
			if !found {
				v.LagComplete = false
				continue
			}
			notePoint(p, pos, remoteCursor(r, child))
			v.LagMessages += r.Stats.HighWatermark - min(r.Stats.HighWatermark, pos)
			continue
		}
		pos, ok := e.position(parent.Name, child, p)
		if !ok {
			v.LagComplete = false
			continue
		}
		e.mu.Lock()
		c, running := e.running[cursorKey{parent.Name, child.Name, p}]
		e.mu.Unlock()
		if running {
			reason, rejected := linkDetailOf(c)
			notePoint(p, pos, topic.CursorPosition{State: linkState(c), AckedAtMs: c.ackedAt.Load(), StateReason: reason, RejectedOffset: rejected})
		} else {
			notePoint(p, pos, topic.CursorPosition{})
		}
		st, err := e.logs.Describe(parent.Name, p)
		if err != nil || !st.Exact {
			v.LagComplete = false
			continue
		}
		v.LagMessages += st.HighWatermark - min(st.HighWatermark, pos)
		e.mu.Lock()
		if c, running := e.running[cursorKey{parent.Name, child.Name, p}]; running {
			dueLag = max(dueLag, float64(c.dueLagMs.Load())/1000)
		}
		e.mu.Unlock()
	}
	if child.FanoutDelayMs > 0 {
		v.DueLagSeconds = &dueLag
	}
	return v
}

// position is where the link's cursor on partition p stands: the running
// cursor's memory, else its file (this epoch only), else the attach point
// it would start from. A file that cannot be read (an I/O error, not a
// corrupt record) says nothing: the position is unknown, as it is to the
// cursor, which does not start from anywhere else either.
func (e *Engine) position(parent string, child meta.Topic, p int) (uint64, bool) {
	e.mu.Lock()
	c, running := e.running[cursorKey{parent, child.Name, p}]
	e.mu.Unlock()
	if running && c.started.Load() && c.link.epoch == child.AttachEpoch {
		return c.pos.Load(), true
	}
	dir, err := e.logs.Dir(parent, p)
	if err != nil {
		return 0, false
	}
	st, exists, err := readCursorFile(e.cfg.FS, filepath.Join(dir, CursorFileName(child.Name)))
	switch {
	case err != nil && !errors.Is(err, ErrCursorCorrupt):
		return 0, false
	case err == nil && exists && st.Epoch == child.AttachEpoch:
		return st.NextOffset, true
	}
	switch offs := child.AttachOffsets; {
	case p < len(offs):
		return offs[p], true
	case len(offs) > 0:
		return 0, true
	}
	return 0, false
}
