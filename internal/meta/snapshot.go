package meta

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/hashicorp/raft"
	bolt "go.etcd.io/bbolt"
)

// fsmSnapshot is a point-in-time copy of fsm.db: a bbolt read transaction
// opened in Snapshot (on the FSM goroutine, so it sees exactly the applied
// state) and streamed by Persist while Apply goes on — bbolt's MVCC keeps
// the transaction's view fixed.
type fsmSnapshot struct {
	tx *bolt.Tx
}

// Snapshot implements raft.FSM. It only opens the transaction; the copy
// happens in Persist, off the FSM goroutine.
func (f *fsm) Snapshot() (raft.FSMSnapshot, error) {
	f.mu.RLock()
	defer f.mu.RUnlock()
	if f.db == nil {
		return nil, ErrClosed
	}
	tx, err := f.db.Begin(false)
	if err != nil {
		return nil, fmt.Errorf("meta: snapshot: %w", err)
	}
	return &fsmSnapshot{tx: tx}, nil
}

// Persist writes the consistent database image into the sink.
func (s *fsmSnapshot) Persist(sink raft.SnapshotSink) error {
	if _, err := s.tx.WriteTo(sink); err != nil {
		_ = sink.Cancel()
		return fmt.Errorf("meta: persist snapshot: %w", err)
	}
	return sink.Close()
}

// Release ends the read transaction, letting bbolt reuse the pages it pinned.
func (s *fsmSnapshot) Release() { _ = s.tx.Rollback() }

// Restore implements raft.FSM: it replaces fsm.db with the snapshot's image.
// The image is written to a temporary file, synced, opened once to check it
// (and add buckets an older image lacks), then renamed over fsm.db, so a
// crash leaves either the old database or the new one, never a mix.
func (f *fsm) Restore(rc io.ReadCloser) error {
	defer func() { _ = rc.Close() }()
	tmp := f.path + ".restore"
	if err := writeSynced(tmp, rc); err != nil {
		_ = os.Remove(tmp)
		return fmt.Errorf("meta: restore: %w", err)
	}
	db, _, err := openBolt(tmp)
	if err != nil {
		_ = os.Remove(tmp)
		return fmt.Errorf("meta: restore: snapshot image: %w", err)
	}
	if err := db.Close(); err != nil {
		_ = os.Remove(tmp)
		return fmt.Errorf("meta: restore: %w", err)
	}

	f.mu.Lock()
	defer f.mu.Unlock()
	if f.db != nil {
		// Close waits for open read transactions, including a snapshot
		// still being persisted from the old file.
		if err := f.db.Close(); err != nil {
			return fmt.Errorf("meta: restore: close %s: %w", f.path, err)
		}
		f.db = nil
	}
	if err := os.Rename(tmp, f.path); err != nil {
		return fmt.Errorf("meta: restore: %w", err)
	}
	if err := syncDir(filepath.Dir(f.path)); err != nil {
		return fmt.Errorf("meta: restore: %w", err)
	}
	db, st, err := openBolt(f.path)
	if err != nil {
		return fmt.Errorf("meta: restore: %w", err)
	}
	f.db = db
	f.state.Store(st)
	f.notify()
	return nil
}

func writeSynced(path string, r io.Reader) error {
	out, err := os.OpenFile(path, os.O_CREATE|os.O_TRUNC|os.O_WRONLY, 0o600)
	if err != nil {
		return err
	}
	_, err = io.Copy(out, r)
	if err == nil {
		err = out.Sync()
	}
	return errors.Join(err, out.Close())
}

func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	return errors.Join(d.Sync(), d.Close())
}
