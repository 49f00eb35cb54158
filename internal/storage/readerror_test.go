package storage

// A failed read is an error for the step that made it, never damage or
// absence (doc.go): each test here fails a read (errorfs, EIO) where a
// decision follows it and checks that nothing is cut, skipped, deleted or
// left out.

import (
	"bytes"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/narad-io/narad/internal/clock"
	"github.com/narad-io/narad/internal/vfs"
	"github.com/narad-io/narad/internal/vfs/errorfs"
)

// TestRecoveryReadErrorLosesNothing: a read that fails (EIO) while Open
// scans the active segment says nothing about its bytes. Taking it for a
// torn or damaged frame would truncate fsynced records, or open the log
// short of them; Open must fail instead, change nothing, and a later Open
// on a disk that answers must find every record.
func TestRecoveryReadErrorLosesNothing(t *testing.T) {
	for _, c := range []struct {
		name  string
		times int
		hwm   bool // the hwm file names every record (a clean close)
	}{
		{"every read fails, hwm current", 0, true},
		{"first read fails, hwm current", 1, true},
		{"every read fails, hwm behind", 0, false},
		{"first read fails, hwm behind", 1, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			l := openT(t, dir, Options{})
			for f := 0; f < 3; f++ {
				if _, err := l.Commit(recs(fmt.Sprint("f", f), 4, false)); err != nil {
					t.Fatal(err)
				}
			}
			l.Close()
			if !c.hwm {
				// As after a SIGKILL before the hwm file caught up: it
				// claims nothing, the segment holds every record.
				if err := vfs.WriteFileAtomic(vfs.Default, filepath.Join(dir, hwmFileName), encodeHWM(HWMFile{})); err != nil {
					t.Fatal(err)
				}
			}
			fsys := errorfs.New(vfs.Default)
			fsys.Inject(errorfs.Rule{Ops: errorfs.OpRead, Path: ".log", Times: c.times, Err: syscall.EIO})
			shortfalls := 0
			if l2, err := Open(dir, Options{FS: fsys, Hooks: Hooks{Shortfall: func() { shortfalls++ }}}); err == nil {
				got := len(readAll(t, l2, 0))
				l2.Close()
				if got != 12 || shortfalls != 0 {
					t.Fatalf("opened under a read error: %d records, %d shortfalls; want 12 and none (or an error)", got, shortfalls)
				}
			} else if !errors.Is(err, syscall.EIO) {
				t.Fatalf("open under a read error: %v, want the EIO", err)
			}
			l3 := openT(t, dir, Options{Hooks: Hooks{Shortfall: func() { shortfalls++ }}})
			defer l3.Close()
			if got := readAll(t, l3, 0); len(got) != 12 || shortfalls != 0 {
				t.Fatalf("after the fault: %d records, %d shortfalls; want 12 and none", len(got), shortfalls)
			}
		})
	}
}

// TestClaimFileReadErrorFailsOpen: the hwm and consumer.offset files are
// what recovery checks the segments against. A read of either that fails
// (EIO) must fail the Open, not count as "no claim" (which lets a damaged
// acknowledged tail pass for a torn one, or a frontier drop to zero);
// once the disk answers, the log opens whole with its frontier.
func TestClaimFileReadErrorFailsOpen(t *testing.T) {
	for _, name := range []string{hwmFileName, ConsumerOffsetFile} {
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			l := openT(t, dir, Options{})
			if _, err := l.Commit(recs("a", 5, false)); err != nil {
				t.Fatal(err)
			}
			l.Close()
			if err := WriteOffsetFile(filepath.Join(dir, ConsumerOffsetFile), 3); err != nil {
				t.Fatal(err)
			}
			fsys := errorfs.New(vfs.Default)
			fsys.Inject(errorfs.Rule{Ops: errorfs.OpRead, Path: string(filepath.Separator) + name, Err: syscall.EIO})
			if l2, err := Open(dir, Options{FS: fsys}); err == nil {
				l2.Close()
				t.Fatalf("Open succeeded while %s could not be read", name)
			} else if !errors.Is(err, syscall.EIO) {
				t.Fatalf("Open: %v, want the EIO", err)
			}
			l3 := openT(t, dir, Options{})
			defer l3.Close()
			if got := len(readAll(t, l3, 0)); got != 5 {
				t.Fatalf("after the fault: %d records, want 5", got)
			}
			if f, ok, err := ReadOffsetFile(filepath.Join(dir, ConsumerOffsetFile)); err != nil || !ok || f != 3 {
				t.Fatalf("frontier after the fault: %d %v %v, want 3", f, ok, err)
			}
		})
	}
}

// TestRetentionReadErrorDeletesNothingYoung: retention dates a sealed
// segment by its newest record. A read that fails while finding it must
// not date the segment by an older frame the walk did reach (and delete
// records still inside retention): the pass fails, and keeps the segment.
func TestRetentionReadErrorDeletesNothingYoung(t *testing.T) {
	dir := t.TempDir()
	clk := clock.NewFake(time.UnixMilli(1_000_000))
	l := openT(t, dir, Options{Now: clk.Now})
	for i := 0; i < 5; i++ { // one frame each: 0 and 1 old, 2..4 young
		if i == 2 {
			clk.Set(time.UnixMilli(5_000_000))
		}
		commitT(t, l, recs(fmt.Sprint("r", i), 1, false))
	}
	if _, err := l.roll(); err != nil {
		t.Fatal(err)
	}
	commitT(t, l, recs("active", 1, false))
	l.Close()

	fsys := errorfs.New(vfs.Default)
	l = openT(t, dir, Options{Now: clk.Now, FS: fsys})
	defer l.Close()
	// The index walk (5 header reads) succeeds; the seek's first header
	// read fails; the walk after it reads two headers and then fails.
	seg := string(filepath.Separator) + segmentName(0)
	fsys.Inject(errorfs.Rule{Ops: errorfs.OpRead, Path: seg, After: 5, Times: 1, Err: syscall.EIO})
	fsys.Inject(errorfs.Rule{Ops: errorfs.OpRead, Path: seg, After: 8, Times: 1, Err: syscall.EIO})
	res, err := l.ApplyRetention(3_000_000) // cutoff 2,000,000
	if err == nil && res.Records > 0 {
		t.Fatalf("retention under a read error deleted %d records, of which %d were young", res.Records, res.Records-2)
	}
	fsys.Clear()
	if got := readAll(t, l, 0); len(got) != 6 {
		t.Fatalf("%d records left, want all 6", len(got))
	}
}

// TestFilesListingErrorIsNotAShorterList: a move copies the files this
// listing names and then deletes the source. A file whose lstat fails
// (EIO) must fail the listing, not drop out of it; one deleted meanwhile
// (retention) drops out.
func TestFilesListingErrorIsNotAShorterList(t *testing.T) {
	fsys := errorfs.New(vfs.Default)
	l := openT(t, t.TempDir(), Options{FS: fsys})
	defer l.Close()
	commitT(t, l, recs("a", 3, false))
	all, err := l.Files()
	if err != nil || len(all) == 0 {
		t.Fatalf("listing: %v %v", all, err)
	}
	fsys.Inject(errorfs.Rule{Ops: errorfs.OpStat, Path: string(filepath.Separator) + segmentName(0), Err: syscall.EIO})
	if files, err := l.Files(); !errors.Is(err, syscall.EIO) {
		t.Fatalf("listing with a segment that cannot be stat'ed: %v %v, want the EIO", files, err)
	}
}

// TestSourcesReadErrorFailsOpen: Open learns from the newest sourced
// frames which WAL records the log holds, so that re-dispatch skips them.
// A read of those frames that fails must fail the Open: sources missed
// would have the WAL commit the same records again, at new offsets.
func TestSourcesReadErrorFailsOpen(t *testing.T) {
	dir := t.TempDir()
	l := openT(t, dir, Options{})
	if _, _, err := l.CommitFrom(recs("a", 3, false), Source{Origin: 7, Seqs: []uint64{1, 2, 3}}); err != nil {
		t.Fatal(err)
	}
	if _, err := l.roll(); err != nil { // the active segment holds no source
		t.Fatal(err)
	}
	l.Close()
	fsys := errorfs.New(vfs.Default)
	// One failed read: the first of the sources' walk (later reads of the
	// segment, for the commit-time floor, work).
	fsys.Inject(errorfs.Rule{Ops: errorfs.OpRead, Path: string(filepath.Separator) + segmentName(0), Times: 1, Err: syscall.EIO})
	if l2, err := Open(dir, Options{FS: fsys}); err == nil {
		applied := l2.applied[7]
		l2.Close()
		t.Fatalf("Open succeeded while the sourced frames could not be read (WAL seq held: %d, want 3 or an error)", applied)
	}
	l3 := openT(t, dir, Options{})
	defer l3.Close()
	if l3.applied[7] != 3 {
		t.Fatalf("after the fault: WAL seq held %d, want 3", l3.applied[7])
	}
}

// TestSeekPastDamageReadErrorSkipsNothing: a seek that meets a damaged
// frame header hunts for the next valid frame. When that hunt's read
// fails, the seek must say so: taken for "nothing valid follows", the
// reader skipped the valid frame it was looking for as part of the
// damage (a later hunt, whose read worked, dates the damage's end past
// it).
func TestSeekPastDamageReadErrorSkipsNothing(t *testing.T) {
	dir := t.TempDir()
	l := openT(t, dir, Options{})
	for f := 0; f < 3; f++ { // frames of two: 0-1, 2-3, 4-5
		commitT(t, l, recs(fmt.Sprint("f", f), 2, false))
	}
	if _, err := l.roll(); err != nil { // sealed: damage in it is skipped, not refused
		t.Fatal(err)
	}
	commitT(t, l, recs("active", 1, false)) // Open dates the log by this one, not by the sealed segment
	l.Close()
	damageSecondFrame(t, dir, 0) // its magic: the header does not parse
	fsys := errorfs.New(vfs.Default)
	l = openT(t, dir, Options{FS: fsys})
	defer l.Close()
	// Reads of the sealed segment: the index walk (frame 0's header, frame
	// 1's), the seek (the same two), then the hunt past frame 1: that one
	// fails. (Without the failure the hunt indexes frame 2.)
	fsys.Inject(errorfs.Rule{Ops: errorfs.OpRead, Path: string(filepath.Separator) + segmentName(0), After: 4, Times: 1, Err: syscall.EIO})
	res, err := l.Read(4, 10, 1<<20, NoDueLimit)
	if err == nil && (res.Skipped > 0 || len(res.Records) == 0) {
		t.Fatalf("read of offset 4 under a failed hunt: %+v; want the error, or the records", res)
	}
	res, err = l.Read(4, 2, 1<<20, NoDueLimit)
	if err != nil || res.Skipped != 0 || len(res.Records) != 2 || res.Records[0].Offset != 4 {
		t.Fatalf("read of offset 4 once the disk answers: %+v %v; want records 4 and 5", res, err)
	}
}

// TestRecoveryHuntReadErrorTruncatesNothing: recovery meets a bad frame in
// the active segment and hunts for a valid one after it, to tell a torn
// tail from damage in the middle. When the hunt's read fails it cannot
// tell: Open must fail and leave the file as it was — taken for "nothing
// valid follows", the valid frame after the damage was cut as a torn
// tail. Once the disk answers, Open refuses the mid-segment damage.
func TestRecoveryHuntReadErrorTruncatesNothing(t *testing.T) {
	dir := t.TempDir()
	l := openT(t, dir, Options{})
	for f := 0; f < 3; f++ {
		commitT(t, l, recs(fmt.Sprint("f", f), 2, false))
	}
	l.Close()
	if err := vfs.WriteFileAtomic(vfs.Default, filepath.Join(dir, hwmFileName), encodeHWM(HWMFile{})); err != nil {
		t.Fatal(err) // the hwm file behind, as after a SIGKILL
	}
	path := filepath.Join(dir, segmentName(0))
	b := damageSecondFrame(t, dir, FrameHeaderSize) // a byte of its records: the CRC fails
	fsys := errorfs.New(vfs.Default)
	// The scan reads the segment in one go; the hunt's read is the next.
	fsys.Inject(errorfs.Rule{Ops: errorfs.OpRead, Path: string(filepath.Separator) + segmentName(0), After: 1, Times: 1, Err: syscall.EIO})
	if l2, err := Open(dir, Options{FS: fsys}); err == nil {
		l2.Close()
		t.Fatal("Open succeeded while the hunt past a bad frame could not read")
	} else if !errors.Is(err, syscall.EIO) {
		t.Fatalf("Open: %v, want the EIO", err)
	}
	if after, err := os.ReadFile(path); err != nil || !bytes.Equal(after, b) {
		t.Fatalf("a failed Open changed the segment (%d bytes, was %d; %v)", len(after), len(b), err)
	}
	if _, err := Open(dir, Options{}); !errors.Is(err, ErrCorrupt) {
		t.Fatalf("Open once the disk answers: %v, want the mid-segment damage refused", err)
	}
}

// TestReadErrorsAreCountedEachAndLoggedOnce: every failed read is counted
// (Hooks.ReadFailed); the log line comes at most once per
// readFailLogEvery, since consumers retry at their polling rate.
func TestReadErrorsAreCountedEachAndLoggedOnce(t *testing.T) {
	var logs bytes.Buffer
	counted := 0
	fsys := errorfs.New(vfs.Default)
	l := openT(t, t.TempDir(), Options{FS: fsys, Logger: slog.New(slog.NewTextHandler(&logs, nil)),
		Hooks: Hooks{ReadFailed: func() { counted++ }}})
	defer l.Close()
	commitT(t, l, recs("a", 3, false))
	l.cache.clear() // the next reads go to the disk
	fsys.Inject(errorfs.Rule{Ops: errorfs.OpRead, Path: ".log", Err: syscall.EIO})
	for range 3 {
		if _, err := l.Read(0, 10, 1<<20, NoDueLimit); !errors.Is(err, syscall.EIO) {
			t.Fatalf("read under EIO: %v", err)
		}
	}
	if lines := strings.Count(logs.String(), "partition log read failed"); counted != 3 || lines != 1 {
		t.Fatalf("3 failed reads: counted %d, logged %d times; want 3 and 1", counted, lines)
	}
}

// damageSecondFrame flips the byte at off within the second frame of
// dir's first segment and returns the file as it now is.
func damageSecondFrame(t *testing.T, dir string, off int64) []byte {
	t.Helper()
	path := filepath.Join(dir, segmentName(0))
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	h, err := parseHeader(b)
	if err != nil {
		t.Fatal(err)
	}
	b[h.frameLen()+off] ^= 0xff
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
	return b
}
