package meta

import (
	"errors"
	"fmt"
	"log/slog"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"github.com/hashicorp/raft"
	bolt "go.etcd.io/bbolt"
)

// fsm is the Raft state machine: committed commands applied into fsm.db.
//
// Raft calls Apply, Snapshot and Restore from one goroutine; readers run
// concurrently through view. The decoded view of the state that readers use
// (versions, applied index, topic cache) is an immutable fsmState behind an
// atomic pointer, replaced after every change commits.
type fsm struct {
	path string
	log  *slog.Logger

	mu sync.RWMutex // guards db; Restore swaps the file under the write lock
	db *bolt.DB

	state atomic.Pointer[fsmState]
	watch atomic.Pointer[chan struct{}]

	memberCache atomic.Pointer[memberCache] // membercache.go

	// applyHook, when set, runs at the start of every Apply. Tests use it
	// to hold the FSM goroutine still; production never sets it.
	applyHook atomic.Pointer[func(*raft.Log)]
}

// fsmState is immutable once published.
type fsmState struct {
	v       Versions
	applied uint64      // Raft index of the last command that changed fsm.db
	cache   *topicCache // nil until a reader builds it for these versions
}

// errNoChange rolls back a command that validated but had nothing to write:
// a commit would cost an fsync for nothing.
var errNoChange = errors.New("no change")

func openFSM(path string, log *slog.Logger) (*fsm, error) {
	db, st, err := openBolt(path)
	if err != nil {
		return nil, err
	}
	f := &fsm{path: path, log: log, db: db}
	f.state.Store(st)
	ch := make(chan struct{})
	f.watch.Store(&ch)
	return f, nil
}

// openBolt opens (creating if needed) a state database and reads its
// versions and applied index.
func openBolt(path string) (*bolt.DB, *fsmState, error) {
	// The timeout turns "another process holds the file lock" into an error
	// instead of a hang.
	db, err := bolt.Open(path, 0o600, &bolt.Options{Timeout: time.Second})
	if err != nil {
		return nil, nil, fmt.Errorf("meta: open %s: %w", path, err)
	}
	st := &fsmState{}
	err = db.Update(func(tx *bolt.Tx) error {
		if err := ensureBuckets(tx); err != nil {
			return err
		}
		st.v = loadVersions(tx)
		st.applied = appliedIndex(tx)
		return nil
	})
	if err != nil {
		_ = db.Close()
		return nil, nil, fmt.Errorf("meta: open %s: %w", path, err)
	}
	return db, st, nil
}

// reset empties the state database. Open uses it when Raft has no state at
// all, so that an fsm.db left from an earlier life of the directory cannot
// leak into a new cluster.
func (f *fsm) reset() error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if err := f.db.Close(); err != nil {
		return fmt.Errorf("meta: reset %s: %w", f.path, err)
	}
	f.db = nil
	if err := os.Remove(f.path); err != nil && !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("meta: reset %s: %w", f.path, err)
	}
	db, st, err := openBolt(f.path)
	if err != nil {
		return err
	}
	f.db = db
	f.state.Store(st)
	f.notify()
	return nil
}

// Apply implements raft.FSM. It returns nil on success or an outcome error
// (ErrExists, ErrNotFound, ErrConflict, ErrInvalid, wrapped), which Raft
// hands to the proposer through the ApplyFuture's Response.
func (f *fsm) Apply(l *raft.Log) any {
	if h := f.applyHook.Load(); h != nil {
		(*h)(l)
	}
	if l.Type != raft.LogCommand {
		return nil
	}
	st := f.state.Load()
	if l.Index <= st.applied {
		// Raft replays the log after its last snapshot on every start;
		// fsm.db already holds these entries' effects.
		return nil
	}
	cmd, err := DecodeCommand(l.Data)
	if err != nil {
		return err
	}
	h, ok := handlers[cmd.Op]
	if !ok {
		// Every node running this binary refuses it alike; a newer node
		// would not. Upgrades must reach every node before new ops are used.
		f.log.Error("metastore: unknown op in the log", "op", uint8(cmd.Op), "index", l.Index)
		return fmt.Errorf("meta: %w: unknown op %d", ErrInvalid, uint8(cmd.Op))
	}

	var next Versions
	var changes []cacheChange
	f.mu.RLock()
	err = f.db.Update(func(tx *bolt.Tx) error {
		a := &applyTx{tx: tx, index: l.Index, v: st.v}
		if err := h(a, cmd.Payload); err != nil {
			return err
		}
		if !a.dirty {
			return errNoChange
		}
		if st.cache != nil {
			var err error
			if changes, err = readChanges(tx, a.touched); err != nil {
				return err
			}
		}
		// The applied index commits with the change: after a crash, fsm.db
		// and its applied index always agree.
		if err := putUint64(tx.Bucket(bucketMeta), keyAppliedIndex, l.Index); err != nil {
			return err
		}
		next = a.v
		return storeVersions(tx, st.v, a.v)
	})
	f.mu.RUnlock()
	switch {
	case errors.Is(err, errNoChange):
		return nil
	case isOutcome(err):
		return err
	case err != nil:
		// A storage failure here would leave this replica different from the
		// others while Raft believes it applied the entry. Crash instead; a
		// restart replays the entry from the log.
		panic(fmt.Sprintf("meta: apply %s at index %d: %v", cmd.Op, l.Index, err))
	}

	ns := &fsmState{v: next, applied: l.Index}
	switch {
	case next.Topics == st.v.Topics && next.Assignments == st.v.Assignments:
		ns.cache = st.cache // the cache depends on these two versions only
	case st.cache != nil:
		ns.cache = st.cache.patch(changes, next.Topics, next.Assignments)
	}
	f.state.Store(ns)
	f.notify()
	return nil
}

// view runs fn in a read transaction on the current database.
func (f *fsm) view(fn func(tx *bolt.Tx) error) error {
	f.mu.RLock()
	defer f.mu.RUnlock()
	if f.db == nil {
		return ErrClosed
	}
	return f.db.View(fn)
}

// notify closes the current watch channel and installs a fresh one.
func (f *fsm) notify() {
	ch := make(chan struct{})
	close(*f.watch.Swap(&ch))
}

func (f *fsm) close() error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.db == nil {
		return nil
	}
	err := f.db.Close()
	f.db = nil
	return err
}
