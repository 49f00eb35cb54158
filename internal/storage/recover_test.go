package storage

import (
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// threeFrames commits three batches and returns the positions where each
// frame starts and the file's end.
func threeFrames(t *testing.T, dir string) (path string, starts []int64, end int64) {
	l := openT(t, dir, Options{})
	for _, p := range []string{"a", "b", "c"} {
		commitT(t, l, recs(p, 3, true))
		l.mu.RLock()
		starts = append(starts, l.segs[0].size)
		l.mu.RUnlock()
	}
	l.Close()
	path = filepath.Join(dir, segmentName(0))
	end = starts[2]
	starts = append([]int64{0}, starts[:2]...)
	return path, starts, end
}

// crashedAt rewrites dir's hwm file as a crash leaves it: no boundary, and
// a high watermark that was persisted before the last commits (here hwm).
// Only then is a bad last frame a torn tail: with the clean close's hwm
// file it held acknowledged records (shortfall_test.go).
func crashedAt(t *testing.T, dir string, hwm uint64) {
	t.Helper()
	if err := os.WriteFile(filepath.Join(dir, hwmFileName), encodeHWM(HWMFile{HWM: hwm}), 0o644); err != nil {
		t.Fatal(err)
	}
}

func flipByte(t *testing.T, path string, pos int64) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	b := make([]byte, 1)
	if _, err := f.ReadAt(b, pos); err != nil {
		t.Fatal(err)
	}
	b[0] ^= 0x40
	if _, err := f.WriteAt(b, pos); err != nil {
		t.Fatal(err)
	}
}

func TestTornTailIsTruncated(t *testing.T) {
	for _, cut := range []int64{1, FrameHeaderSize - 1, FrameHeaderSize + 2, -1} {
		dir := t.TempDir()
		path, starts, end := threeFrames(t, dir)
		at := starts[2] + cut
		if cut < 0 {
			at = end + cut
		}
		if err := os.Truncate(path, at); err != nil {
			t.Fatal(err)
		}
		crashedAt(t, dir, 6) // the third commit was in flight
		l := openT(t, dir, Options{})
		if l.HWM() != 6 {
			t.Fatalf("cut at %d: hwm %d, want 6 (the torn third frame dropped)", at, l.HWM())
		}
		if got := fileSize(t, path); got != starts[2] {
			t.Fatalf("cut at %d: file is %d bytes, want truncated to %d", at, got, starts[2])
		}
		// The log keeps working after recovery: the next commit reuses offset 6.
		if b := commitT(t, l, recs("d", 1, false)); b != 6 {
			t.Fatalf("next commit at %d", b)
		}
		if n := len(readAll(t, l, 0)); n != 7 {
			t.Fatalf("read %d", n)
		}
		l.Close()
	}
}

func TestFlippedByteInLastFrameIsTornTail(t *testing.T) {
	dir := t.TempDir()
	path, starts, _ := threeFrames(t, dir)
	flipByte(t, path, starts[2]+FrameHeaderSize+4)
	crashedAt(t, dir, 6)
	l := openT(t, dir, Options{})
	defer l.Close()
	if l.HWM() != 6 {
		t.Fatalf("hwm %d, want 6", l.HWM())
	}
}

func TestFlippedByteInMiddleFrameRefusesToOpen(t *testing.T) {
	for _, where := range []struct {
		name string
		off  int64
	}{{"payload", FrameHeaderSize + 5}, {"header count", 4}, {"magic", 0}} {
		t.Run(where.name, func(t *testing.T) {
			dir := t.TempDir()
			path, starts, end := threeFrames(t, dir)
			flipByte(t, path, starts[1]+where.off)
			_, err := Open(dir, Options{})
			if !errors.Is(err, ErrCorrupt) {
				t.Fatalf("open: %v, want ErrCorrupt", err)
			}
			msg := err.Error()
			if !strings.Contains(msg, path) || !strings.Contains(msg, "frame at "+strconv.FormatInt(starts[1], 10)) {
				t.Fatalf("error %q does not name the file and position %d", msg, starts[1])
			}
			if got := fileSize(t, path); got != end {
				t.Fatalf("refused open changed the file: %d bytes, was %d", got, end)
			}
			// The operator's opt-in opens it; readers skip the bad frame and count it.
			l := openT(t, dir, Options{SkipCorrupt: true})
			defer l.Close()
			if l.HWM() != 9 {
				t.Fatalf("hwm with skip: %d", l.HWM())
			}
			got := readAll(t, l, 0)
			if len(got) != 6 || got[3].Offset != 6 || l.CorruptSkipped() != 3 {
				t.Fatalf("read %d records (4th at %d), skipped %d; want 6, 6, 3", len(got), got[3].Offset, l.CorruptSkipped())
			}
		})
	}
}

func TestReadSkipsCorruptFrameInSealedSegment(t *testing.T) {
	dir := t.TempDir()
	l := openT(t, dir, Options{SegmentBytes: 300})
	for i := 0; i < 12; i++ {
		commitT(t, l, recs("s", 2, false))
	}
	l.Close()
	files := segmentFiles(t, dir)
	if len(files) < 3 {
		t.Fatalf("want several segments, got %d", len(files))
	}
	flipByte(t, files[0], FrameHeaderSize+3) // first frame of the oldest sealed segment
	l = openT(t, dir, Options{SegmentBytes: 300})
	defer l.Close()
	res, err := l.Read(0, 100, 1<<20, NoDueLimit)
	if err != nil || len(res.Records) != 0 || res.SkippedFrom != 0 || res.Skipped != 2 || res.Next != 2 {
		t.Fatalf("first read over the bad frame: %+v %v", res, err)
	}
	got := readAll(t, l, 0)
	if len(got) != 22 || got[0].Offset != 2 {
		t.Fatalf("read %d records from %d", len(got), got[0].Offset)
	}
	if l.CorruptSkipped() != 2 { // two readers stepped over the same 2 records: counted once
		t.Fatalf("corrupt skipped = %d", l.CorruptSkipped())
	}
}
