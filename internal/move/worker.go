package move

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/narad-io/narad/internal/broker"
	"github.com/narad-io/narad/internal/fanout"
	"github.com/narad-io/narad/internal/meta"
	"github.com/narad-io/narad/internal/rpc"
)

// Session tuning (06-cluster.md).
const (
	lagBytes    = 1 << 20          // catch-up ends when a pass copies less
	maxPasses   = 20               // or after this many passes
	maxTail     = 64 << 20         // never freeze with more than this left to copy
	freezeTTL   = 30 * time.Second // the freeze lifts by itself if we die
	chunk       = rpc.MaxMoveRead
	maxSessions = 4 // copy sessions at once on one destination
	retryAfter  = 2 * time.Second
)

// Remote is what a session needs of other nodes: the source's copy
// session, and the flip on the leader.
type Remote interface {
	MoveFreeze(ctx context.Context, node, topic string, p int, ttl time.Duration, holder string) (uint64, error)
	MoveFiles(ctx context.Context, node, topic string, p int) ([]rpc.MoveFile, uint64, error)
	MoveRead(ctx context.Context, node, topic string, p int, name string, off, n int64) ([]byte, error)
	Flip(ctx context.Context, topic string, p int, from, to string) error
}

// Worker runs this node's move sessions: one for every partition whose
// target is this node, and sheds copies of partitions moved away.
type Worker struct {
	Self   string
	Meta   *meta.Store
	Broker *broker.Broker
	Remote Remote
	Log    *slog.Logger
	// InFlight and Completed are the moves_in_flight gauge and the
	// moves_completed_total counter; either may be nil.
	InFlight  interface{ Set(float64) }
	Completed interface{ Inc() }

	mu      sync.Mutex
	running map[key]bool
	failed  map[key]time.Time // last failure, to space retries
	// flipped remembers the source of each move this node completed until
	// the local replica shows the flip: no second session may start (and
	// freeze, then thaw) on a view that still names the old owner.
	flipped map[key]string
}

type key struct {
	topic string
	p     int
}

// Run scans the assignments every second until ctx ends.
func (w *Worker) Run(ctx context.Context) {
	w.running, w.failed, w.flipped = map[key]bool{}, map[key]time.Time{}, map[key]string{}
	if err := w.Broker.ClearStaging(); err != nil {
		w.Log.Warn("move: clearing old staged copies", "err", err)
	}
	t := time.NewTicker(time.Second)
	defer t.Stop()
	shed := time.NewTicker(10 * time.Second)
	defer shed.Stop()
	var wg sync.WaitGroup
	defer wg.Wait()
	for {
		select {
		case <-ctx.Done():
			return
		case <-shed.C:
			w.shed(ctx)
			w.liftExpired(ctx)
		case <-t.C:
			if w.InFlight != nil {
				w.InFlight.Set(float64(w.inFlight()))
			}
			for _, a := range w.wanted() {
				k := key{a.Topic, a.Partition}
				w.mu.Lock()
				busy := w.running[k] || len(w.running) >= maxSessions || time.Since(w.failed[k]) < retryAfter
				if !busy {
					w.running[k] = true
				}
				w.mu.Unlock()
				if busy {
					continue
				}
				wg.Add(1)
				go func() {
					defer wg.Done()
					err := w.session(ctx, a)
					w.mu.Lock()
					delete(w.running, k)
					if err != nil {
						w.failed[k] = time.Now()
					} else {
						delete(w.failed, k)
					}
					w.mu.Unlock()
					if err != nil && ctx.Err() == nil {
						w.Log.Warn("move session failed; will retry", "topic", a.Topic, "partition", a.Partition,
							"from", a.Owner, "err", err)
					}
				}()
			}
		}
	}
}

// inFlight counts the moves in flight anywhere, per the local replica.
func (w *Worker) inFlight() int {
	n := 0
	for _, t := range w.Meta.Topics() {
		for _, a := range w.Meta.Assignments(t.Name) {
			if a.Target != "" {
				n++
			}
		}
	}
	return n
}

// wanted lists the moves that target this node, per the local replica,
// except those it already completed and the replica has not caught up on.
func (w *Worker) wanted() []meta.Assignment {
	var out []meta.Assignment
	w.mu.Lock()
	defer w.mu.Unlock()
	for _, t := range w.Meta.Topics() {
		for _, a := range w.Meta.Assignments(t.Name) {
			k := key{a.Topic, a.Partition}
			if src, ok := w.flipped[k]; ok {
				if a.Owner == src {
					continue
				}
				delete(w.flipped, k)
			}
			if a.Target == w.Self && a.Owner != "" && a.Owner != w.Self {
				out = append(out, a)
			}
		}
	}
	return out
}

// session moves one partition here: catch up, freeze, finalize, verify,
// install, flip.
func (w *Worker) session(ctx context.Context, a meta.Assignment) (err error) {
	src, topic, p := a.Owner, a.Topic, a.Partition
	holder := fmt.Sprintf("%s#%d", w.Self, time.Now().UnixNano()) // this session's freezes
	staged, err := w.Broker.StagingDir(topic, p)
	if err != nil {
		return err
	}
	if err := os.RemoveAll(staged); err != nil {
		return err
	}
	if err := os.MkdirAll(staged, 0o755); err != nil {
		return err
	}
	defer os.RemoveAll(staged) // gone after the install's rename anyway
	start := time.Now()
	// Catch up while produce flows: passes until one copies little, or
	// stops shrinking, or the pass cap.
	prev := int64(-1)
	var copied int64
	for pass := 0; pass < maxPasses; pass++ {
		if copied, err = w.copyPass(ctx, src, topic, p, staged, false); err != nil {
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
	hwm, err := w.Remote.MoveFreeze(ctx, src, topic, p, freezeTTL, holder)
	if err != nil {
		return fmt.Errorf("freeze the source: %w", err)
	}
	flipped := false
	defer func() {
		if !flipped { // the source stays authoritative: let it take commits again
			tctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
			defer cancel()
			w.Remote.MoveFreeze(tctx, src, topic, p, 0, holder)
		}
	}()
	// Keep the freeze from lapsing while the tail is copied and checked.
	stopRenew := w.renew(ctx, src, topic, p, holder)
	_, err = w.copyPass(ctx, src, topic, p, staged, true)
	var got uint64
	if err == nil {
		got, err = w.Broker.VerifyCopy(staged)
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
	if again, err := w.Remote.MoveFreeze(ctx, src, topic, p, freezeTTL, holder); err != nil || again != hwm {
		return fmt.Errorf("re-freezing the source before the flip: high watermark %d (copied %d), %v", again, hwm, err)
	}
	if err := w.Broker.InstallPartition(topic, p, staged); err != nil {
		return err
	}
	if err := w.Remote.Flip(ctx, topic, p, src, w.Self); err != nil {
		// The outcome may be unknown (a lost answer): only the leader
		// can say whether the copy here is now the partition.
		owner, ok := w.confirmOwner(ctx, topic, p)
		switch {
		case ok && owner == w.Self:
			// It did flip.
		case ok:
			if derr := w.Broker.DropPartition(topic, p); derr != nil {
				w.Log.Error("move: removing the copy after a failed flip", "topic", topic, "partition", p, "err", derr)
			}
			return fmt.Errorf("flip: %w", err)
		default:
			// Unknown: keep both the copy and the source's freeze; a
			// later session (if the flip did not happen) reinstalls, and
			// the freeze lifts only with the leader's word.
			flipped = true
			w.remember(topic, p, src)
			return fmt.Errorf("flip, outcome unknown: %w", err)
		}
	}
	flipped = true
	w.remember(topic, p, src)
	if w.Completed != nil {
		w.Completed.Inc()
	}
	w.Log.Info("partition moved here", "topic", topic, "partition", p, "from", src, "high_watermark", hwm,
		"seconds", time.Since(start).Seconds())
	return nil
}

func (w *Worker) stillTarget(topic string, p int, src string) bool {
	as := w.Meta.Assignments(topic)
	return p < len(as) && as[p].Owner == src && as[p].Target == w.Self
}

// copyPass brings the staged copy up to the source's files and returns the
// bytes it copied. Segments only grow at their end (sealed ones never
// change), so only the new bytes are fetched; the small state files (hwm,
// consumer frontier, fan-out cursors) are fetched whole. The final pass,
// with the source frozen, also drops staged files the source no longer
// has (retention).
func (w *Worker) copyPass(ctx context.Context, src, topic string, p int, staged string, final bool) (int64, error) {
	files, _, err := w.Remote.MoveFiles(ctx, src, topic, p)
	if err != nil {
		return 0, err
	}
	var copied int64
	have := map[string]bool{}
	for _, f := range files {
		if f.Name != filepath.Base(f.Name) || f.Name == "." || f.Name == ".." {
			return copied, fmt.Errorf("the source listed %q, which is not a file name", f.Name)
		}
		have[f.Name] = true
		path := filepath.Join(staged, f.Name)
		var from int64
		if strings.HasSuffix(f.Name, ".log") {
			if fi, err := os.Stat(path); err == nil && fi.Size() <= f.Size {
				from = fi.Size()
			}
		} else if !final {
			continue // state files: only their final value matters
		}
		n, err := w.fetch(ctx, src, topic, p, f.Name, path, from, f.Size)
		copied += n
		if err != nil {
			return copied, err
		}
		if isCursorFile(f.Name) {
			// The source's cursors keep running and rewrite their files in
			// place: a copy may catch one mid-write. Read it back as a
			// cursor file and fetch again until it is whole.
			for try := 0; ; try++ {
				if _, _, err := fanout.ReadCursorFile(path); err == nil {
					break
				} else if try == 4 {
					return copied, fmt.Errorf("cursor file %s: %w", f.Name, err)
				}
				if _, err := w.fetch(ctx, src, topic, p, f.Name, path, 0, f.Size); err != nil {
					return copied, err
				}
			}
		}
	}
	if final {
		ents, _ := os.ReadDir(staged)
		for _, e := range ents {
			if !have[e.Name()] {
				os.Remove(filepath.Join(staged, e.Name()))
			}
		}
	}
	return copied, nil
}

// fetch copies bytes [from, size) of a source file into path (from 0
// truncates first), fsyncing before it returns.
func (w *Worker) fetch(ctx context.Context, src, topic string, p int, name, path string, from, size int64) (int64, error) {
	flag := os.O_CREATE | os.O_WRONLY
	if from == 0 {
		flag |= os.O_TRUNC
	}
	f, err := os.OpenFile(path, flag, 0o644)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	var n int64
	for off := from; off < size; {
		data, err := w.Remote.MoveRead(ctx, src, topic, p, name, off, min(chunk, size-off))
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

// confirmOwner asks the leader, a few times, who owns a partition.
func (w *Worker) confirmOwner(ctx context.Context, topic string, p int) (string, bool) {
	for try := 0; try < 5; try++ {
		cctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		owner, _, err := w.Meta.ConfirmOwner(cctx, topic, p)
		cancel()
		if err == nil {
			return owner, true
		}
		select {
		case <-ctx.Done():
			return "", false
		case <-time.After(time.Second):
		}
	}
	return "", false
}

// remember notes a completed (or possibly completed) flip, see flipped.
func (w *Worker) remember(topic string, p int, src string) {
	w.mu.Lock()
	if w.flipped == nil {
		w.flipped = map[key]string{}
	}
	w.flipped[key{topic, p}] = src
	w.mu.Unlock()
}

// renew re-freezes the source every third of the TTL until the returned
// func is called, so a long final copy never lets the freeze lapse.
func (w *Worker) renew(ctx context.Context, src, topic string, p int, holder string) func() {
	rctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		t := time.NewTicker(freezeTTL / 3)
		defer t.Stop()
		for {
			select {
			case <-rctx.Done():
				return
			case <-t.C:
				w.Remote.MoveFreeze(rctx, src, topic, p, freezeTTL, holder)
			}
		}
	}()
	return func() { cancel(); <-done }
}

// isCursorFile reports whether name is a fan-out cursor file.
func isCursorFile(name string) bool {
	return strings.HasPrefix(name, "fanout-") && strings.HasSuffix(name, ".offset")
}
