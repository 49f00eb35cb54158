package wal

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/narad-io/narad/internal/testutil"
	"github.com/narad-io/narad/internal/vfs"
	"github.com/narad-io/narad/internal/vfs/errorfs"
)

// ledger remembers every record whose Append returned nil, so a test can
// check after a reopen that exactly those are on disk: none lost, and none
// of a failed group sneaked in.
type ledger struct {
	mu    sync.Mutex
	acked map[uint64]Record
	n     int // records ever offered, for unique payloads
}

func newLedger() *ledger { return &ledger{acked: map[uint64]Record{}} }

// append offers count fresh records in one Append and returns its error.
func (l *ledger) append(w *WAL, count int) error {
	l.mu.Lock()
	recs := make([]Record, count)
	for i := range recs {
		recs[i] = testRecord(l.n)
		recs[i].Payload = []byte(fmt.Sprintf("ledger-%d", l.n))
		l.n++
	}
	l.mu.Unlock()
	err := w.Append(context.Background(), recs)
	if err == nil {
		l.mu.Lock()
		for _, r := range recs {
			l.acked[r.Seq] = r
		}
		l.mu.Unlock()
	}
	return err
}

func (l *ledger) mustAppend(t *testing.T, w *WAL, count int) {
	t.Helper()
	if err := l.append(w, count); err != nil {
		t.Fatalf("Append: %v", err)
	}
}

// check reads w from seq 1 and requires exactly the acknowledged records,
// at contiguous seqs from 1.
func (l *ledger) check(t *testing.T, w *WAL) {
	t.Helper()
	l.mu.Lock()
	defer l.mu.Unlock()
	got := readAll(t, w, 1)
	if len(got) != len(l.acked) {
		t.Fatalf("read %d records, %d were acknowledged", len(got), len(l.acked))
	}
	for i, r := range got {
		want, ok := l.acked[r.Seq]
		if r.Seq != uint64(i+1) || !ok || !sameRecord(r, want) {
			t.Fatalf("record %d: seq %d %q, want seq %d %q (acknowledged: %v)", i, r.Seq, r.Payload, i+1, want.Payload, ok)
		}
	}
}

// reopenAndCheck closes w, opens dir on the real disk and checks the
// ledger there: what survives is what is on disk, not in memory.
func (l *ledger) reopenAndCheck(t *testing.T, w *WAL, dir string) {
	t.Helper()
	if err := w.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	w2 := openT(t, dir, Options{})
	l.check(t, w2)
	w2.Close()
}

func faultyWAL(t *testing.T, opts Options) (*WAL, *errorfs.FS, string) {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "ingress")
	efs := errorfs.New(vfs.Default)
	opts.FS = efs
	if opts.HealInterval == 0 {
		opts.HealInterval = time.Millisecond
	}
	return openT(t, dir, opts), efs, dir
}

// ENOSPC on a write fails that group only: the WAL is not fenced, every
// later append is tried, and they succeed once space exists again, in a
// fresh segment, with seqs that continue where the acknowledged ones end.
func TestNoSpaceOnWriteFailsTheGroupAndResumesOnceSpaceExists(t *testing.T) {
	for _, torn := range []float64{0, 0.6} {
		t.Run(fmt.Sprintf("torn=%v", torn), func(t *testing.T) {
			w, efs, dir := faultyWAL(t, Options{})
			l := newLedger()
			for range 5 {
				l.mustAppend(t, w, 3)
			}
			full := efs.Inject(errorfs.Rule{Ops: errorfs.OpWrite, Path: segmentSuffix, Err: syscall.ENOSPC, Torn: torn})
			for range 3 {
				err := l.append(w, 4)
				for _, want := range []error{ErrNoSpace, ErrFailed, syscall.ENOSPC} {
					mustErrIs(t, err, want)
				}
				if h := w.Health(); h != nil {
					t.Fatalf("Health = %v on a full disk; want nil (appends keep being tried)", h)
				}
			}
			if w.LastSeq() != 15 {
				t.Fatalf("LastSeq %d after failed groups, want 15", w.LastSeq())
			}
			full.Remove()
			for range 5 {
				l.mustAppend(t, w, 2)
			}
			if w.LastSeq() != 25 {
				t.Fatalf("LastSeq %d, want 25: failed seqs are handed out again", w.LastSeq())
			}
			l.check(t, w)
			if n := len(segmentFiles(t, dir)); n != 2 {
				t.Fatalf("%d segment files, want 2 (the sealed one and a fresh one)", n)
			}
			l.reopenAndCheck(t, w, dir)
		})
	}
}

// A failed fdatasync (EIO, or ENOSPC from the writeback) fences the WAL:
// appends are refused at once and Health says so, until the syncer has
// re-read the active segment from disk, cut it at its durable end and
// started a fresh one. The pages the kernel lost are the failed group's
// only.
func TestFailedFdatasyncFencesThenHealsFromWhatIsOnDisk(t *testing.T) {
	for _, errno := range []syscall.Errno{syscall.EIO, syscall.ENOSPC} {
		t.Run(errno.Error(), func(t *testing.T) {
			w, efs, dir := faultyWAL(t, Options{HealInterval: time.Hour})
			l := newLedger()
			for range 4 {
				l.mustAppend(t, w, 5)
			}
			bad := efs.Inject(errorfs.Rule{Ops: errorfs.OpSync, Path: segmentSuffix, Times: 1, Err: errno, LoseUnsynced: true})
			err := l.append(w, 3)
			mustErrIs(t, err, ErrFenced)
			mustErrIs(t, err, errno)
			mustErrIs(t, w.Health(), ErrFenced)
			// Fenced: refused before staging, the disk is not even asked.
			mustErrIs(t, l.append(w, 1), ErrFenced)
			if bad.Fired() != 1 {
				t.Fatalf("the sync rule fired %d times, want 1", bad.Fired())
			}
			w.mu.Lock()
			w.nextHeal = time.Time{} // due now
			w.mu.Unlock()
			testutil.WaitFor(t, "the fence to lift", func() bool { return w.Health() == nil })
			if w.Heals() != 1 || w.Fences() != 1 {
				t.Fatalf("fences %d heals %d, want 1 and 1", w.Fences(), w.Heals())
			}
			for range 3 {
				l.mustAppend(t, w, 2)
			}
			l.check(t, w)
			l.reopenAndCheck(t, w, dir)
		})
	}
}

// A heal that cannot complete (the disk still fails) keeps the fence and
// tries again; it lifts once the disk answers.
func TestHealRetriesWhileTheDiskKeepsFailing(t *testing.T) {
	w, efs, dir := faultyWAL(t, Options{})
	l := newLedger()
	l.mustAppend(t, w, 10)
	bad := efs.Inject(errorfs.Rule{Ops: errorfs.OpSync, Path: segmentSuffix, Err: syscall.EIO})
	mustErrIs(t, l.append(w, 1), ErrFenced)
	// Every heal fsyncs the sealed file and fails again.
	testutil.WaitFor(t, "three failed heal attempts", func() bool { return bad.Fired() >= 4 })
	mustErrIs(t, w.Health(), ErrFenced)
	if w.Heals() != 0 {
		t.Fatalf("healed %d times while every fsync failed", w.Heals())
	}
	bad.Remove()
	testutil.WaitFor(t, "the fence to lift", func() bool { return w.Health() == nil })
	l.mustAppend(t, w, 4)
	l.check(t, w)
	l.reopenAndCheck(t, w, dir)
}

// If the re-read finds acknowledged records damaged, the fence stays: the
// WAL never resumes over lost data, and a restart refuses to open, naming
// the file.
func TestHealThatFindsDamageKeepsTheFence(t *testing.T) {
	w, efs, dir := faultyWAL(t, Options{HealInterval: time.Hour})
	l := newLedger()
	l.mustAppend(t, w, 10)
	efs.Inject(errorfs.Rule{Ops: errorfs.OpSync, Path: segmentSuffix, Times: 1, Err: syscall.EIO})
	mustErrIs(t, l.append(w, 1), ErrFenced)
	seg := filepath.Join(dir, segmentName(1))
	f, err := os.OpenFile(seg, os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteAt([]byte("rot"), 40); err != nil { // inside the first records
		t.Fatal(err)
	}
	f.Close()
	w.mu.Lock()
	w.nextHeal = time.Time{}
	w.mu.Unlock()
	testutil.WaitFor(t, "the heal to find the damage", func() bool {
		w.mu.Lock()
		defer w.mu.Unlock()
		return w.broken
	})
	err = w.Health()
	mustErrIs(t, err, ErrFenced)
	mustErrIs(t, err, ErrCorrupt)
	mustErrIs(t, l.append(w, 1), ErrFenced)
	w.Close()
	_, err = Open(dir, Options{})
	var ce *CorruptError
	if !errors.As(err, &ce) || ce.Path != seg {
		t.Fatalf("reopen = %v, want a CorruptError naming %s", err, seg)
	}
}

// A segment create that fails at rotation leaves the full segment active:
// nothing is refused, and rotation happens once creates work again. A
// failed directory fsync at rotation fences (which entries are durable is
// unknown) and heals.
func TestSegmentCreateFailureAtRotation(t *testing.T) {
	for _, errno := range []syscall.Errno{syscall.ENOSPC, syscall.EIO} {
		t.Run("create "+errno.Error(), func(t *testing.T) {
			w, efs, dir := faultyWAL(t, Options{SegmentBytes: 512})
			l := newLedger()
			l.mustAppend(t, w, 2)
			noCreate := efs.Inject(errorfs.Rule{Ops: errorfs.OpOpen, Path: segmentSuffix, Err: errno})
			for range 20 {
				l.mustAppend(t, w, 2) // each crosses SegmentBytes and tries to rotate
			}
			if noCreate.Fired() == 0 {
				t.Fatal("no rotation was attempted")
			}
			if h := w.Health(); h != nil {
				t.Fatalf("Health = %v after a failed create; want nil", h)
			}
			before := len(segmentFiles(t, dir))
			noCreate.Remove()
			l.mustAppend(t, w, 2)
			// Rotation runs after the appenders are released.
			testutil.WaitFor(t, "a rotation once creates work again", func() bool { return len(segmentFiles(t, dir)) > before })
			l.check(t, w)
			l.reopenAndCheck(t, w, dir)
		})
	}
	for _, errno := range []syscall.Errno{syscall.ENOSPC, syscall.EIO} {
		t.Run("directory sync "+errno.Error(), func(t *testing.T) {
			w, efs, dir := faultyWAL(t, Options{SegmentBytes: 512})
			l := newLedger()
			for w.activeOff < 400 {
				l.mustAppend(t, w, 1)
			}
			// The next append's fdatasync is the first matching sync, the
			// rotation's directory fsync the second.
			efs.Inject(errorfs.Rule{Ops: errorfs.OpSync, Path: filepath.Base(dir), After: 1, Times: 1, Err: errno})
			l.mustAppend(t, w, 8) // durable before the rotation fails
			testutil.WaitFor(t, "the fence", func() bool { return errors.Is(w.Health(), ErrFenced) })
			testutil.WaitFor(t, "the heal", func() bool { return w.Health() == nil })
			l.mustAppend(t, w, 3)
			l.check(t, w)
			l.reopenAndCheck(t, w, dir)
		})
	}
}

// After a full disk sealed the active segment, the next batch must create
// a fresh one; while that fails, appends fail and nothing is lost.
func TestFreshSegmentCreateFailsWhileTheDiskIsFull(t *testing.T) {
	w, efs, dir := faultyWAL(t, Options{})
	l := newLedger()
	l.mustAppend(t, w, 6)
	full := efs.Inject(errorfs.Rule{Ops: errorfs.OpWrite, Path: segmentSuffix, Err: syscall.ENOSPC, Torn: 0.5})
	mustErrIs(t, l.append(w, 2), ErrNoSpace)
	noCreate := efs.Inject(errorfs.Rule{Ops: errorfs.OpOpen, Path: segmentName(7), Err: syscall.ENOSPC})
	full.Remove()
	for range 3 {
		mustErrIs(t, l.append(w, 2), ErrNoSpace)
	}
	if noCreate.Fired() != 3 {
		t.Fatalf("fresh segment create tried %d times, want 3 (once per batch)", noCreate.Fired())
	}
	noCreate.Remove()
	l.mustAppend(t, w, 2)
	l.check(t, w)
	l.reopenAndCheck(t, w, dir)
}

// Checkpoint failures (create, write, fsync, rename of the temp file, the
// directory fsync) fail that SetCheckpoint only: the checkpoint in memory
// stays where it was, appends go on, and the next SetCheckpoint after the
// fault succeeds; a reopen sees a checkpoint that never passed what it
// was told.
func TestCheckpointFailuresAreNotSticky(t *testing.T) {
	cases := []struct {
		name string
		rule errorfs.Rule
	}{
		{"create", errorfs.Rule{Ops: errorfs.OpOpen, Path: checkpointTmpName}},
		{"write", errorfs.Rule{Ops: errorfs.OpWrite, Path: checkpointTmpName}},
		{"sync", errorfs.Rule{Ops: errorfs.OpSync, Path: checkpointTmpName}},
		{"rename", errorfs.Rule{Ops: errorfs.OpRename, Path: checkpointTmpName}},
	}
	for _, tc := range cases {
		for _, errno := range []syscall.Errno{syscall.ENOSPC, syscall.EIO} {
			t.Run(tc.name+" "+errno.Error(), func(t *testing.T) {
				w, efs, dir := faultyWAL(t, Options{})
				l := newLedger()
				l.mustAppend(t, w, 10)
				if err := w.SetCheckpoint(3); err != nil {
					t.Fatal(err)
				}
				rule := tc.rule
				rule.Err = errno
				in := efs.Inject(rule)
				mustErrIs(t, w.SetCheckpoint(6), errno)
				if w.Checkpoint() != 3 {
					t.Fatalf("checkpoint %d after a failed SetCheckpoint, want 3", w.Checkpoint())
				}
				l.mustAppend(t, w, 2)
				in.Remove()
				if err := w.SetCheckpoint(6); err != nil {
					t.Fatalf("SetCheckpoint after the fault: %v", err)
				}
				w.Close()
				w2 := openT(t, dir, Options{})
				if w2.Checkpoint() != 6 {
					t.Fatalf("checkpoint %d after reopen, want 6", w2.Checkpoint())
				}
				got := readAll(t, w2, 6)
				if len(got) != 7 || got[0].Seq != 6 || !sameRecord(got[0], l.acked[6]) {
					t.Fatalf("after reopen read %d records from 6, want seqs 6..12", len(got))
				}
			})
		}
	}
}

// A failed read is reported (not as corruption) and the next Read, with
// the disk back, returns everything.
func TestReadFailureIsNotSticky(t *testing.T) {
	for _, errno := range []syscall.Errno{syscall.EIO, syscall.ENOSPC} {
		t.Run(errno.Error(), func(t *testing.T) {
			w, efs, _ := faultyWAL(t, Options{})
			l := newLedger()
			for range 4 {
				l.mustAppend(t, w, 5)
			}
			efs.Inject(errorfs.Rule{Ops: errorfs.OpRead, Path: segmentSuffix, Times: 1, Err: errno})
			_, err := w.Read(1, 100, 0)
			mustErrIs(t, err, errno)
			if errors.Is(err, ErrCorrupt) {
				t.Fatalf("a read error reported as corruption: %v", err)
			}
			if h := w.Health(); h != nil {
				t.Fatalf("a read error fenced the WAL: %v", h)
			}
			l.check(t, w)
		})
	}
}

// Concurrent appenders across full-disk spells and a failed fdatasync:
// every acknowledged record survives a reopen, no failed one appears.
func TestConcurrentAppendsAcrossFailuresLoseNothingAcknowledged(t *testing.T) {
	w, efs, dir := faultyWAL(t, Options{SegmentBytes: 4 << 10})
	l := newLedger()
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			for {
				select {
				case <-stop:
					return
				default:
				}
				_ = l.append(w, 3)
			}
		})
	}
	acked := func() int { l.mu.Lock(); defer l.mu.Unlock(); return len(l.acked) }
	spell := func(r errorfs.Rule) {
		base := w.Failures()
		in := efs.Inject(r)
		t.Logf("spell %+v: failures %d", r, base)
		testutil.WaitFor(t, "failed groups", func() bool { return w.Failures() >= base+2 || (r.Times > 0 && in.Fired() >= r.Times) })
		in.Remove()
		n := acked()
		testutil.WaitFor(t, "appends to succeed again", func() bool { return acked() >= n+50 })
	}
	spell(errorfs.Rule{Ops: errorfs.OpWrite, Path: segmentSuffix, Err: syscall.ENOSPC, Torn: 0.5})
	spell(errorfs.Rule{Ops: errorfs.OpSync, Path: segmentSuffix, Times: 1, Err: syscall.EIO, LoseUnsynced: true})
	spell(errorfs.Rule{Ops: errorfs.OpWrite | errorfs.OpOpen, Path: segmentSuffix, Err: syscall.ENOSPC})
	close(stop)
	wg.Wait()
	l.check(t, w)
	l.reopenAndCheck(t, w, dir)
}
