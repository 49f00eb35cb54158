package fanout

import (
	"path/filepath"
	"testing"

	"github.com/narad-io/narad/internal/vfs"
	"github.com/narad-io/narad/internal/vfs/errorfs"
)

// rules commit before advance, cursor file: an in-place advance is durable
// when it returns — its write is followed by an fdatasync — so a power cut
// right after loses nothing: a restarted cursor finds the position it last
// advanced to, never the one before (which would re-send a slab) and never
// a torn record.
func TestCursorAdvanceSurvivesAPowerCut(t *testing.T) {
	fsys := errorfs.New(vfs.Default)
	path := filepath.Join(t.TempDir(), CursorFileName("dst"))
	const epoch = "67953471cc57a32a"
	if err := WriteCursorFileAtomic(fsys, path, epoch, 10); err != nil {
		t.Fatal(err)
	}
	cf, err := OpenCursorFile(fsys, path)
	if err != nil {
		t.Fatal(err)
	}
	defer cf.Close()
	for _, next := range []uint64{11, 4096, 98332} {
		if err := cf.Advance(epoch, next); err != nil {
			t.Fatal(err)
		}
		if err := fsys.LoseUnsyncedWrites(); err != nil {
			t.Fatal(err)
		}
		st, ok, err := ReadCursorFile(path)
		if err != nil || !ok || st.Epoch != epoch || st.NextOffset != next {
			t.Fatalf("after advancing to %d and a power cut the file reads %+v (exists %v, err %v)", next, st, ok, err)
		}
	}
}
