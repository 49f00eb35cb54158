package storage

import (
	"fmt"
	"syscall"
	"testing"

	"github.com/narad-io/narad/internal/vfs/errorfs"
)

// TestReadOneAtATimeUsesTheCachedFrame: readers taking one record per
// call land inside a frame another read just decoded, and find it in the
// cache without reading the segment again (no seek through the index).
// Every read of the segment fails after the first record is read, so a
// read that went to disk would report a gap; each record must also be
// the right one, from the frame that holds it.
func TestReadOneAtATimeUsesTheCachedFrame(t *testing.T) {
	l, fsys, _ := faultyLog(t, Options{})
	defer l.Close()
	for f := 0; f < 3; f++ {
		batch := make([]Record, 10)
		for i := range batch {
			batch[i].Payload = fmt.Appendf(nil, "f%d-r%d", f, i)
		}
		if _, err := l.Commit(batch); err != nil {
			t.Fatal(err)
		}
	}
	// Decode frames 1 and 2 (offsets 10..29) into the cache, frame 2 last.
	for _, o := range []uint64{10, 20} {
		if res, err := l.Read(o, 1, 1<<20, NoDueLimit); err != nil || len(res.Records) != 1 {
			t.Fatalf("warm read at %d: %v %v", o, res, err)
		}
	}
	fsys.Inject(errorfs.Rule{Ops: errorfs.OpRead, Path: ".log", Err: syscall.EIO})
	for _, o := range []uint64{13, 27, 11, 29, 19, 21} {
		res, err := l.Read(o, 1, 1<<20, NoDueLimit)
		if err != nil || len(res.Records) != 1 || res.Skipped != 0 {
			t.Fatalf("read at %d went to the disk: %+v %v", o, res, err)
		}
		if want := fmt.Sprintf("f%d-r%d", o/10, o%10); string(res.Records[0].Payload) != want || res.Next != o+1 {
			t.Fatalf("read at %d: %q next %d, want %q next %d", o, res.Records[0].Payload, res.Next, want, o+1)
		}
	}
}
