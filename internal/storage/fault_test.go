package storage

import (
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/narad-io/narad/internal/vfs"
	"github.com/narad-io/narad/internal/vfs/errorfs"
)

// ENOSPC and EIO through errorfs on each write path of the partition log:
// what the log answers, what it does next (the sticky-failure rule of
// fence.go), how it recovers once the fault heals, and that nothing
// acknowledged is lost — checked by reopening on the real disk.

func faultyLog(t *testing.T, opts Options) (*Log, *errorfs.FS, string) {
	t.Helper()
	fsys := errorfs.New(vfs.Default)
	dir := t.TempDir()
	opts.FS = fsys
	return openT(t, dir, opts), fsys, dir
}

// reopenedPayloads closes l and reads dir back through the real disk.
func reopenedPayloads(t *testing.T, l *Log, dir string) []string {
	t.Helper()
	l.Close()
	l2 := openT(t, dir, Options{})
	defer l2.Close()
	var out []string
	for _, r := range readAll(t, l2, 0) {
		out = append(out, string(r.Payload))
	}
	return out
}

func wantPayloads(t *testing.T, got []string, want ...string) {
	t.Helper()
	if strings.Join(got, ",") != strings.Join(want, ",") {
		t.Fatalf("records %v, want %v", got, want)
	}
}

// noPath checks that what a client may see of err names no path.
func noPath(t *testing.T, err error, dir string) {
	t.Helper()
	var ioe *IOError
	if !errors.As(err, &ioe) {
		t.Fatalf("%v is not an *IOError", err)
	}
	if r := ioe.Reason(); strings.Contains(r, dir) || strings.Contains(r, segmentSuffix) {
		t.Fatalf("Reason %q names a path", r)
	}
}

// A failed write (before any fdatasync) is undone and may be retried: the
// log is not fenced, and commits succeed again once space exists.
func TestWriteFailureIsUndoneAndRetried(t *testing.T) {
	for _, errno := range []syscall.Errno{syscall.ENOSPC, syscall.EIO} {
		t.Run(errno.Error(), func(t *testing.T) {
			l, fsys, dir := faultyLog(t, Options{})
			commitT(t, l, recs("a", 3, false))
			_, size := l.Published()
			full := fsys.Inject(errorfs.Rule{Ops: errorfs.OpWrite, Path: ".log", Err: errno, Torn: 0.5})
			for i := 0; i < 2; i++ {
				_, err := l.Commit(recs("b", 3, false))
				if !errors.Is(err, errno) || errors.Is(err, ErrFenced) || l.Fenced() {
					t.Fatalf("commit on a failing disk: %v (fenced %v); want %v, not fenced", err, l.Fenced(), errno)
				}
				noPath(t, err, dir)
			}
			if got := fileSize(t, filepath.Join(dir, segmentName(0))); got != size {
				t.Fatalf("the torn write was not undone: %d bytes, verified %d", got, size)
			}
			full.Remove() // space was freed
			if b := commitT(t, l, recs("c", 1, false)); b != 3 {
				t.Fatalf("commit after the fault healed at %d, want 3", b)
			}
			wantPayloads(t, reopenedPayloads(t, l, dir), "a-0", "a-1", "a-2", "c-0")
		})
	}
}

// A failed fdatasync, or a read-back that fails or returns other bytes,
// fences the log: commits are refused even after the fault is gone, the
// verified records stay readable, and Recover resumes in a fresh segment
// file, never writing the fenced one again. Other bytes are refused
// whether or not they make frames that check (reframe).
func TestSyncOrVerifyFailureFences(t *testing.T) {
	for _, c := range []struct {
		name string
		rule errorfs.Rule
		want error
	}{
		{"fdatasync EIO, pages lost", errorfs.Rule{Ops: errorfs.OpSync, Path: ".log", Times: 1, Err: syscall.EIO, LoseUnsynced: true}, syscall.EIO},
		{"fdatasync ENOSPC", errorfs.Rule{Ops: errorfs.OpSync, Path: ".log", Times: 1, Err: syscall.ENOSPC}, syscall.ENOSPC},
		{"read-back EIO", errorfs.Rule{Ops: errorfs.OpRead, Path: ".log", Times: 1, Err: syscall.EIO}, syscall.EIO},
		{"read-back other bytes", errorfs.Rule{Ops: errorfs.OpRead, Path: ".log", Times: 1, Corrupt: true}, ErrFenced},
		{"read-back other payload bytes", errorfs.Rule{Ops: errorfs.OpRead, Path: ".log", Times: 1, Corrupt: true, CorruptAt: FrameHeaderSize + 1}, ErrFenced},
		{"read-back other frames that check", errorfs.Rule{Ops: errorfs.OpRead, Path: ".log", Times: 1, Corrupt: true, Rewrite: reframe}, ErrFenced},
	} {
		t.Run(c.name, func(t *testing.T) {
			var fences int
			l, fsys, dir := faultyLog(t, Options{Hooks: Hooks{Fenced: func() { fences++ }}})
			commitT(t, l, recs("a", 3, false))
			fenced := filepath.Join(dir, segmentName(0))
			_, verified := l.Published()
			in := fsys.Inject(c.rule)
			_, err := l.Commit(recs("b", 3, false))
			if !errors.Is(err, c.want) || !errors.Is(err, ErrFenced) || !l.Fenced() || fences != 1 {
				t.Fatalf("commit: %v (fenced %v, %d fences); want %v and fenced", err, l.Fenced(), fences, c.want)
			}
			noPath(t, err, dir)
			if in.Fired() != 1 {
				t.Fatalf("fault fired %d times", in.Fired())
			}
			// Sticky: the fault is spent, the log still refuses.
			if _, err := l.Commit(recs("c", 1, false)); !errors.Is(err, ErrFenced) {
				t.Fatalf("commit after the fault: %v, want ErrFenced", err)
			}
			if got := len(readAll(t, l, 0)); got != 3 || l.HWM() != 3 {
				t.Fatalf("fenced log reads %d records, hwm %d; want the 3 verified", got, l.HWM())
			}
			if got := fileSize(t, fenced); got != verified {
				t.Fatalf("the unverified tail was not cut: %d bytes, verified %d", got, verified)
			}
			if err := l.Recover(); err != nil || l.Fenced() {
				t.Fatalf("Recover: %v (fenced %v)", err, l.Fenced())
			}
			if b := commitT(t, l, recs("c", 1, false)); b != 3 {
				t.Fatalf("commit after Recover at %d, want 3", b)
			}
			if got := fileSize(t, fenced); got != verified {
				t.Fatalf("the fenced file was written again: %d bytes, verified %d", got, verified)
			}
			if n := len(segmentFiles(t, dir)); n != 2 {
				t.Fatalf("%d segment files, want the fenced one and a fresh one", n)
			}
			wantPayloads(t, reopenedPayloads(t, l, dir), "a-0", "a-1", "a-2", "c-0")
		})
	}
}

// A write whose undo fails too leaves bytes of unknown content: fenced, and
// Recover cuts them.
func TestFailedUndoFences(t *testing.T) {
	l, fsys, dir := faultyLog(t, Options{})
	commitT(t, l, recs("a", 2, false))
	fsys.Inject(errorfs.Rule{Ops: errorfs.OpWrite, Path: ".log", Times: 1, Err: syscall.ENOSPC, Torn: 0.5})
	fsys.Inject(errorfs.Rule{Ops: errorfs.OpTruncate, Path: ".log", Times: 1, Err: syscall.EIO})
	if _, err := l.Commit(recs("b", 2, false)); !errors.Is(err, ErrFenced) {
		t.Fatalf("commit: %v, want fenced", err)
	}
	if err := l.Recover(); err != nil {
		t.Fatal(err)
	}
	commitT(t, l, recs("c", 1, false))
	wantPayloads(t, reopenedPayloads(t, l, dir), "a-0", "a-1", "c-0")
}

// A fenced log whose recovery fails stays fenced, and Recover can be tried
// again.
func TestRecoverFailureStaysFenced(t *testing.T) {
	l, fsys, dir := faultyLog(t, Options{})
	commitT(t, l, recs("a", 1, false))
	fsys.Inject(errorfs.Rule{Ops: errorfs.OpSync, Path: ".log", Times: 1, Err: syscall.EIO})
	if _, err := l.Commit(recs("b", 1, false)); !errors.Is(err, ErrFenced) {
		t.Fatalf("commit: %v", err)
	}
	full := fsys.Inject(errorfs.Rule{Ops: errorfs.OpOpen, Path: segmentName(1), Err: syscall.ENOSPC})
	if err := l.Recover(); !errors.Is(err, syscall.ENOSPC) || !l.Fenced() {
		t.Fatalf("Recover on a full disk: %v (fenced %v)", err, l.Fenced())
	}
	full.Remove()
	if err := l.Recover(); err != nil || l.Fenced() {
		t.Fatalf("Recover once space exists: %v", err)
	}
	commitT(t, l, recs("c", 1, false))
	wantPayloads(t, reopenedPayloads(t, l, dir), "a-0", "c-0")
}

// Creating the next segment at a roll fails (full disk, or its directory
// fsync fails): the commit fails unfenced, the records before stay, and the
// roll succeeds once the fault heals — over the empty file a failed
// directory fsync left behind.
func TestSegmentCreateAtRollFails(t *testing.T) {
	for _, c := range []struct {
		name string
		rule func(dir string) errorfs.Rule
	}{
		{"create ENOSPC", func(string) errorfs.Rule {
			return errorfs.Rule{Ops: errorfs.OpOpen, Path: segmentName(1), Err: syscall.ENOSPC}
		}},
		{"directory fsync EIO", func(dir string) errorfs.Rule {
			return errorfs.Rule{Ops: errorfs.OpSync, Path: dir, Times: 1, Err: syscall.EIO}
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			l, fsys, dir := faultyLog(t, Options{SegmentBytes: 50}) // one 44-byte frame per segment
			commitT(t, l, recs("a", 1, false))
			in := fsys.Inject(c.rule(dir))
			_, err := l.Commit(recs("b", 1, false))
			if err == nil || errors.Is(err, ErrFenced) || l.Fenced() {
				t.Fatalf("commit whose roll failed: %v (fenced %v)", err, l.Fenced())
			}
			noPath(t, err, dir)
			in.Remove()
			if b := commitT(t, l, recs("b", 1, false)); b != 1 {
				t.Fatalf("commit after the fault at %d", b)
			}
			wantPayloads(t, reopenedPayloads(t, l, dir), "a-0", "b-0")
		})
	}
}

// The hwm file is rewritten whole in place: a failed write or fdatasync
// fences nothing (commits go on), is reported, and the next write heals it.
// A Close that cannot write it fails loudly, and the next Open recovers
// every record from the segments.
func TestHWMFileFaults(t *testing.T) {
	for _, rule := range []errorfs.Rule{
		{Ops: errorfs.OpWrite, Path: hwmFileName, Err: syscall.ENOSPC},
		{Ops: errorfs.OpSync, Path: hwmFileName, Err: syscall.EIO},
	} {
		t.Run(rule.Ops.String(), func(t *testing.T) {
			var failures int
			l, fsys, dir := faultyLog(t, Options{Hooks: Hooks{HWMPersistFailed: func() { failures++ }}})
			commitT(t, l, recs("a", 2, false))
			in := fsys.Inject(rule)
			if err := l.PersistHWM(2); !errors.Is(err, rule.Err) || failures != 1 {
				t.Fatalf("PersistHWM on a failing hwm file: %v (%d failures)", err, failures)
			}
			commitT(t, l, recs("b", 2, false)) // the partition keeps serving
			in.Remove()
			if err := l.PersistHWM(4); err != nil {
				t.Fatal(err)
			}
			if h, err := ReadHWMFile(dir); err != nil || h.HWM != 4 {
				t.Fatalf("hwm file after the fault healed: %+v %v", h, err)
			}
			commitT(t, l, recs("c", 1, false))
			fsys.Inject(rule)
			if err := l.Close(); !errors.Is(err, rule.Err) {
				t.Fatalf("Close with a failing hwm file: %v", err)
			}
			l2 := openT(t, dir, Options{})
			defer l2.Close()
			if l2.HWM() != 5 || len(readAll(t, l2, 0)) != 5 {
				t.Fatalf("reopened: hwm %d", l2.HWM())
			}
		})
	}
}

// Open cannot clear the hwm file's boundary: it refuses, naming the file's
// directory, and opens once the fault heals.
func TestOpenWithFailingHWMFile(t *testing.T) {
	fsys := errorfs.New(vfs.Default)
	dir := t.TempDir()
	threeFrames(t, dir)
	in := fsys.Inject(errorfs.Rule{Ops: errorfs.OpWrite, Path: hwmFileName, Err: syscall.EIO})
	if _, err := Open(dir, Options{FS: fsys}); !errors.Is(err, syscall.EIO) || !strings.Contains(err.Error(), dir) {
		t.Fatalf("Open: %v", err)
	}
	in.Remove()
	l := openT(t, dir, Options{FS: fsys})
	defer l.Close()
	if l.HWM() != 9 {
		t.Fatalf("hwm %d", l.HWM())
	}
}

// consumer.offset is replaced through a fresh temp file each time: a failed
// write, fsync or rename leaves the old value and no temp file, and the next
// attempt succeeds once the fault heals.
func TestOffsetFileFaults(t *testing.T) {
	for _, rule := range []errorfs.Rule{
		{Ops: errorfs.OpWrite, Path: ConsumerOffsetFile, Err: syscall.ENOSPC},
		{Ops: errorfs.OpSync, Path: ConsumerOffsetFile + ".tmp", Err: syscall.EIO},
		{Ops: errorfs.OpRename, Path: ConsumerOffsetFile, Err: syscall.EIO},
		{Ops: errorfs.OpOpen, Path: ConsumerOffsetFile, Err: syscall.ENOSPC},
	} {
		t.Run(rule.Ops.String(), func(t *testing.T) {
			fsys := errorfs.New(vfs.Default)
			dir := t.TempDir()
			path := filepath.Join(dir, ConsumerOffsetFile)
			if err := WriteOffsetFileFS(fsys, path, 5); err != nil {
				t.Fatal(err)
			}
			in := fsys.Inject(rule)
			if err := WriteOffsetFileFS(fsys, path, 7); !errors.Is(err, rule.Err) {
				t.Fatalf("write on a failing disk: %v", err)
			}
			if v, ok, err := ReadOffsetFile(path); v != 5 || !ok || err != nil {
				t.Fatalf("after the failed write: %d %v %v, want the old 5", v, ok, err)
			}
			if tmp, _ := filepath.Glob(path + ".tmp*"); len(tmp) != 0 {
				t.Fatalf("temp files left behind: %v", tmp)
			}
			in.Remove()
			if err := WriteOffsetFileFS(fsys, path, 7); err != nil {
				t.Fatal(err)
			}
			if v, _, _ := ReadOffsetFile(path); v != 7 {
				t.Fatalf("after the fault healed: %d", v)
			}
		})
	}
}

// TestReadErrorIsNotDamage: a read of a segment that fails (EIO) is an
// error for the reader to retry, never a skipped range — skipping would
// settle records no consumer ever saw. Nothing is counted as unreadable,
// and once the disk answers again the same read returns every record.
func TestReadErrorIsNotDamage(t *testing.T) {
	for _, name := range []string{"first read", "mid-frame read"} {
		t.Run(name, func(t *testing.T) {
			l, fsys, _ := faultyLog(t, Options{})
			defer l.Close()
			if _, err := l.Commit(payloads(10, 16)); err != nil {
				t.Fatal(err)
			}
			from := uint64(0)
			if name == "mid-frame read" {
				from = 4 // no cached frame, no cached position: a seek first
			}
			in := fsys.Inject(errorfs.Rule{Ops: errorfs.OpRead, Path: ".log", Err: syscall.EIO})
			res, err := l.Read(from, 100, 1<<20, NoDueLimit)
			if !errors.Is(err, syscall.EIO) || res.Skipped != 0 || len(res.Records) != 0 {
				t.Fatalf("read under EIO: %+v %v; want the EIO, nothing skipped", res, err)
			}
			var ioe *IOError
			if !errors.As(err, &ioe) || ioe.Reason() != "read: input/output error" {
				t.Fatalf("error %v: want an IOError whose reason names no path", err)
			}
			if n := l.CorruptSkipped(); n != 0 {
				t.Fatalf("%d records counted unreadable after an I/O error", n)
			}
			in.Remove()
			res, err = l.Read(from, 100, 1<<20, NoDueLimit)
			if err != nil || res.Skipped != 0 || len(res.Records) != int(10-from) || res.Records[0].Offset != from {
				t.Fatalf("read after the fault: %+v %v; want records %d..9", res, err, from)
			}
		})
	}
}

// reframe changes the first frame of a read-back into another frame that
// checks: a payload byte flipped and the CRC computed anew, as a stale
// block or a misdirected write would hand back.
func reframe(got []byte) {
	h, err := parseHeader(got)
	if err != nil || int64(len(got)) < h.frameLen() {
		panic(fmt.Sprintf("reframe: the read-back starts with no whole frame (%v)", err))
	}
	got[h.frameLen()-1] ^= 0x01
	h.crc = frameCRC(got[:FrameHeaderSize], got[FrameHeaderSize:h.frameLen()])
	putHeader(got, &h)
}
