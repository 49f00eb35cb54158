package replica

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"sync"
	"time"

	"github.com/narad-io/narad/internal/clock"
	"github.com/narad-io/narad/internal/storage"
)

// Defaults of the follower's retry pacing.
const (
	DefaultMinBackoff = 50 * time.Millisecond
	DefaultMaxBackoff = 2 * time.Second
)

// FollowerConfig is what a Follower needs. Zero durations and sizes take
// the defaults; Clock nil is the system clock.
type FollowerConfig struct {
	Self string
	// DiskID is this node's data directory's disk id, sent with every
	// fetch (FetchRequest.DiskID).
	DiskID    string
	View      View
	Log       Log
	Transport Transport
	Clock     clock.Clock
	// Wait is the long-poll a fetch asks of the leader.
	Wait     time.Duration
	MaxBytes int
	// MinBackoff and MaxBackoff pace retries after a failed fetch
	// (doubling, on the clock).
	MinBackoff, MaxBackoff time.Duration
	// CheckpointEvery: how often the committed point is written to
	// replica.state (and on Close).
	CheckpointEvery time.Duration
	// OnFrontier, if set, is handed the leader's consumer frontier of
	// each answer that carries one, clamped to the local end.
	OnFrontier func(uint64)
	// OnState, if set, is handed the leader's SideState of each answer
	// that carries one (only when it changed since the last one applied),
	// every position clamped to the visible high watermark here: a copied
	// cursor or count never points past what this replica has committed.
	// Its error (the state was not written) leaves the version unechoed,
	// so the next answer carries the state again; the fetch itself goes
	// on.
	OnState func(SideState) error
	// OnAppendFailure, if set, is told of each fetched answer the log
	// refused, with the reason (appendfail.go: AppendMismatch and the
	// others); the broker counts them in a metric.
	OnAppendFailure func(reason string)
	// Logger takes the follower's own lines (refused appends); nil
	// discards them.
	Logger *slog.Logger
}

// Follower copies one partition from its leader: the fetch loop, the cut
// of a divergent tail on an epoch change, the epoch mark before the first
// record of an epoch, and the release of what the leader says is
// committed. Safe for concurrent use (Update from the metastore watcher,
// Run in its own goroutine).
type Follower struct {
	cfg    FollowerConfig
	clk    clock.Clock
	log    Log
	logger *slog.Logger
	// appends is the run of refused appends (Run's goroutine only).
	appends appendRun

	mu             sync.Mutex
	view           View
	viewCh         chan struct{} // closed and replaced by Update
	checkpointed   uint64
	checkpointedAt time.Time
	// The SideState version applied last, and the epoch it came in: a
	// new epoch's leader has versions of its own, so the echo restarts.
	stateEpoch, stateVersion uint64
	// failing is the leader this follower's fetches have not reached, and
	// since when (reach.go); zero while they are answered.
	failing Unreachable
}

// errLeading says the view makes this node the leader: Run returns nil.
var errLeading = errors.New("replica: this node leads")

// NewFollower checks cfg and builds a Follower.
func NewFollower(cfg FollowerConfig) (*Follower, error) {
	if cfg.Wait <= 0 {
		cfg.Wait = DefaultMaxWait
	}
	if cfg.MaxBytes <= 0 {
		cfg.MaxBytes = DefaultMaxBytes
	}
	if cfg.MinBackoff <= 0 {
		cfg.MinBackoff = DefaultMinBackoff
	}
	if cfg.MaxBackoff < cfg.MinBackoff {
		cfg.MaxBackoff = max(DefaultMaxBackoff, cfg.MinBackoff)
	}
	if cfg.CheckpointEvery <= 0 {
		cfg.CheckpointEvery = DefaultCheckpointEvery
	}
	cfg.Clock = clock.Or(cfg.Clock)
	if cfg.Log == nil || cfg.Transport == nil || cfg.Self == "" {
		return nil, fmt.Errorf("replica: follower of %s/%d needs a node id, a log and a transport", cfg.View.Topic, cfg.View.Partition)
	}
	f := &Follower{cfg: cfg, clk: cfg.Clock, log: cfg.Log, logger: cfg.Logger, view: cloneView(cfg.View), viewCh: make(chan struct{})}
	if f.logger == nil {
		f.logger = slog.New(slog.DiscardHandler)
	}
	f.checkpointed = f.log.ReplicaState().Committed
	f.checkpointedAt = f.clk.Now()
	return f, nil
}

// Update gives the Follower its metastore replica's latest view; a later
// epoch makes the next fetch cut and go to the new leader.
func (f *Follower) Update(v View) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if v.Epoch < f.view.Epoch {
		return // a late delivery of an older view
	}
	f.view = cloneView(v)
	close(f.viewCh)
	f.viewCh = make(chan struct{})
}

// Run fetches from the leader until the view says this node leads (it
// returns nil: start a Leader only after Run returned, so no fetched
// record lands after its epoch start was taken), until this node is no
// longer a replica (ErrNotReplica), or until ctx ends (ctx's error).
func (f *Follower) Run(ctx context.Context) error {
	backoff := time.Duration(0)
	for {
		leader, req, wait, err := f.prepare()
		switch {
		case errors.Is(err, errLeading):
			return nil
		case errors.Is(err, ErrNotReplica):
			return err
		case wait != nil:
			select {
			case <-wait:
			case <-ctx.Done():
				return ctx.Err()
			}
			continue
		case err == nil:
			var resp FetchResponse
			sent := f.clk.Now()
			resp, err = f.cfg.Transport.Fetch(ctx, leader, req)
			if ctx.Err() == nil {
				f.noteReach(leader, req.Epoch, sent, err)
			}
			err = f.apply(req, resp, err)
			if ctx.Err() == nil {
				f.noteAppend(leader, req, err)
			}
		}
		if ctx.Err() != nil {
			return ctx.Err()
		}
		if err == nil {
			backoff = 0
			continue
		}
		backoff = min(max(2*backoff, f.cfg.MinBackoff), f.cfg.MaxBackoff)
		f.mu.Lock()
		changed := f.viewCh
		f.mu.Unlock()
		t := f.clk.NewTimer(backoff)
		select {
		case <-t.C():
		case <-changed: // a new view may be what the refusal waited for
		case <-ctx.Done():
		}
		t.Stop()
	}
}

// prepare is the next fetch: to whom and from where, after cutting the
// log if the epoch moved past the last one it wrote in. wait is non-nil
// when there is nothing to fetch until the view changes: no leader, the
// leader's epoch start not yet recorded (the cut needs it), or a view
// behind this replica's own epoch.
func (f *Follower) prepare() (leader string, req FetchRequest, wait <-chan struct{}, err error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	v := f.view
	switch {
	case v.Leader == f.cfg.Self:
		return "", req, nil, errLeading
	case !slices.Contains(v.Replicas, f.cfg.Self):
		return "", req, nil, ErrNotReplica
	}
	st := f.log.ReplicaState()
	if _, ok := startOf(v.EpochStarts, v.Epoch); !ok || v.Leader == "" || st.LastEpoch > v.Epoch {
		return "", req, f.viewCh, nil
	}
	if st.LastEpoch < v.Epoch {
		if err := cutForEpoch(f.log, st, v); err != nil {
			return "", req, nil, err
		}
	}
	req = FetchRequest{Topic: v.Topic, Incarnation: v.Incarnation, Partition: v.Partition, Epoch: v.Epoch,
		Follower: f.cfg.Self, DiskID: f.cfg.DiskID, Offset: f.log.End(), MaxBytes: f.cfg.MaxBytes, Wait: f.cfg.Wait, Frames: true}
	if f.stateEpoch == v.Epoch {
		req.StateVersion = f.stateVersion
	}
	return v.Leader, req, nil, nil
}

// apply takes a fetch's answer: an answer to a request of another epoch
// or from another end (late) is dropped; records are appended after the
// epoch mark; the committed point is released up to the local end.
func (f *Follower) apply(req FetchRequest, resp FetchResponse, err error) error {
	if err != nil {
		return err
	}
	f.mu.Lock()
	if f.view.Epoch != req.Epoch || resp.Epoch != req.Epoch || f.log.End() != req.Offset {
		f.mu.Unlock()
		return nil
	}
	for i, r := range resp.Records {
		if r.Offset != req.Offset+uint64(i) {
			f.mu.Unlock()
			return fmt.Errorf("replica: %s/%d: leader sent offset %d at position %d of a fetch from %d", req.Topic, req.Partition, r.Offset, i, req.Offset)
		}
	}
	if len(resp.Records) > 0 || len(resp.Frames) > 0 {
		// How many records the answer holds, for the log line of a
		// refusal only: counting frames' records walks their headers.
		n := func() int { return len(resp.Records) + storage.FrameRecords(resp.Frames) }
		if st := f.log.ReplicaState(); st.LastEpoch < req.Epoch {
			st.LastEpoch = req.Epoch
			if err := f.log.SaveReplicaState(st); err != nil {
				f.mu.Unlock()
				return &appendError{reason: AppendEpochMark, records: n(),
					err: fmt.Errorf("replica: %s/%d: writing epoch %d: %w", req.Topic, req.Partition, req.Epoch, err)}
			}
		}
		var err error
		if len(resp.Frames) > 0 {
			_, err = f.log.AppendFrames(resp.Frames)
		} else {
			err = f.log.Append(resp.Records)
		}
		if err != nil {
			f.mu.Unlock()
			return refusedAppend(err, n())
		}
	}
	end := f.log.End()
	if hw := min(resp.Committed, end); hw > f.log.HWM() {
		if err := f.log.Release(hw); err != nil {
			f.mu.Unlock()
			return err
		}
	}
	hwm := f.log.HWM()
	f.mu.Unlock()
	if f.cfg.OnFrontier != nil && resp.Frontier > 0 {
		f.cfg.OnFrontier(min(resp.Frontier, end))
	}
	if resp.StateVersion != 0 {
		f.applyState(req.Epoch, hwm, resp)
	}
	return f.checkpoint(false)
}

// applyState hands the leader's SideState to OnState, clamped to hwm
// (the visible high watermark here), and echoes its version once it was
// taken. A count of a record past hwm is dropped; a cursor past it is
// held at hwm (it copies those records again after a takeover here:
// duplicates in the child, never a gap).
func (f *Follower) applyState(epoch, hwm uint64, resp FetchResponse) {
	if f.cfg.OnState != nil {
		st := SideState{Version: resp.StateVersion, Counts: make([]storage.CountEntry, 0, len(resp.Counts)),
			Cursors: make([]CursorPosition, len(resp.Cursors))}
		for _, c := range resp.Counts {
			if c.Offset < hwm {
				st.Counts = append(st.Counts, c)
			}
		}
		for i, c := range resp.Cursors {
			c.NextOffset = min(c.NextOffset, hwm)
			st.Cursors[i] = c
		}
		if err := f.cfg.OnState(st); err != nil {
			return
		}
	}
	f.mu.Lock()
	if f.view.Epoch == epoch {
		f.stateEpoch, f.stateVersion = epoch, resp.StateVersion
	}
	f.mu.Unlock()
}

// Close checkpoints the committed point (call it after Run returned).
func (f *Follower) Close() error { return f.checkpoint(true) }

func (f *Follower) checkpoint(force bool) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	now := f.clk.Now()
	hw := f.log.HWM()
	if hw <= f.checkpointed || (!force && now.Sub(f.checkpointedAt) < f.cfg.CheckpointEvery) {
		return nil
	}
	st := f.log.ReplicaState()
	if st.Committed < hw {
		st.Committed = hw
		if err := f.log.SaveReplicaState(st); err != nil {
			return err
		}
	}
	f.checkpointed, f.checkpointedAt = hw, now
	return nil
}
