package vfs_test

import (
	"errors"
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/narad-io/narad/internal/vfs"
	"github.com/narad-io/narad/internal/vfs/errorfs"
)

// A failure at any step before the rename leaves the old content and no
// temp file; a failed directory fsync is reported; once the fault is gone
// the same call succeeds.
func TestWriteFileAtomicFaults(t *testing.T) {
	for _, tc := range []struct {
		name    string
		op      errorfs.Op
		err     error
		renamed bool // the fault comes after the rename
	}{
		{"create ENOSPC", errorfs.OpOpen, syscall.ENOSPC, false},
		{"write ENOSPC", errorfs.OpWrite, syscall.ENOSPC, false},
		{"fsync EIO", errorfs.OpSync, syscall.EIO, false},
		{"rename EIO", errorfs.OpRename, syscall.EIO, false},
		{"directory fsync EIO", errorfs.OpSync, syscall.EIO, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			path := filepath.Join(dir, "state")
			fsys := errorfs.New(vfs.Default)
			if err := vfs.WriteFileAtomic(fsys, path, []byte("old")); err != nil {
				t.Fatal(err)
			}
			rule := errorfs.Rule{Ops: tc.op, Err: tc.err}
			if tc.renamed {
				rule.After = 1 // the temp file's fsync passes, the directory's fails
			}
			in := fsys.Inject(rule)
			err := vfs.WriteFileAtomic(fsys, path, []byte("new"))
			if !errors.Is(err, tc.err) {
				t.Fatalf("WriteFileAtomic = %v, want %v", err, tc.err)
			}
			want := "old"
			if tc.renamed {
				want = "new"
			}
			if got, _ := os.ReadFile(path); string(got) != want {
				t.Fatalf("after the fault the file holds %q, want %q", got, want)
			}
			ents, _ := os.ReadDir(dir)
			if len(ents) != 1 {
				t.Fatalf("directory holds %d entries, want only the file (no temp left)", len(ents))
			}
			in.Remove()
			if err := vfs.WriteFileAtomic(fsys, path, []byte("new2")); err != nil {
				t.Fatalf("after the fault healed: %v", err)
			}
			if got, _ := os.ReadFile(path); string(got) != "new2" {
				t.Fatalf("file holds %q, want new2", got)
			}
		})
	}
}
