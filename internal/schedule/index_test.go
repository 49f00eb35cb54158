package schedule

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/narad-io/narad/internal/vfs"
	"github.com/narad-io/narad/internal/vfs/errorfs"
)

var t0 = time.Date(2026, 12, 4, 10, 0, 0, 0, time.UTC)

// fakeNow is a settable clock for an Index.
type fakeNow struct{ t time.Time }

func (c *fakeNow) now() time.Time           { return c.t }
func (c *fakeNow) add(d time.Duration)      { c.t = c.t.Add(d) }
func ms(t time.Time, d time.Duration) int64 { return t.Add(d).UnixMilli() }

func open(t *testing.T, fsys vfs.FS, dir string, c *fakeNow) *Index {
	t.Helper()
	x, err := Open(Options{FS: fsys, Dir: dir, Now: c.now})
	if err != nil {
		t.Fatal(err)
	}
	return x
}

func offsets(es []Entry) []uint64 {
	out := make([]uint64, len(es))
	for i, e := range es {
		out[i] = e.Offset
	}
	return out
}

func TestPopNeverEarlyAndInDueOrder(t *testing.T) {
	c := &fakeNow{t0}
	x := open(t, nil, t.TempDir(), c)
	x.Add(1, ms(t0, 30*time.Second))
	x.Add(2, ms(t0, 10*time.Second))
	x.Add(3, ms(t0, 10*time.Second))
	x.Add(4, ms(t0, 3*time.Minute))
	if got, _ := x.Pop(100); len(got) != 0 {
		t.Fatalf("popped %v before anything was due", got)
	}
	c.add(10*time.Second - time.Millisecond)
	if got, _ := x.Pop(100); len(got) != 0 {
		t.Fatalf("popped %v a millisecond early", got)
	}
	c.add(time.Millisecond)
	if got, _ := x.Pop(100); !slices.Equal(offsets(got), []uint64{2, 3}) {
		t.Fatalf("at 10 s popped %v, want [2 3]", offsets(got))
	}
	c.add(5 * time.Minute)
	if got, _ := x.Pop(1); !slices.Equal(offsets(got), []uint64{1}) {
		t.Fatalf("max 1 popped %v, want the earliest due [1]", offsets(got))
	}
	if got, _ := x.Pop(100); !slices.Equal(offsets(got), []uint64{4}) {
		t.Fatalf("popped %v, want [4] (from a bucket loaded later)", offsets(got))
	}
	if st := x.Stats(); st.Waiting != 0 || st.Out != 4 {
		t.Fatalf("stats %+v, want 0 waiting and 4 out", st)
	}
}

func TestNextIsEarliestDueOrBucketLoad(t *testing.T) {
	c := &fakeNow{t0}
	x := open(t, nil, t.TempDir(), c)
	if _, ok := x.Next(); ok {
		t.Fatal("an empty index has a next time")
	}
	x.Add(7, ms(t0, time.Hour))
	at, ok := x.Next()
	// The bucket of t0+1h loads one horizon before its minute starts.
	if want := t0.Add(time.Hour - Horizon); !ok || !at.Equal(want) {
		t.Fatalf("next %v %v, want the bucket's load at %v", at, ok, want)
	}
	x.Add(8, ms(t0, 20*time.Second))
	if at, _ := x.Next(); !at.Equal(t0.Add(20 * time.Second)) {
		t.Fatalf("next %v, want the loaded entry's due %v", at, t0.Add(20*time.Second))
	}
}

// The memory bound: entries of buckets beyond the horizon stay on disk
// until their minute comes near.
func TestLaterBucketsStayOnDisk(t *testing.T) {
	c := &fakeNow{t0}
	dir := t.TempDir()
	x := open(t, nil, dir, c)
	for i := range 6000 {
		x.Add(uint64(i), ms(t0, time.Duration(i)*time.Second)) // 100 minutes
	}
	if err := x.Sync(); err != nil {
		t.Fatal(err)
	}
	x.Close()
	x = open(t, nil, dir, c)
	if n := len(x.due); n > 120 {
		t.Fatalf("%d entries in memory after open, want at most the next horizon's (120)", n)
	}
	if st := x.Stats(); st.Waiting != 6000 {
		t.Fatalf("waiting %d, want 6000", st.Waiting)
	}
	c.add(50 * time.Minute)
	got, err := x.Pop(10000)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 3001 {
		t.Fatalf("popped %d at 50 min, want 3001", len(got))
	}
	if n := len(x.due); n > 120 {
		t.Fatalf("%d entries in memory at 50 min, want at most the next horizon's", n)
	}
}

func TestSyncedEntriesSurviveACrash(t *testing.T) {
	c := &fakeNow{t0}
	dir := t.TempDir()
	fsys := errorfs.New(vfs.Default)
	x := open(t, fsys, dir, c)
	x.Add(1, ms(t0, 2*time.Hour))
	x.Add(2, ms(t0, 2*time.Hour))
	x.Add(3, ms(t0, 3*time.Hour))
	if err := x.Sync(); err != nil {
		t.Fatal(err)
	}
	x.Add(4, ms(t0, 2*time.Hour)) // never synced: a crash may drop it
	if err := fsys.LoseUnsyncedWrites(); err != nil {
		t.Fatal(err)
	}
	y := open(t, fsys, dir, c)
	if st := y.Stats(); st.Waiting != 3 {
		t.Fatalf("after the crash %d waiting, want the 3 synced", st.Waiting)
	}
	c.add(3 * time.Hour)
	got, _ := y.Pop(10)
	if !slices.Equal(offsets(got), []uint64{1, 2, 3}) {
		t.Fatalf("after the crash popped %v, want [1 2 3]", offsets(got))
	}
}

// The bucket files are fsynced only at a checkpoint; the journal carries
// what a crash took from them.
func TestJournalReplaysWhatBucketsLost(t *testing.T) {
	c := &fakeNow{t0}
	dir := t.TempDir()
	fsys := errorfs.New(vfs.Default)
	x := open(t, fsys, dir, c)
	x.Add(1, ms(t0, 2*time.Hour))
	if err := x.Sync(); err != nil {
		t.Fatal(err)
	}
	// Lose the bucket file's write only, as a crash before its fsync may.
	bucket := filepath.Join(dir, "")
	ents, _ := os.ReadDir(bucket)
	for _, e := range ents {
		if strings.HasPrefix(e.Name(), BucketPrefix) {
			if err := os.Truncate(filepath.Join(dir, e.Name()), 7); err != nil { // a torn entry
				t.Fatal(err)
			}
		}
	}
	y := open(t, vfs.Default, dir, c)
	c.add(3 * time.Hour)
	if got, _ := y.Pop(10); !slices.Equal(offsets(got), []uint64{1}) {
		t.Fatalf("popped %v, want [1] replayed from the journal", offsets(got))
	}
}

func TestSettledEntriesDoNotComeBack(t *testing.T) {
	c := &fakeNow{t0}
	dir := t.TempDir()
	x := open(t, nil, dir, c)
	x.Add(1, ms(t0, 10*time.Second))
	x.Add(2, ms(t0, 10*time.Second))
	c.add(time.Minute)
	got, _ := x.Pop(10)
	if len(got) != 2 {
		t.Fatalf("popped %v", got)
	}
	x.Settle(got[0])
	if err := x.Sync(); err != nil {
		t.Fatal(err)
	}
	x.Close()
	y := open(t, nil, dir, c)
	got, _ = y.Pop(10)
	if !slices.Equal(offsets(got), []uint64{2}) {
		t.Fatalf("after reopen popped %v, want only the unsettled [2]", offsets(got))
	}
	y.Settle(got[0])
	if st := y.Stats(); st.Waiting != 0 || st.Out != 0 {
		t.Fatalf("stats %+v after settling everything", st)
	}
}

// A bucket whose every add is settled loses its file at a checkpoint.
func TestSettledBucketIsRemoved(t *testing.T) {
	c := &fakeNow{t0}
	dir := t.TempDir()
	x, err := Open(Options{Dir: dir, Now: c.now, CheckpointBytes: 1})
	if err != nil {
		t.Fatal(err)
	}
	x.Add(1, ms(t0, 10*time.Second))
	if err := x.Sync(); err != nil {
		t.Fatal(err)
	}
	c.add(2 * time.Minute)
	got, _ := x.Pop(10)
	x.Settle(got[0])
	if err := x.Sync(); err != nil {
		t.Fatal(err)
	}
	ents, _ := os.ReadDir(dir)
	for _, e := range ents {
		if strings.HasPrefix(e.Name(), BucketPrefix) {
			t.Fatalf("bucket file %s left after every add in it was settled", e.Name())
		}
	}
	if st := x.Stats(); st.Buckets != 0 {
		t.Fatalf("%d buckets in memory, want 0", st.Buckets)
	}
}

// An entry added twice (deferred again after a crash rewound the
// frontier) is one entry: popped once, settled once.
func TestDuplicateAddIsOneEntry(t *testing.T) {
	c := &fakeNow{t0}
	dir := t.TempDir()
	x := open(t, nil, dir, c)
	x.Add(5, ms(t0, time.Hour))
	x.Add(5, ms(t0, time.Hour))
	if err := x.Sync(); err != nil {
		t.Fatal(err)
	}
	x.Close()
	y := open(t, nil, dir, c)
	c.add(time.Hour)
	got, _ := y.Pop(10)
	if len(got) != 1 {
		t.Fatalf("popped %v, want one entry", got)
	}
	y.Settle(got[0])
	if st := y.Stats(); st.Waiting != 0 || st.Out != 0 {
		t.Fatalf("stats %+v, want nothing left", st)
	}
}

func TestFailedSyncKeepsEntriesPending(t *testing.T) {
	c := &fakeNow{t0}
	dir := t.TempDir()
	fsys := errorfs.New(vfs.Default)
	x := open(t, fsys, dir, c)
	x.Add(1, ms(t0, time.Hour))
	in := fsys.Inject(errorfs.Rule{Ops: errorfs.OpSync, Path: JournalName, Times: 1, Err: os.ErrInvalid})
	if err := x.Sync(); err == nil {
		t.Fatal("Sync succeeded with its journal fsync failing")
	}
	in.Remove()
	if err := x.Sync(); err != nil {
		t.Fatal(err)
	}
	if err := fsys.LoseUnsyncedWrites(); err != nil {
		t.Fatal(err)
	}
	y := open(t, fsys, dir, c)
	if st := y.Stats(); st.Waiting != 1 {
		t.Fatalf("waiting %d after a retried Sync and a crash, want 1", st.Waiting)
	}
}

func TestLowBoundsLiveEntries(t *testing.T) {
	c := &fakeNow{t0}
	x := open(t, nil, t.TempDir(), c)
	if _, ok := x.Low(); ok {
		t.Fatal("an empty index has a low offset")
	}
	x.Add(40, ms(t0, time.Hour))
	x.Add(30, ms(t0, 2*time.Hour))
	if low, ok := x.Low(); !ok || low > 30 {
		t.Fatalf("low %d %v, want at most 30", low, ok)
	}
}

func TestClearRemovesEverything(t *testing.T) {
	c := &fakeNow{t0}
	dir := t.TempDir()
	x := open(t, nil, dir, c)
	x.Add(1, ms(t0, time.Hour))
	if err := x.Sync(); err != nil {
		t.Fatal(err)
	}
	if err := x.Clear(); err != nil {
		t.Fatal(err)
	}
	y := open(t, nil, dir, c)
	if st := y.Stats(); st.Waiting != 0 {
		t.Fatalf("waiting %d after Clear", st.Waiting)
	}
}

// Low follows adds and settles: it rises when the lowest entry's bucket
// empties, and falls with a lower add.
func TestLowFollowsSettles(t *testing.T) {
	c := &fakeNow{t0}
	x := open(t, nil, t.TempDir(), c)
	x.Add(10, ms(t0, time.Second))
	x.Add(50, ms(t0, 2*time.Hour))
	if low, _ := x.Low(); low != 10 {
		t.Fatalf("low %d, want 10", low)
	}
	c.add(time.Minute)
	got, _ := x.Pop(10)
	x.Settle(got[0])
	if low, ok := x.Low(); !ok || low != 50 {
		t.Fatalf("after settling 10: low %d %v, want 50", low, ok)
	}
	x.Add(5, ms(t0, 3*time.Hour))
	if low, _ := x.Low(); low != 5 {
		t.Fatalf("after adding 5: low %d, want 5", low)
	}
}
