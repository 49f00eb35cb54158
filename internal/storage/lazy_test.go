package storage

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/narad-io/narad/internal/vfs"
	"github.com/narad-io/narad/internal/vfs/errorfs"
)

const testOrigin = 0xA11CE

// crash drops the log the way a killed process does: no flush, no hwm
// file, no close of anything but the file handles.
func crash(t *testing.T, l *Log) {
	t.Helper()
	close(l.stop)
	<-l.done
	l.hwmw.close()
	l.closeFiles()
}

func seqs(from uint64, n int) []uint64 {
	out := make([]uint64, n)
	for i := range out {
		out[i] = from + uint64(i)
	}
	return out
}

func commitFrom(t *testing.T, l *Log, rs []Record, src Source) (uint64, int) {
	t.Helper()
	base, skipped, err := l.CommitFrom(rs, src)
	if err != nil {
		t.Fatalf("commit from: %v", err)
	}
	return base, skipped
}

func payloads2(rs []Record) []string {
	out := make([]string, len(rs))
	for i, r := range rs {
		out[i] = fmt.Sprintf("%d:%s", r.Offset, r.Payload)
	}
	return out
}

// A log written before frames carried a source (testdata/v1log, committed
// by the previous binary) opens and reads as it did, and takes source
// frames after it.
func TestV1LogStillOpens(t *testing.T) {
	dir := t.TempDir()
	for _, name := range []string{"00000000000000000000.log", "hwm"} {
		b, err := os.ReadFile(filepath.Join("testdata", "v1log", name))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, name), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	l := openT(t, dir, Options{})
	got := readAll(t, l, 0)
	if len(got) != 18 || string(got[0].Payload) != "v1-b0-r0" || string(got[17].Payload) != "v1-b5-r2" || string(got[4].Key) != "k1" {
		t.Fatalf("read %v", payloads2(got))
	}
	base, _ := commitFrom(t, l, recs("new", 2, false), Source{Origin: testOrigin, Seqs: seqs(1, 2)})
	if base != 18 {
		t.Fatalf("base %d", base)
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	l = openT(t, dir, Options{})
	defer l.Close()
	if got := readAll(t, l, 0); len(got) != 20 || string(got[19].Payload) != "new-1" {
		t.Fatalf("after reopen %v", payloads2(got))
	}
	if l.applied[testOrigin] != 2 {
		t.Fatalf("applied %v", l.applied)
	}
}

// A re-dispatch of records the log holds already skips them, by WAL seq:
// in the same process and after a SIGKILL-style crash, also when the
// frames holding them are in a sealed segment.
func TestCommitFromSkipsWhatTheLogHolds(t *testing.T) {
	dir := t.TempDir()
	l := openT(t, dir, Options{SegmentBytes: 200})
	commitFrom(t, l, recs("a", 5, false), Source{Origin: testOrigin, Seqs: seqs(10, 5)}) // seqs 10..14
	base, skipped := commitFrom(t, l, recs("a", 8, false)[2:], Source{Origin: testOrigin, Seqs: seqs(12, 6)})
	if skipped != 3 || base != 5 {
		t.Fatalf("skipped %d base %d, want 3 and 5", skipped, base)
	}
	// Another origin is not skipped.
	if _, skipped := commitFrom(t, l, recs("b", 2, false), Source{Origin: 7, Seqs: seqs(1, 2)}); skipped != 0 {
		t.Fatalf("other origin skipped %d", skipped)
	}
	crash(t, l)
	l = openT(t, dir, Options{SegmentBytes: 200})
	if _, skipped := commitFrom(t, l, recs("a", 8, false), Source{Origin: testOrigin, Seqs: seqs(10, 8)}); skipped != 8 {
		t.Fatalf("after reopen skipped %d of 8", skipped)
	}
	if l.HWM() != 10 {
		t.Fatalf("hwm %d", l.HWM())
	}
	// Plain commits until the active segment holds no source frame: the
	// sealed ones still say what is held.
	for l.segs[len(l.segs)-1].base == l.segs[0].base || l.HWM() < 30 {
		commitT(t, l, recs("plain", 3, false))
	}
	for {
		if err := l.Close(); err != nil {
			t.Fatal(err)
		}
		l = openT(t, dir, Options{SegmentBytes: 200})
		a := l.segs[len(l.segs)-1]
		if a.size == 0 {
			break
		}
		commitT(t, l, recs("roll", 1, false)) // until a roll leaves the active segment empty
		if len(l.segs) > 3 {
			// a plain frame now fills the active segment: also fine, the
			// applied seq must come from the sealed ones either way
			break
		}
	}
	defer l.Close()
	if l.applied[testOrigin] != 17 {
		t.Fatalf("applied after rolls %v", l.applied)
	}
	if _, _, err := l.CommitFrom(recs("x", 2, false), Source{Origin: 1, Seqs: []uint64{5, 5}}); err == nil {
		t.Fatal("seqs not ascending accepted")
	}
}

// Lazy commits are visible at once and are lost by a power cut — cut back
// to the flushed high watermark, never a gap, never a shortfall — and a
// re-dispatch of the same records in the same order puts each at the
// offset it had.
func TestLazyCommitPowerCutComesBackAtTheSameOffsets(t *testing.T) {
	fsys := errorfs.New(vfs.Default)
	dir := t.TempDir()
	opts := Options{FS: fsys}
	var shortfalls int
	opts.Hooks.Shortfall = func() { shortfalls++ }
	l := openT(t, dir, opts)
	commitFrom(t, l, recs("sync", 2, false), Source{Origin: testOrigin, Seqs: seqs(1, 2)})
	lazy := func(l *Log) []string {
		var seen []string
		for b := 0; b < 3; b++ {
			rs := recs(fmt.Sprintf("lazy%d", b), 4, true)
			commitFrom(t, l, rs, Source{Origin: testOrigin, Seqs: seqs(uint64(3+4*b), 4), Lazy: true})
			seen = append(seen, payloads2(rs)...)
		}
		return seen
	}
	before := lazy(l)
	if l.HWM() != 14 || l.Flushed() != 2 {
		t.Fatalf("hwm %d flushed %d, want 14 and 2", l.HWM(), l.Flushed())
	}
	l.persistHWM()
	if h, err := ReadHWMFileFS(fsys, dir); err != nil || h.HWM != 2 {
		t.Fatalf("hwm file %+v %v: it must hold only the flushed hwm", h, err)
	}
	if got := payloads2(readAll(t, l, 0)); len(got) != 14 {
		t.Fatalf("readers see %v", got)
	}
	crash(t, l)
	if err := fsys.LoseUnsyncedWrites(); err != nil {
		t.Fatal(err)
	}
	l = openT(t, dir, opts)
	if l.HWM() != 2 || shortfalls != 0 || l.applied[testOrigin] != 2 {
		t.Fatalf("after the cut: hwm %d shortfalls %d applied %v", l.HWM(), shortfalls, l.applied)
	}
	after := lazy(l)
	if fmt.Sprint(after) != fmt.Sprint(before) {
		t.Fatalf("offsets moved:\n before %v\n after  %v", before, after)
	}
	if err := l.Flush(); err != nil {
		t.Fatal(err)
	}
	crash(t, l)
	fsys.LoseUnsyncedWrites()
	l = openT(t, dir, opts)
	defer l.Close()
	if l.HWM() != 14 {
		t.Fatalf("flushed records lost: hwm %d", l.HWM())
	}
}

// A synchronous commit's fdatasync makes every lazy frame before it
// durable; so do Close, a roll, and the listing a partition copy takes.
func TestEveryWayOutFlushesLazyFrames(t *testing.T) {
	for _, tc := range []struct {
		name string
		then func(t *testing.T, l *Log) bool // true: the log was closed
	}{
		{"sync commit", func(t *testing.T, l *Log) bool { commitT(t, l, recs("fwd", 1, false)); return false }},
		{"close", func(t *testing.T, l *Log) bool {
			if err := l.Close(); err != nil {
				t.Fatal(err)
			}
			// Whoever committed lazily still holds the log: its Flush
			// answers for Close's (idle eviction, delete, a move's close).
			if err := l.Flush(); err != nil {
				t.Fatalf("flush of a log closed whole: %v", err)
			}
			return true
		}},
		{"copy listing", func(t *testing.T, l *Log) bool {
			files, err := l.Files()
			if err != nil {
				t.Fatal(err)
			}
			a, _ := l.Published()
			for _, f := range files {
				if f.Name == a && f.Size != l.segs[len(l.segs)-1].size {
					t.Fatalf("listing takes %d of %d bytes", f.Size, l.segs[len(l.segs)-1].size)
				}
			}
			return false
		}},
		{"roll", func(t *testing.T, l *Log) bool {
			big := []Record{{Payload: make([]byte, 400)}}
			commitFrom(t, l, big, Source{Origin: testOrigin, Seqs: seqs(100, 1), Lazy: true})
			if len(l.segs) < 2 {
				t.Fatal("no roll")
			}
			return false
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fsys := errorfs.New(vfs.Default)
			dir := t.TempDir()
			opts := Options{FS: fsys, SegmentBytes: 400}
			l := openT(t, dir, opts)
			commitFrom(t, l, recs("lazy", 6, false), Source{Origin: testOrigin, Seqs: seqs(1, 6), Lazy: true})
			closed := tc.then(t, l)
			if !closed {
				if l.Flushed() < 6 {
					t.Fatalf("flushed %d", l.Flushed())
				}
				crash(t, l)
			}
			fsys.LoseUnsyncedWrites()
			l = openT(t, dir, opts)
			defer l.Close()
			if l.HWM() < 6 {
				t.Fatalf("lazy records lost: hwm %d", l.HWM())
			}
		})
	}
}

// A failed fdatasync of lazy frames fences the log for good: Recover
// refuses (the frames may be gone from the disk, readers saw them), and a
// reopen recovers what the disk holds.
func TestFailedLazyFlushFencesUntilReopen(t *testing.T) {
	fsys := errorfs.New(vfs.Default)
	dir := t.TempDir()
	l := openT(t, dir, Options{FS: fsys})
	commitFrom(t, l, recs("lazy", 3, false), Source{Origin: testOrigin, Seqs: seqs(1, 3), Lazy: true})
	in := fsys.Inject(errorfs.Rule{Ops: errorfs.OpSync, Path: ".log", Times: 1, Err: syscall.EIO})
	if err := l.Flush(); !errors.Is(err, ErrFenced) {
		t.Fatalf("flush: %v", err)
	}
	in.Remove()
	if err := l.Recover(); err == nil || !l.Fenced() {
		t.Fatalf("recover lifted a lost-lazy fence: %v", err)
	}
	if l.Flushed() != 0 || l.HWM() != 3 {
		t.Fatalf("flushed %d hwm %d", l.Flushed(), l.HWM())
	}
	if err := l.Close(); err == nil {
		t.Fatal("close of a log that lost lazy frames reported nothing")
	}
	if err := l.Flush(); err == nil {
		t.Fatal("flush of a closed log whose lazy frames are not on disk reported nothing: the WAL would be released past them")
	}
	l = openT(t, dir, Options{FS: fsys})
	defer l.Close()
	if l.Fenced() {
		t.Fatal("still fenced after reopen")
	}
}

// A power cut that wrote back some pages of a lazy tail and not others
// leaves a bad frame with valid lazy frames after it: recovery cuts there
// (their WAL still holds them) instead of refusing to open. A synchronous
// frame after the bad one proves it was fsynced: that stays corruption.
func TestRecoveryCutsALazyTailWithAHole(t *testing.T) {
	for _, tc := range []struct {
		name     string
		lastSync bool
	}{{"lazy after the hole", false}, {"sync after the hole", true}} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			l := openT(t, dir, Options{})
			commitT(t, l, recs("base", 2, false))
			second := l.segs[0].size // where the first lazy frame starts
			for b := 0; b < 3; b++ {
				commitFrom(t, l, recs(fmt.Sprint("l", b), 2, false), Source{Origin: testOrigin, Seqs: seqs(uint64(1+2*b), 2), Lazy: !(tc.lastSync && b == 2)})
			}
			path := l.segs[0].path
			crash(t, l)
			// damage the payload of the second frame (the first lazy one)
			f, err := os.OpenFile(path, os.O_RDWR, 0)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := f.WriteAt([]byte("XX"), second+FrameHeaderSize+sourceLen+2); err != nil {
				t.Fatal(err)
			}
			f.Close()
			l, err = Open(dir, Options{})
			if tc.lastSync {
				var ce *CorruptError
				if !errors.As(err, &ce) {
					t.Fatalf("open: %v, want a CorruptError", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			defer l.Close()
			if l.HWM() != 2 || l.applied[testOrigin] != 0 {
				t.Fatalf("hwm %d applied %v, want the cut at 2", l.HWM(), l.applied)
			}
		})
	}
}

// A source frame of either codec reads back and reopens: the 16 source
// bytes precede the (compressed) records and are never compressed.
func TestSourceFramesOfEitherCodec(t *testing.T) {
	for _, codec := range []Codec{CodecNone, CodecZstd} {
		t.Run(codec.String(), func(t *testing.T) {
			dir := t.TempDir()
			l := openT(t, dir, Options{Codec: codec})
			commitFrom(t, l, recs("z", 50, true), Source{Origin: testOrigin, Seqs: seqs(7, 50), Lazy: true})
			if err := l.Close(); err != nil {
				t.Fatal(err)
			}
			l = openT(t, dir, Options{Codec: codec})
			defer l.Close()
			got := readAll(t, l, 0)
			if len(got) != 50 || string(got[49].Payload) != "z-49" || string(got[3].Key) != "k3" || l.applied[testOrigin] != 56 {
				t.Fatalf("read %d records, applied %v", len(got), l.applied)
			}
		})
	}
}

// A crashed process (SIGKILL) leaves lazy frames in the page cache only;
// the next Open finds them and reports them held (the WAL is then released
// past them), so Open makes them durable first: a power cut after that
// restart must not take them.
func TestOpenMakesRecoveredLazyFramesDurable(t *testing.T) {
	fsys := errorfs.New(vfs.Default)
	dir := t.TempDir()
	l := openT(t, dir, Options{FS: fsys})
	commitFrom(t, l, recs("lazy", 4, false), Source{Origin: testOrigin, Seqs: seqs(1, 4), Lazy: true})
	crash(t, l) // SIGKILL: the writes are in the page cache, not on disk
	l = openT(t, dir, Options{FS: fsys})
	if l.HWM() != 4 || l.applied[testOrigin] != 4 {
		t.Fatalf("after the crash: hwm %d applied %v", l.HWM(), l.applied)
	}
	crash(t, l)
	fsys.LoseUnsyncedWrites() // then a power cut
	var shortfalls int
	opts := Options{FS: fsys}
	opts.Hooks.Shortfall = func() { shortfalls++ }
	l = openT(t, dir, opts)
	defer l.Close()
	if got := readAll(t, l, 0); len(got) != 4 || shortfalls != 0 {
		t.Fatalf("records the reopened log held (and so released from the WAL) lost: %d readable, %d shortfalls", len(got), shortfalls)
	}
}
