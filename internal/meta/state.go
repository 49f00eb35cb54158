package meta

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/raft"
	raftboltdb "github.com/hashicorp/raft-boltdb/v2"
	bolt "go.etcd.io/bbolt"
)

// HasState reports whether dir holds a metastore with Raft state (a log,
// a term or a snapshot), without starting Raft. A node calls it before
// Open: Open on a directory without state bootstraps or waits to join as
// a brand-new member, which is wrong for a node whose metastore was lost
// but whose data is still there.
func HasState(dir string) (bool, error) {
	if _, err := os.Stat(filepath.Join(dir, raftDBFile)); errors.Is(err, os.ErrNotExist) {
		snaps, err := os.ReadDir(filepath.Join(dir, "snapshots"))
		if err != nil && !errors.Is(err, os.ErrNotExist) {
			return false, fmt.Errorf("meta: %w", err)
		}
		return len(snaps) > 0, nil
	} else if err != nil {
		return false, fmt.Errorf("meta: %w", err)
	}
	store, err := raftboltdb.New(raftboltdb.Options{
		Path:        filepath.Join(dir, raftDBFile),
		BoltOptions: &bolt.Options{Timeout: time.Second},
	})
	if err != nil {
		return false, fmt.Errorf("meta: open %s: %w", raftDBFile, err)
	}
	defer store.Close()
	snaps, err := raft.NewFileSnapshotStoreWithLogger(dir, snapshotsRetained,
		hclog.New(&hclog.LoggerOptions{Output: io.Discard}))
	if err != nil {
		return false, fmt.Errorf("meta: open snapshots: %w", err)
	}
	return raft.HasExistingState(store, store, snaps)
}
