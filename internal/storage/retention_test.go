package storage

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/narad-io/narad/internal/clock"
)

func TestRetentionDeletesExpiredSealedSegments(t *testing.T) {
	dir := t.TempDir()
	clk := clock.NewFake(time.UnixMilli(1_000_000))
	l := openT(t, dir, Options{Now: clk.Now, SegmentBytes: 250})
	defer l.Close()
	// Old records, then fresh ones, at a segment cap that seals every ~2 commits.
	for i := 0; i < 6; i++ {
		commitT(t, l, recs("old", 2, false))
	}
	clk.Set(time.UnixMilli(5_000_000))
	for i := 0; i < 6; i++ {
		commitT(t, l, recs("new", 2, false))
	}
	before := l.Stats()
	res, err := l.ApplyRetention(3_000_000) // cutoff 2,000,000: only "old" segments go
	if err != nil {
		t.Fatal(err)
	}
	after := l.Stats()
	if res.Segments == 0 || res.Records == 0 {
		t.Fatalf("nothing deleted: %+v", res)
	}
	if after.OldestOffset != res.Records || before.SizeBytes-after.SizeBytes != res.Bytes {
		t.Fatalf("counts disagree: res %+v, before %+v, after %+v", res, before, after)
	}
	if res.Records > 12 {
		t.Fatalf("deleted %d records, but only 12 were old", res.Records)
	}
	got := readAll(t, l, after.OldestOffset)
	for _, r := range got {
		if r.CommittedAt < 2_000_000 && r.Offset < 12 && string(r.Payload[:3]) != "old" {
			t.Fatalf("unexpected record %+v", r)
		}
	}
	var below *BelowOldestError
	if _, err := l.Read(0, 1, 1, NoDueLimit); !errors.As(err, &below) || below.Oldest != after.OldestOffset {
		t.Fatalf("read below oldest: %v", err)
	}
	// Nothing newer than the cutoff is ever deleted.
	if res2, _ := l.ApplyRetention(3_000_000); res2.Segments != 0 {
		t.Fatalf("second pass deleted %+v", res2)
	}
	if l.HWM() != 24 {
		t.Fatalf("hwm moved: %d", l.HWM())
	}
}

func TestRetentionRollsAnExpiredActiveSegment(t *testing.T) {
	dir := t.TempDir()
	clk := clock.NewFake(time.UnixMilli(1_000_000))
	l := openT(t, dir, Options{Now: clk.Now})
	defer l.Close()
	commitT(t, l, recs("x", 5, false))
	clk.Set(time.UnixMilli(1_000_000 + 10_000))
	if res, _ := l.ApplyRetention(20_000); res.Segments != 0 {
		t.Fatalf("deleted young data: %+v", res)
	}
	clk.Set(time.UnixMilli(1_000_000 + 30_000))
	res, err := l.ApplyRetention(20_000)
	if err != nil || res.Records != 5 || res.Segments != 1 {
		t.Fatalf("retention of an idle active segment: %+v %v", res, err)
	}
	if l.Oldest() != 5 || l.HWM() != 5 || len(segmentFiles(t, dir)) != 1 {
		t.Fatalf("oldest %d hwm %d files %d", l.Oldest(), l.HWM(), len(segmentFiles(t, dir)))
	}
	if b := commitT(t, l, recs("y", 1, false)); b != 5 {
		t.Fatalf("offsets restarted at %d", b)
	}
}

func TestRetentionZeroKeepsForever(t *testing.T) {
	clk := clock.NewFake(time.UnixMilli(1))
	l := openT(t, t.TempDir(), Options{Now: clk.Now, SegmentBytes: 100})
	defer l.Close()
	for i := 0; i < 5; i++ {
		commitT(t, l, recs("x", 2, false))
	}
	clk.Set(time.UnixMilli(1 << 50))
	if res, err := l.ApplyRetention(0); err != nil || res.Segments != 0 {
		t.Fatalf("retention 0 deleted %+v %v", res, err)
	}
}

func TestDescribeClosedLog(t *testing.T) {
	dir := t.TempDir()
	if st, err := Describe(dir + "/never"); err != nil || st.HighWatermark != 0 || !st.Exact {
		t.Fatalf("never-used dir: %+v %v", st, err)
	}
	clk := clock.NewFake(time.UnixMilli(7_000_000))
	l := openT(t, dir, Options{Now: clk.Now, SegmentBytes: 200})
	for i := 0; i < 5; i++ {
		commitT(t, l, recs("d", 3, true))
	}
	open := l.Stats()
	if h, err := ReadHWMFile(dir); err != nil || h.Boundary {
		t.Fatalf("an open log's hwm file must carry no boundary: %+v %v", h, err)
	}
	l.Close()
	h, err := ReadHWMFile(dir)
	if err != nil || !h.Boundary || h.HWM != 15 {
		t.Fatalf("hwm after close: %+v %v", h, err)
	}
	st, err := Describe(dir)
	if err != nil || !st.Exact || st != open {
		t.Fatalf("describe %+v, want %+v (%v)", st, open, err)
	}
	if st.OldestSegmentAt != 7000 {
		t.Fatalf("oldest_segment_at %d", st.OldestSegmentAt)
	}
}

func TestDescribeAfterCrashIsNotExact(t *testing.T) {
	dir := t.TempDir()
	l := openT(t, dir, Options{})
	commitT(t, l, recs("d", 3, true))
	l.persistHWM()
	// Simulate a crash: never Close; release the files behind its back.
	close(l.stop)
	<-l.done
	l.closeFiles()
	l.hwmw.close()
	st, err := Describe(dir)
	if err != nil || st.Exact || st.HighWatermark != 3 {
		t.Fatalf("describe after crash: %+v %v", st, err)
	}
	// Open + close restores exactness.
	l = openT(t, dir, Options{})
	l.Close()
	if st, _ = Describe(dir); !st.Exact || st.HighWatermark != 3 {
		t.Fatalf("after reopen+close: %+v", st)
	}
}

// A partition never opened describes as the log it opens as: one empty
// active segment (the reference creates it with the partition), whether
// its directory is missing or holds no segment file yet; describing
// creates nothing. Opening and closing it again agrees.
func TestDescribeCountsTheEmptyActiveSegment(t *testing.T) {
	dir := t.TempDir()
	never := filepath.Join(dir, "never")
	if st, err := Describe(never); err != nil || st.Segments != 1 || st.SizeBytes != 0 || !st.Exact {
		t.Fatalf("missing dir: %+v %v, want 1 empty segment", st, err)
	}
	if _, err := os.Stat(never); !os.IsNotExist(err) {
		t.Fatalf("describing created the directory: %v", err)
	}
	empty := filepath.Join(dir, "empty")
	if err := os.Mkdir(empty, 0o755); err != nil {
		t.Fatal(err)
	}
	if st, err := Describe(empty); err != nil || st.Segments != 1 {
		t.Fatalf("dir without a segment: %+v %v, want 1 segment", st, err)
	}
	if ents, _ := os.ReadDir(empty); len(ents) != 0 {
		t.Fatalf("describing wrote into the directory: %v", ents)
	}
	l := openT(t, empty, Options{})
	if st := l.Stats(); st.Segments != 1 {
		t.Fatalf("the log opens with %d segments, describe said 1", st.Segments)
	}
	l.Close()
	if st, err := Describe(empty); err != nil || st.Segments != 1 {
		t.Fatalf("after open and close: %+v %v", st, err)
	}
}

func TestHWMFileCodec(t *testing.T) {
	for _, h := range []HWMFile{{}, {HWM: 42}, {HWM: 1 << 60, Boundary: true, Segment: 99, Position: 12345}} {
		got, err := decodeHWM(encodeHWM(h))
		if err != nil || got != h {
			t.Fatalf("round trip %+v: %+v %v", h, got, err)
		}
	}
	b := encodeHWM(HWMFile{HWM: 7, Boundary: true})
	b[10] ^= 1
	if _, err := decodeHWM(b); !errors.Is(err, errBadHWM) {
		t.Fatalf("torn hwm accepted: %v", err)
	}
	if _, err := decodeHWM(b[:20]); !errors.Is(err, errBadHWM) {
		t.Fatalf("short hwm accepted: %v", err)
	}
}
