package move

import (
	"context"
	"log/slog"
	"path/filepath"
	"sync"
	"sync/atomic"
	"time"

	"github.com/narad-io/narad/internal/clock"
	"github.com/narad-io/narad/internal/meta"
	"github.com/narad-io/narad/internal/storage"
	"github.com/narad-io/narad/internal/vfs"
)

// Worker cadence, on the worker's clock.
const (
	passEvery   = time.Second      // a pass over the assignments
	shedEvery   = 10 * time.Second // shedding moved-away copies and lifting expired freezes
	retryAfter  = 2 * time.Second  // a failed session's partition waits this long
	maxSessions = 4                // copy sessions at once on one destination
	askTimeout  = 5 * time.Second  // one question to the leader (askOwner)
)

// WorkerConfig is what a Worker needs beside its node's Source.
type WorkerConfig struct {
	Remote Remote
	// DataDir is the node's data directory: sessions stage their copies
	// under DataDir/moves, on the same file system as the partitions, so
	// installing one is a rename.
	DataDir string
	// Clock drives passes, retries, freeze renewals and confirmation
	// retries; nil is the system clock.
	Clock clock.Clock
	Log   *slog.Logger
	// InPlace checks copied files their owner rewrites in place.
	InPlace InPlaceCheck
	// InFlight and Completed are narad_moves_in_flight and
	// narad_moves_completed_total; either may be nil.
	InFlight  Gauge
	Completed Counter
}

// Worker runs this node's move sessions — one for every partition whose
// target is this node — sheds copies of partitions moved away, and lifts
// expired freezes the leader confirms this node may lift.
type Worker struct {
	self    string
	meta    Meta
	data    Partitions
	freezes *Freezes
	fs      vfs.FS
	cfg     WorkerConfig
	clock   clock.Clock
	log     *slog.Logger
	seq     atomic.Uint64 // makes session holders unique whatever the clock says

	mu      sync.Mutex
	running map[key]bool
	failed  map[key]time.Time // last failure, to space retries
	// flipped remembers the source of each move this node completed (or
	// may have: the flip's answer was lost) until the local replica shows
	// another owner: no second session may start (and freeze, then thaw)
	// on a view that still names the old owner. A memo whose view still
	// names the source retryAfter later is checked with the leader
	// (recheckFlip): a flip that did not happen must not stop the move
	// for good.
	flipped map[key]flipMemo
}

// flipMemo is a flip this node made or may have made: from src, noted at.
type flipMemo struct {
	src string
	at  time.Time
}

// NewWorker builds the worker of the node src serves.
func NewWorker(src *Source, cfg WorkerConfig) *Worker {
	log := cfg.Log
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &Worker{self: src.self, meta: src.meta, data: src.data, freezes: src.freezes,
		fs: vfs.Or(src.data.Options().FS), cfg: cfg, clock: clock.Or(cfg.Clock), log: log,
		running: map[key]bool{}, failed: map[key]time.Time{}, flipped: map[key]flipMemo{}}
}

// stagingRoot holds the copies sessions are assembling.
func (w *Worker) stagingRoot() string { return filepath.Join(w.cfg.DataDir, "moves") }

// stagingDir is where a session stages topic/p: the topic name is checked
// by the data plane first, so the path stays under the data directory.
func (w *Worker) stagingDir(topic string, p int) (string, error) {
	if _, err := w.data.Dir(topic, p); err != nil {
		return "", err
	}
	return filepath.Join(w.stagingRoot(), topic, storage.PartitionDirName(p)), nil
}

// Run makes a pass every second and sheds every ten until ctx ends, then
// waits for its sessions.
func (w *Worker) Run(ctx context.Context) {
	// Before any session: what is staged belongs to sessions a crash or a
	// cancel ended.
	if err := w.fs.RemoveAll(w.stagingRoot()); err != nil {
		w.log.Warn("move: clearing old staged copies", "err", err)
	}
	t := w.clock.NewTicker(passEvery)
	defer t.Stop()
	shed := w.clock.NewTicker(shedEvery)
	defer shed.Stop()
	var wg sync.WaitGroup
	defer wg.Wait()
	for {
		select {
		case <-ctx.Done():
			return
		case <-shed.C():
			w.shed(ctx)
			w.liftExpired(ctx)
		case <-t.C():
			w.pass(ctx, &wg)
		}
	}
}

// pass starts a session for every wanted move not running, within the
// session cap, and not failed in the last retryAfter; and a check with the
// leader for every flip this node may have made that its replica does not
// show after retryAfter.
func (w *Worker) pass(ctx context.Context, wg *sync.WaitGroup) {
	if w.cfg.InFlight != nil {
		w.cfg.InFlight.Set(float64(len(InFlight(w.meta))))
	}
	moves, unsure := w.wanted()
	for _, a := range unsure {
		k := key{a.Topic, a.Partition}
		if !w.start(k) {
			continue
		}
		wg.Go(func() {
			defer w.stop(k)
			w.recheckFlip(ctx, a)
		})
	}
	for _, a := range moves {
		k := key{a.Topic, a.Partition}
		w.mu.Lock()
		last, failed := w.failed[k]
		retrying := failed && clock.Since(w.clock, last) < retryAfter
		w.mu.Unlock()
		if retrying || !w.start(k) {
			continue
		}
		wg.Go(func() {
			err := w.session(ctx, a)
			w.mu.Lock()
			delete(w.running, k)
			if err != nil {
				w.failed[k] = w.clock.Now()
			} else {
				delete(w.failed, k)
			}
			w.mu.Unlock()
			if err != nil && ctx.Err() == nil {
				w.log.Warn("move session failed; will retry", "topic", a.Topic, "partition", a.Partition,
					"from", a.Owner, "err", err)
			}
		})
	}
}

// Assignments is the part of the metastore's view InFlight reads.
type Assignments interface {
	Topics() []meta.Topic
	Assignments(topic string) []meta.Assignment
}

// InFlight lists the moves in flight anywhere (a partition with a
// target), per the replica ms: what narad_moves_in_flight counts and
// GET /v1/cluster/moves shows.
func InFlight(ms Assignments) []meta.Assignment {
	var out []meta.Assignment
	for _, t := range ms.Topics() {
		for _, a := range ms.Assignments(t.Name) {
			if a.Target != "" {
				out = append(out, a)
			}
		}
	}
	return out
}

// start marks k's session (or flip check) running, unless one is or the
// session cap is reached.
func (w *Worker) start(k key) bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.running[k] || len(w.running) >= maxSessions {
		return false
	}
	w.running[k] = true
	return true
}

func (w *Worker) stop(k key) {
	w.mu.Lock()
	delete(w.running, k)
	w.mu.Unlock()
}

// wanted lists the moves that target this node, per the local replica,
// except those it completed (or may have) and the replica has not caught
// up on; of those, unsure lists the ones noted retryAfter ago or more.
func (w *Worker) wanted() (moves, unsure []meta.Assignment) {
	w.mu.Lock()
	defer w.mu.Unlock()
	for _, t := range w.meta.Topics() {
		for _, a := range w.meta.Assignments(t.Name) {
			mine := a.Target == w.self && a.Owner != "" && a.Owner != w.self
			k := key{a.Topic, a.Partition}
			if m, ok := w.flipped[k]; ok {
				if a.Owner == m.src {
					if mine && clock.Since(w.clock, m.at) >= retryAfter {
						unsure = append(unsure, a)
					}
					continue
				}
				delete(w.flipped, k)
			}
			if mine {
				moves = append(moves, a)
			}
		}
	}
	return moves, unsure
}

// remember notes a completed (or possibly completed) flip, see flipped.
func (w *Worker) remember(topic string, p int, src string) {
	w.mu.Lock()
	w.flipped[key{topic, p}] = flipMemo{src: src, at: w.clock.Now()}
	w.mu.Unlock()
}

// askOwner asks the leader once, for at most askTimeout, who owns
// topic/p and where it is moving (meta.Store.ConfirmOwner: answered after
// a barrier; only a nil error is an answer).
func (w *Worker) askOwner(ctx context.Context, topic string, p int) (owner, target string, err error) {
	ctx, cancel := context.WithTimeout(ctx, askTimeout)
	defer cancel()
	return w.meta.ConfirmOwner(ctx, topic, p)
}

// recheckFlip asks the leader about a flip this node may have made whose
// source the local replica still names as the owner. The leader answers
// after a barrier: if it names the source too, the flip did not happen
// and, its term over, never will (a Raft entry a later leader does not
// hold is never committed), so the memo goes and the next pass moves the
// partition again. Otherwise (the flip happened and the replica lags, or
// no answer) the memo is renewed and asked about again retryAfter later.
func (w *Worker) recheckFlip(ctx context.Context, a meta.Assignment) {
	owner, _, err := w.askOwner(ctx, a.Topic, a.Partition)
	k := key{a.Topic, a.Partition}
	w.mu.Lock()
	defer w.mu.Unlock()
	m, ok := w.flipped[k]
	if !ok || m.src != a.Owner {
		return // the replica showed the flip meanwhile
	}
	if err == nil && owner == m.src {
		delete(w.flipped, k)
		w.log.Warn("move: the leader says a flip whose answer was lost did not happen; moving again",
			"topic", a.Topic, "partition", a.Partition, "from", m.src)
		return
	}
	w.flipped[k] = flipMemo{src: m.src, at: w.clock.Now()}
}
