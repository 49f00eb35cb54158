package hosted

import (
	"path/filepath"
	"syscall"
	"testing"

	"github.com/narad-io/narad/internal/storage"
	"github.com/narad-io/narad/internal/vfs"
	"github.com/narad-io/narad/internal/vfs/errorfs"
)

// A leader whose queue is not loaded sends its followers the counts
// file's entries. A read of it that fails teaches nothing: no snapshot
// (the followers keep theirs), and the next snapshot reads again — taken
// for a damaged file, it sent them no counts and never looked again.
func TestSideStateCountsReadErrorSendsNothing(t *testing.T) {
	fs := errorfs.New(vfs.Default)
	s := New(Config{Root: t.TempDir(), Log: storage.Options{FS: fs}})
	dir, err := s.Dir("jobs", 0)
	if err != nil {
		t.Fatal(err)
	}
	if err := fs.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := storage.WriteDeliveryCountsFS(fs, filepath.Join(dir, storage.DeliveryCountsFile), []storage.CountEntry{{Offset: 0, Count: 2}}); err != nil {
		t.Fatal(err)
	}
	r := &Roles{parts: s}
	h, st := &Role{key: Key{Topic: "jobs", Partition: 0}}, &sideState{}
	eio := fs.Inject(errorfs.Rule{Ops: errorfs.OpRead, Path: storage.DeliveryCountsFile, Err: syscall.EIO})
	if es, changed := r.snapshotCounts(h, st); changed || len(es) != 0 {
		t.Fatalf("snapshot under a failed read: %v, changed %v; want nothing", es, changed)
	}
	eio.Remove()
	es, changed := r.snapshotCounts(h, st)
	if !changed || len(es) != 1 || es[0].Count != 2 {
		t.Fatalf("snapshot once the file reads: %v, changed %v; want the record's count of 2", es, changed)
	}
}
