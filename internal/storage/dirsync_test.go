package storage

import (
	"path/filepath"
	"testing"

	"github.com/narad-io/narad/internal/vfs"
	"github.com/narad-io/narad/internal/vfs/errorfs"
)

// TestNewPartitionIsDurableInItsParents: once a commit to a partition
// that did not exist has returned (acknowledged), no directory entry it
// needs is left to a power cut — not the topic or partition directory,
// not a segment or the hwm file. A partition directory lost with its
// entry would come back empty at offset 0, its records acknowledged and
// released from the ingress WAL.
func TestNewPartitionIsDurableInItsParents(t *testing.T) {
	root := t.TempDir()
	fsys := errorfs.New(vfs.Default)
	dir := filepath.Join(root, "topics", "orders", PartitionDirName(0))
	l := openT(t, dir, Options{FS: fsys})
	defer l.Close()
	commitT(t, l, recs("a", 3, false))
	if got := fsys.UnsyncedEntries(root); len(got) != 0 {
		t.Fatalf("after an acknowledged commit, entries a power cut could remove: %v", got)
	}
}

// TestInstalledCopyIsDurableInItsParents: a copy installed by a move
// (Stage.Install) on a node that never held the topic leaves no entry to
// a power cut: the source deletes its copy after the flip.
func TestInstalledCopyIsDurableInItsParents(t *testing.T) {
	root := t.TempDir()
	fsys := errorfs.New(vfs.Default)
	st, err := NewStage(fsys, filepath.Join(root, "moves", "orders", PartitionDirName(0)))
	if err != nil {
		t.Fatal(err)
	}
	f, err := st.Write(segmentName(0), true)
	if err != nil {
		t.Fatal(err)
	}
	if err := f.Sync(); err != nil {
		t.Fatal(err)
	}
	f.Close()
	if err := st.Install(filepath.Join(root, "topics", "orders", PartitionDirName(0))); err != nil {
		t.Fatal(err)
	}
	if got := fsys.UnsyncedEntries(filepath.Join(root, "topics")); len(got) != 0 {
		t.Fatalf("after Install, entries a power cut could remove: %v", got)
	}
}
