package storage

import (
	"bytes"
	"log/slog"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
)

// logBuffer is a slog handler's output, safe to read while the log writes.
type logBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *logBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *logBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// watched is Options that count shortfalls and skips and keep the log text.
func watched() (Options, *int, *logBuffer) {
	var shortfalls int
	out := &logBuffer{}
	return Options{
		Logger: slog.New(slog.NewTextHandler(out, nil)),
		Hooks:  Hooks{Shortfall: func() { shortfalls++ }},
	}, &shortfalls, out
}

// Issue 9 §4: truncating the active segment below a cleanly recorded high
// watermark used to drop acknowledged records silently and hand their
// offsets to new records. Recovery now reports the shortfall (error naming
// the file and the offsets, counted), continues at the recorded high
// watermark, and readers see the lost range as a gap.
func TestTruncatedActiveSegmentBelowRecordedHWM(t *testing.T) {
	for _, c := range []struct {
		name string
		cut  func(starts []int64) int64
	}{
		{"mid-frame", func(s []int64) int64 { return s[1] + 5 }},
		{"at a frame boundary", func(s []int64) int64 { return s[1] }},
		{"to nothing", func([]int64) int64 { return 0 }},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			path, starts, _ := threeFrames(t, dir) // 9 records, closed cleanly
			at := c.cut(starts)
			if err := os.Truncate(path, at); err != nil {
				t.Fatal(err)
			}
			found := uint64(3) // records of the first frame survive
			if at < starts[1] {
				found = 0
			}
			opts, shortfalls, out := watched()
			l := openT(t, dir, opts)
			if l.HWM() != 9 || *shortfalls != 1 {
				t.Fatalf("after recovery: hwm %d, %d shortfalls; want 9 and 1", l.HWM(), *shortfalls)
			}
			for _, want := range []string{path, "lost_from_offset=" + itoa(found), "lost_to_offset=9", "level=ERROR"} {
				if !strings.Contains(out.String(), want) {
					t.Fatalf("the recovery log does not say %q:\n%s", want, out)
				}
			}
			if got := fileSize(t, path); got != at {
				t.Fatalf("recovery changed the damaged file: %d bytes, was %d", got, at)
			}
			if b := commitT(t, l, recs("new", 2, false)); b != 9 {
				t.Fatalf("new records start at %d: offsets below the recorded high watermark 9 were handed out again", b)
			}
			checkGap := func(l *Log) {
				t.Helper()
				res, err := l.Read(found, 100, 1<<20, NoDueLimit)
				if err != nil || len(res.Records) != 0 || res.SkippedFrom != found || res.Skipped != 9-found || res.Next != 9 {
					t.Fatalf("read at the lost range: %+v, %v; want a gap [%d, 9)", res, err, found)
				}
				got := readAll(t, l, 0)
				if uint64(len(got)) != found+2 || got[found].Offset != 9 || string(got[found].Payload) != "new-0" {
					t.Fatalf("read %d records: %+v", len(got), got)
				}
			}
			checkGap(l)
			if err := l.Close(); err != nil {
				t.Fatal(err)
			}
			// Reported once: the lost range now lies in a sealed segment, and
			// a second recovery finds everything the hwm file claims.
			l = openT(t, dir, opts)
			defer l.Close()
			if l.HWM() != 11 || *shortfalls != 1 {
				t.Fatalf("second open: hwm %d, %d shortfalls; want 11 and still 1", l.HWM(), *shortfalls)
			}
			checkGap(l)
		})
	}
}

// A cleanly closed log whose last frame is damaged held acknowledged
// records there: not a torn tail. The bytes are kept, the loss reported, and
// the log continues past it.
func TestDamagedLastFrameOfCleanLogIsAShortfall(t *testing.T) {
	dir := t.TempDir()
	path, starts, end := threeFrames(t, dir)
	flipByte(t, path, starts[2]+FrameHeaderSize+4)
	opts, shortfalls, _ := watched()
	l := openT(t, dir, opts)
	defer l.Close()
	if l.HWM() != 9 || *shortfalls != 1 {
		t.Fatalf("hwm %d, %d shortfalls; want 9 and 1", l.HWM(), *shortfalls)
	}
	if got := fileSize(t, path); got != end {
		t.Fatalf("the damaged frame was truncated: %d bytes, was %d", got, end)
	}
	if b := commitT(t, l, recs("new", 1, false)); b != 9 {
		t.Fatalf("new record at %d", b)
	}
}

// Every segment file removed (the hwm file survives): the log starts at
// the recorded high watermark and says what is gone.
func TestRemovedSegmentsAreAShortfall(t *testing.T) {
	dir := t.TempDir()
	threeFrames(t, dir)
	for _, f := range segmentFiles(t, dir) {
		os.Remove(f)
	}
	opts, shortfalls, out := watched()
	l := openT(t, dir, opts)
	defer l.Close()
	if l.HWM() != 9 || l.Oldest() != 9 || *shortfalls != 1 || !strings.Contains(out.String(), "lost_to_offset=9") {
		t.Fatalf("hwm %d oldest %d, %d shortfalls, log:\n%s", l.HWM(), l.Oldest(), *shortfalls, out)
	}
	if b := commitT(t, l, recs("new", 1, false)); b != 9 {
		t.Fatalf("new record at %d", b)
	}
}

// A crash leaves an hwm file behind the segments: that is no shortfall.
func TestStaleHWMFileIsNoShortfall(t *testing.T) {
	dir := t.TempDir()
	threeFrames(t, dir)
	crashedAt(t, dir, 3)
	opts, shortfalls, _ := watched()
	l := openT(t, dir, opts)
	defer l.Close()
	if l.HWM() != 9 || *shortfalls != 0 {
		t.Fatalf("hwm %d, %d shortfalls; want 9 and none", l.HWM(), *shortfalls)
	}
}

// A consumer frontier above everything published is reported (the broker
// clamps it); it is not taken as lost records.
func TestFrontierAboveHWMIsReported(t *testing.T) {
	dir := t.TempDir()
	threeFrames(t, dir)
	if err := WriteOffsetFile(filepath.Join(dir, ConsumerOffsetFile), 500); err != nil {
		t.Fatal(err)
	}
	opts, shortfalls, out := watched()
	l := openT(t, dir, opts)
	defer l.Close()
	if l.HWM() != 9 || *shortfalls != 0 || !strings.Contains(out.String(), "frontier=500") {
		t.Fatalf("hwm %d, %d shortfalls, log:\n%s", l.HWM(), *shortfalls, out)
	}
}

func itoa(v uint64) string { return strconv.FormatUint(v, 10) }
