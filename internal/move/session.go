package move

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/narad-io/narad/internal/clock"
	"github.com/narad-io/narad/internal/meta"
	"github.com/narad-io/narad/internal/refusal"
	"github.com/narad-io/narad/internal/storage"
)

// Session tuning.
const (
	lagBytes  = 1 << 20          // catch-up ends when a pass copies less
	maxPasses = 20               // or after this many passes
	maxTail   = 64 << 20         // never freeze with more than this left to copy
	freezeTTL = 30 * time.Second // the freeze lifts by itself if we die
	chunk     = 4 << 20          // bytes asked in one read (the Remote may answer fewer)
	// confirmTries and confirmEvery bound how long a session whose flip
	// has no answer asks the leader who owns the partition.
	confirmTries = 5
	confirmEvery = time.Second
)

// session moves one partition here: catch up, freeze, finalize, verify,
// install, flip.
func (w *Worker) session(ctx context.Context, a meta.Assignment) (err error) {
	src, topic, p := a.Owner, a.Topic, a.Partition
	holder := fmt.Sprintf("%s#%d.%d", w.self, w.clock.Now().UnixNano(), w.seq.Add(1)) // this session's freezes
	dir, err := w.stagingDir(topic, p)
	if err != nil {
		return err
	}
	stage, err := storage.NewStage(w.fs, dir)
	if err != nil {
		return err
	}
	defer stage.Remove() // gone after the install's rename anyway
	start := w.clock.Now()
	// Catch up while produce flows: passes until one copies little, or
	// stops shrinking, or the pass cap.
	prev := int64(-1)
	var copied int64
	for pass := 0; pass < maxPasses; pass++ {
		if copied, err = w.copyPass(ctx, src, topic, p, stage, false); err != nil {
			return fmt.Errorf("catch-up pass %d: %w", pass, err)
		}
		if copied <= lagBytes || (prev >= 0 && copied >= prev) {
			break
		}
		prev = copied
	}
	if copied > maxTail {
		// Produce keeps pace with the copy: freezing now would hold
		// commits back for as long as the tail takes. Try again later.
		return fmt.Errorf("the tail still grows by %d bytes a pass; not freezing", copied)
	}
	if !w.stillTarget(topic, p, src) {
		return errors.New("the move was cancelled or re-planned")
	}
	hwm, err := w.cfg.Remote.MoveFreeze(ctx, src, topic, p, freezeTTL, holder)
	if err != nil {
		return fmt.Errorf("freeze the source: %w", err)
	}
	flipped := false
	defer func() {
		if !flipped { // the source stays authoritative: let it take commits again
			tctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
			defer cancel()
			w.cfg.Remote.MoveFreeze(tctx, src, topic, p, 0, holder)
		}
	}()
	// Keep the freeze from lapsing while the tail is copied and checked.
	stopRenew := w.renew(ctx, src, topic, p, holder)
	_, err = w.copyPass(ctx, src, topic, p, stage, true)
	var got uint64
	if err == nil {
		got, err = stage.Verify(w.data.Options())
	}
	stopRenew()
	if err != nil {
		return fmt.Errorf("final copy: %w", err)
	}
	if got != hwm {
		return fmt.Errorf("the copy recovers to high watermark %d, the source has %d", got, hwm)
	}
	if !w.stillTarget(topic, p, src) {
		return errors.New("the move was cancelled or re-planned")
	}
	// The freeze must still hold at the flip: renew it, and make sure
	// nothing was committed since the copy (a lapsed freeze would have
	// let commits in that the copy lacks).
	if again, err := w.cfg.Remote.MoveFreeze(ctx, src, topic, p, freezeTTL, holder); err != nil || again != hwm {
		return fmt.Errorf("re-freezing the source before the flip: high watermark %d (copied %d), %v", again, hwm, err)
	}
	if err := w.install(topic, p, stage); err != nil {
		return err
	}
	if err := w.cfg.Remote.Flip(ctx, topic, p, src, w.self); err != nil {
		// The outcome may be unknown (a lost answer): only the leader
		// can say whether the copy here is now the partition.
		owner, ok := w.confirmOwner(ctx, topic, p)
		switch {
		case ok && owner == w.self:
			// It did flip.
		case ok:
			if derr := w.drop(topic, p); derr != nil {
				w.log.Error("move: removing the copy after a failed flip", "topic", topic, "partition", p, "err", derr)
			}
			return fmt.Errorf("flip: %w", err)
		default:
			// Unknown: keep both the copy and the source's freeze. If
			// the flip did not happen, the leader says so later
			// (recheckFlip) and a new session reinstalls; the freeze
			// lifts only with the leader's word.
			flipped = true
			w.remember(topic, p, src)
			return fmt.Errorf("flip, outcome unknown: %w", err)
		}
	}
	flipped = true
	w.remember(topic, p, src)
	if w.cfg.Completed != nil {
		w.cfg.Completed.Inc()
	}
	w.log.Info("partition moved here", "topic", topic, "partition", p, "from", src, "high_watermark", hwm,
		"seconds", clock.Since(w.clock, start).Seconds())
	return nil
}

func (w *Worker) stillTarget(topic string, p int, src string) bool {
	as := w.meta.Assignments(topic)
	return p < len(as) && as[p].Owner == src && as[p].Target == w.self
}

// copyPass brings the staged copy up to the source's files and returns the
// bytes it copied. Segments only grow at their end (sealed ones never
// change), so only the new bytes are fetched; the small state files (hwm,
// consumer frontier, fan-out cursors) are fetched whole. The final pass,
// with the source frozen, also drops staged files the source no longer
// has (retention).
func (w *Worker) copyPass(ctx context.Context, src, topic string, p int, stage *storage.Stage, final bool) (int64, error) {
	files, _, err := w.cfg.Remote.MoveFiles(ctx, src, topic, p)
	if err != nil {
		return 0, err
	}
	var copied int64
	have := map[string]bool{}
	for _, f := range files {
		if !storage.IsFileName(f.Name) {
			return copied, fmt.Errorf("the source listed %q, which is not a file name", f.Name)
		}
		have[f.Name] = true
		var from int64
		if strings.HasSuffix(f.Name, ".log") {
			if n := stage.Size(f.Name); n <= f.Size {
				from = n
			}
		} else if !final {
			continue // state files: only their final value matters
		}
		n, err := w.fetch(ctx, src, topic, p, stage, f.Name, from, f.Size)
		copied += n
		if err != nil {
			return copied, err
		}
		if err := w.refetchTorn(ctx, src, topic, p, stage, f); err != nil {
			return copied, err
		}
	}
	if final {
		if err := stage.Keep(have); err != nil {
			return copied, err
		}
	}
	return copied, nil
}

// refetchTorn fetches a file its owner rewrites in place again until the
// copy reads back whole: the source's fan-out cursors keep running, so a
// copy may catch one mid-write.
func (w *Worker) refetchTorn(ctx context.Context, src, topic string, p int, stage *storage.Stage, f storage.PartitionFile) error {
	if w.cfg.InPlace == nil {
		return nil
	}
	for try := 0; ; try++ {
		inPlace, err := w.cfg.InPlace(f.Name, stage.Path(f.Name))
		if !inPlace || err == nil {
			return nil
		}
		if try == 4 {
			return fmt.Errorf("%s does not read back whole: %w", f.Name, err)
		}
		if _, err := w.fetch(ctx, src, topic, p, stage, f.Name, 0, f.Size); err != nil {
			return err
		}
	}
}

// fetch copies bytes [from, size) of a source file into the stage (from 0
// truncates first), fsyncing before it returns.
func (w *Worker) fetch(ctx context.Context, src, topic string, p int, stage *storage.Stage, name string, from, size int64) (int64, error) {
	f, err := stage.Write(name, from == 0)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	var n int64
	for off := from; off < size; {
		data, err := w.cfg.Remote.MoveRead(ctx, src, topic, p, name, off, min(chunk, size-off))
		if err != nil {
			return n, err
		}
		if len(data) == 0 {
			return n, fmt.Errorf("%s shrank at %d on the source", name, off)
		}
		if _, err := f.WriteAt(data, off); err != nil {
			return n, err
		}
		off += int64(len(data))
		n += int64(len(data))
	}
	return n, f.Sync()
}

// install puts a verified copy in place of this node's directory of
// topic/p: whatever was there (a stale copy from an earlier ownership,
// frozen) is closed and replaced. Never over a partition this node serves.
func (w *Worker) install(topic string, p int, stage *storage.Stage) error {
	if owner, ok := w.meta.Owner(topic, p); ok && owner == w.self {
		// This node serves the partition already (a move it completed
		// before): wiping it would lose what it took since.
		return refusal.New(refusal.ErrConflict, 0, "install %s/%d: this node owns it already", topic, p)
	}
	dir, err := w.data.Dir(topic, p)
	if err != nil {
		return err
	}
	w.data.Forget(topic, p)
	if err := stage.Install(dir); err != nil {
		return fmt.Errorf("install %s/%d: %w", topic, p, err)
	}
	w.freezes.forget(topic, p) // the old copy's freeze went with it; the new copy carries none
	return nil
}

// drop closes and deletes this node's copy of topic/p, and its freeze. The
// caller holds a leader confirmation that another node owns it.
func (w *Worker) drop(topic string, p int) error {
	dir, err := w.data.Dir(topic, p)
	if err != nil {
		return err
	}
	w.data.Forget(topic, p)
	if err := storage.RemoveDir(w.fs, dir); err != nil {
		return err
	}
	w.freezes.forget(topic, p)
	return nil
}

// confirmOwner asks the leader, a few times, who owns a partition.
func (w *Worker) confirmOwner(ctx context.Context, topic string, p int) (string, bool) {
	for try := 0; try < confirmTries; try++ {
		owner, _, err := w.askOwner(ctx, topic, p)
		if err == nil {
			return owner, true
		}
		if clock.Sleep(ctx, w.clock, confirmEvery) != nil {
			return "", false
		}
	}
	return "", false
}

// renew re-freezes the source every third of the TTL until the returned
// func is called, so a long final copy never lets the freeze lapse.
func (w *Worker) renew(ctx context.Context, src, topic string, p int, holder string) func() {
	rctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	t := w.clock.NewTicker(freezeTTL / 3)
	go func() {
		defer close(done)
		defer t.Stop()
		for {
			select {
			case <-rctx.Done():
				return
			case <-t.C():
				w.cfg.Remote.MoveFreeze(rctx, src, topic, p, freezeTTL, holder)
			}
		}
	}()
	return func() { cancel(); <-done }
}
