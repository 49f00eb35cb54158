package storage

import (
	"io/fs"
	"math/bits"
	"math/rand/v2"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/narad-io/narad/internal/clock"
	"github.com/narad-io/narad/internal/vfs"
)

// segReads counts the reads of segment files: those of exactly a frame
// header (an index walk, or the header readFrame reads first) apart from
// the others (a frame's payload, or a scan's run of frames).
type segReads struct {
	vfs.FS
	headers, frames atomic.Int64
}

func (c *segReads) OpenFile(name string, flag int, perm fs.FileMode) (vfs.File, error) {
	f, err := c.FS.OpenFile(name, flag, perm)
	if err != nil || !strings.HasSuffix(name, segmentSuffix) {
		return f, err
	}
	return &countedFile{File: f, c: c}, nil
}

func (c *segReads) reset() { c.headers.Store(0); c.frames.Store(0) }

type countedFile struct {
	vfs.File
	c *segReads
}

func (f *countedFile) ReadAt(p []byte, off int64) (int, error) {
	if len(p) == FrameHeaderSize {
		f.c.headers.Add(1)
	} else {
		f.c.frames.Add(1)
	}
	return f.File.ReadAt(p, off)
}

// timedLog fills a log with commits of 1..maxBatch records of size bytes
// each, the fake clock stepped before each commit by step(i). It returns
// the commit time of every offset, as Commit stamped it. Commits are lazy
// (CommitFrom from one WAL), only to build many segments fast.
func timedLog(t testing.TB, l *Log, clk *clock.Fake, commits, maxBatch, size int, step func(i int) time.Duration) []int64 {
	t.Helper()
	var times []int64
	seq := uint64(0)
	for i := range commits {
		clk.Advance(step(i))
		batch := payloads(1+i%maxBatch, size)
		seqs := make([]uint64, len(batch))
		for j := range seqs {
			seq++
			seqs[j] = seq
		}
		if _, _, err := l.CommitFrom(batch, Source{Origin: 7, Seqs: seqs, Lazy: true}); err != nil {
			t.Fatalf("commit %d: %v", i, err)
		}
		for _, r := range batch {
			times = append(times, r.CommittedAt)
		}
	}
	if err := l.Flush(); err != nil {
		t.Fatal(err)
	}
	return times
}

// firstAtOrAfter is the answer by a scan of every record: the first
// offset in [oldest, hwm) committed at or after ms, else hwm.
func firstAtOrAfter(times []int64, oldest, hwm uint64, ms int64) uint64 {
	for o := oldest; o < hwm; o++ {
		if times[o] >= ms {
			return o
		}
	}
	return hwm
}

func seekT(t testing.TB, l *Log, at time.Time) uint64 {
	t.Helper()
	o, err := l.OffsetAtTime(at)
	if err != nil {
		t.Fatalf("OffsetAtTime(%d ms): %v", at.UnixMilli(), err)
	}
	return o
}

// checkEveryTime asks for every commit time the log holds, a millisecond
// either side, a microsecond either side, and times before and after all
// of them, and compares each answer with a scan's.
func checkEveryTime(t *testing.T, l *Log, times []int64) {
	t.Helper()
	oldest, hwm := l.Oldest(), l.HWM()
	ask := func(at time.Time, ms int64) {
		t.Helper()
		if got, want := seekT(t, l, at), firstAtOrAfter(times, oldest, hwm, ms); got != want {
			t.Errorf("at %v (%d ms, oldest %d, hwm %d): offset %d, want %d", at.UTC(), ms, oldest, hwm, got, want)
		}
	}
	seen := map[int64]bool{}
	for _, ms := range times {
		if seen[ms] {
			continue
		}
		seen[ms] = true
		for _, d := range []int64{-1, 0, 1} {
			ask(time.UnixMilli(ms+d), ms+d)
		}
		// Rounded up to the millisecond: just before ms is ms, just
		// after it is the next one.
		ask(time.UnixMilli(ms).Add(-time.Microsecond), ms)
		ask(time.UnixMilli(ms).Add(time.Microsecond), ms+1)
	}
	ask(time.UnixMilli(times[0]-time.Hour.Milliseconds()), times[0]-time.Hour.Milliseconds())
	last := times[len(times)-1]
	ask(time.UnixMilli(last+time.Hour.Milliseconds()), last+time.Hour.Milliseconds())
}

// stepPattern moves the clock a few milliseconds per commit, leaves it
// still now and then (commits sharing a millisecond, across frames and
// segments), and steps it back 50 ms every 97 commits (the wall clock
// stepped by NTP).
func stepPattern(i int) time.Duration {
	switch {
	case i%97 == 50:
		return -50 * time.Millisecond
	case i%5 == 0:
		return 0
	}
	return time.Duration(1+i%4) * time.Millisecond
}

// OffsetAtTime answers exactly what a scan of every record answers, for
// every time the log holds and between them, across segment and index
// boundaries, with the clock stepped back now and then; and again after a
// reopen, when no segment's first time or index is known yet.
func TestOffsetAtTimeIsExact(t *testing.T) {
	dir := t.TempDir()
	clk := clock.NewFake(time.Time{})
	// (15 KiB: with frames carrying their records' WAL seqs, 16 KiB made
	// every roll fall on a commit that did not move the clock.)
	opts := Options{SegmentBytes: 15 << 10, Now: clk.Now}
	l := openT(t, dir, opts)
	times := timedLog(t, l, clk, 400, 4, 150, stepPattern)
	for o := 1; o < len(times); o++ {
		if times[o] < times[o-1] {
			t.Fatalf("offset %d committed at %d after %d: commit times went back", o, times[o], times[o-1])
		}
	}
	l.mu.RLock()
	nsegs := len(l.segs)
	entries := len(l.segs[0].idx)
	l.mu.RUnlock()
	if nsegs < 10 || entries < 3 {
		t.Fatalf("%d segments, %d index entries in the first: the test wants many of both", nsegs, entries)
	}
	checkEveryTime(t, l, times)

	// Named cases: the log's ends, and every segment boundary where the
	// time moves (at the first record of a segment, and between the last
	// record of the one before and it).
	if got := seekT(t, l, time.UnixMilli(times[0]-1)); got != 0 {
		t.Errorf("before every record: %d, want 0", got)
	}
	if got := seekT(t, l, time.UnixMilli(times[0])); got != 0 {
		t.Errorf("at the first record: %d, want 0", got)
	}
	if got, hwm := seekT(t, l, time.UnixMilli(times[len(times)-1]+1)), l.HWM(); got != hwm {
		t.Errorf("after every record: %d, want the HWM %d", got, hwm)
	}
	boundaries := 0
	l.mu.RLock()
	segs := append([]*segment(nil), l.segs[1:]...)
	l.mu.RUnlock()
	for _, s := range segs {
		b := s.base
		if b >= uint64(len(times)) || times[b-1] == times[b] {
			continue
		}
		boundaries++
		if got := seekT(t, l, time.UnixMilli(times[b])); got != b {
			t.Errorf("at the first record of segment %d: %d", b, got)
		}
		if got := seekT(t, l, time.UnixMilli(times[b-1]+1)); got != b {
			t.Errorf("after the last record before segment %d: %d", b, got)
		}
	}
	if boundaries < nsegs/2 {
		t.Fatalf("only %d of %d segment boundaries moved the time", boundaries, nsegs)
	}

	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	l = openT(t, dir, opts)
	defer l.Close()
	checkEveryTime(t, l, times)
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := l.OffsetAtTime(clk.Now()); err != ErrClosed {
		t.Errorf("on a closed log: %v, want ErrClosed", err)
	}
}

// After retention deleted the oldest segments, times before the first
// retained record answer it (the log's start), and the rest is exact;
// after it deleted every record, every time answers the HWM.
func TestOffsetAtTimeAfterRetention(t *testing.T) {
	clk := clock.NewFake(time.Time{})
	l := openT(t, t.TempDir(), Options{SegmentBytes: 4 << 10, Now: clk.Now})
	defer l.Close()
	times := timedLog(t, l, clk, 200, 3, 100, func(int) time.Duration { return 10 * time.Millisecond })
	// Keep the last second's records: the first 100 commits' segments go.
	res, err := l.ApplyRetention(clk.Now().UnixMilli() - times[0] - 1000)
	if err != nil {
		t.Fatal(err)
	}
	oldest := l.Oldest()
	if res.Segments == 0 || oldest == 0 {
		t.Fatalf("retention deleted %d segments, oldest %d: the test wants some gone", res.Segments, oldest)
	}
	for _, ms := range []int64{times[0] - 1, times[0], times[oldest-1], times[oldest]} {
		if got := seekT(t, l, time.UnixMilli(ms)); got != oldest {
			t.Errorf("at %d ms (the oldest retained is at %d): %d, want %d", ms, times[oldest], got, oldest)
		}
	}
	checkEveryTime(t, l, times)

	clk.Advance(time.Hour)
	if _, err := l.ApplyRetention(1000); err != nil {
		t.Fatal(err)
	}
	hwm := l.HWM()
	if l.Oldest() != hwm || hwm != uint64(len(times)) {
		t.Fatalf("oldest %d, hwm %d after everything expired", l.Oldest(), hwm)
	}
	for _, ms := range []int64{times[0] - 1, times[len(times)-1], clk.Now().UnixMilli() + 1} {
		if got := seekT(t, l, time.UnixMilli(ms)); got != hwm {
			t.Errorf("at %d ms, nothing retained: %d, want the HWM %d", ms, got, hwm)
		}
	}
}

// An empty log answers 0 — its HWM — whatever the time.
func TestOffsetAtTimeOnAnEmptyLog(t *testing.T) {
	clk := clock.NewFake(time.Time{})
	l := openT(t, t.TempDir(), Options{Now: clk.Now})
	defer l.Close()
	for _, at := range []time.Time{{}, clk.Now().Add(-time.Hour), clk.Now(), clk.Now().Add(time.Hour)} {
		if got := seekT(t, l, at); got != 0 {
			t.Errorf("at %v: %d, want 0", at, got)
		}
	}
}

// On a held log records past the HWM are not readers': a time only they
// reach answers the HWM until Release shows them.
func TestOffsetAtTimeStopsAtTheHeldHWM(t *testing.T) {
	clk := clock.NewFake(time.Time{})
	l := openT(t, t.TempDir(), Options{Held: true, Now: clk.Now})
	defer l.Close()
	commitT(t, l, recs("a", 3, false))
	clk.Advance(time.Second)
	second := commitT(t, l, recs("b", 2, false))
	if err := l.Release(second); err != nil {
		t.Fatal(err)
	}
	if got := seekT(t, l, clk.Now()); got != second {
		t.Errorf("a time only unreleased records reach: %d, want the HWM %d", got, second)
	}
	if err := l.Release(l.End()); err != nil {
		t.Fatal(err)
	}
	if got := seekT(t, l, clk.Now()); got != second {
		t.Errorf("released: %d, want %d", got, second)
	}
	if got, end := seekT(t, l, clk.Now().Add(time.Millisecond)), l.End(); got != end {
		t.Errorf("after every record: %d, want %d", got, end)
	}
}

// manySegments builds a partition of nsegs segments of about 32 KiB,
// frames of one 1000-byte record committed a millisecond apart (every
// fourth in the same millisecond as the one before), reopened through
// fsys so that no sealed segment's first time or index is known.
func manySegments(tb testing.TB, dir string, fsys vfs.FS, nsegs int) (*Log, []int64) {
	tb.Helper()
	clk := clock.NewFake(time.Time{})
	opts := Options{SegmentBytes: 32 << 10, Now: clk.Now, FS: fsys}
	l := openT(tb, dir, opts)
	perSeg := int(opts.SegmentBytes / (FrameHeaderSize + sourceLen + 4 + 1000 + minRecordBytes))
	times := timedLog(tb, l, clk, nsegs*perSeg, 1, 1000, func(i int) time.Duration {
		if i%4 == 3 {
			return 0
		}
		return time.Millisecond
	})
	if err := l.Close(); err != nil {
		tb.Fatal(err)
	}
	l = openT(tb, dir, opts)
	l.mu.RLock()
	n := len(l.segs)
	l.mu.RUnlock()
	if n < nsegs {
		l.Close()
		tb.Fatalf("%d segments, want %d", n, nsegs)
	}
	return l, times
}

// On a partition of 1,000 segments a seek reads O(log segments + log
// index entries) frames, never the partition from its start: at most one
// frame per bisection step over the segments and over one segment's
// index, plus one read of the frames between two index entries; headers
// as many (readFrame reads the header first). The first time a sealed
// segment is looked into, the walk that builds its index adds a read per
// indexWalkBytes of it.
func TestOffsetAtTimeReadsLogarithmicallyManyFrames(t *testing.T) {
	if testing.Short() {
		t.Skip("builds 1,000 segments")
	}
	const nsegs = 1000
	fsys := &segReads{FS: vfs.Default}
	l, times := manySegments(t, t.TempDir(), fsys, nsegs)
	defer l.Close()
	l.mu.RLock()
	segs := append([]*segment(nil), l.segs...)
	l.mu.RUnlock()
	perSeg, walk := 0, int64(0) // the most frames a segment holds; reads of its index walk
	for _, s := range segs[:len(segs)-1] {
		perSeg = max(perSeg, int(s.end-s.base))
		walk = max(walk, (s.size+indexWalkBytes-1)/indexWalkBytes)
	}
	// Every segment's index, to know the most entries one has; then
	// forgotten again, so that the seeks below build what they use.
	maxEntries := 0
	for _, s := range segs {
		s.ensureIndex()
		maxEntries = max(maxEntries, len(s.idx))
	}
	for _, s := range segs[:len(segs)-1] {
		s.mu.Lock()
		s.idx, s.idxBuilt = nil, false
		s.mu.Unlock()
	}
	// A bisection over n items probes at most bits.Len(n) of them.
	headerBound := int64(bits.Len(uint(len(segs))) + bits.Len(uint(maxEntries)))
	frameBound := headerBound + 1 + walk

	rng := rand.New(rand.NewPCG(27, 4))
	first, last := times[0], times[len(times)-1]
	asks := []int64{first - 1, first, last, last + 1}
	for range 200 {
		asks = append(asks, first+rng.Int64N(last-first+1))
	}
	var maxFrames, maxHeaders, sumFrames, sumHeaders int64
	for _, ms := range asks {
		fsys.reset()
		got := seekT(t, l, time.UnixMilli(ms))
		if want := firstAtOrAfter(times, 0, l.HWM(), ms); got != want {
			t.Fatalf("at %d ms: offset %d, want %d", ms, got, want)
		}
		f, h := fsys.frames.Load(), fsys.headers.Load()
		if f > frameBound || h > headerBound {
			t.Errorf("at %d ms: %d frame reads and %d header reads, want at most %d and %d", ms, f, h, frameBound, headerBound)
		}
		maxFrames, maxHeaders, sumFrames, sumHeaders = max(maxFrames, f), max(maxHeaders, h), sumFrames+f, sumHeaders+h
	}
	t.Logf("%d segments of up to %d frames and %d index entries, %d records: per seek at most %d reads of frames or more (bound %d, mean %.1f) and %d of a header (bound %d, mean %.1f)",
		len(segs), perSeg, maxEntries, len(times), maxFrames, frameBound, float64(sumFrames)/float64(len(asks)),
		maxHeaders, headerBound, float64(sumHeaders)/float64(len(asks)))
}

// A clock stepped back stamps the newest commit time so far (the floor)
// until it catches up, so a record committed while the clock was behind
// is found at the floor's time, never at the clock's earlier one.
func TestOffsetAtTimeAfterTheClockSteppedBack(t *testing.T) {
	clk := clock.NewFake(time.Time{})
	l := openT(t, t.TempDir(), Options{Now: clk.Now})
	defer l.Close()
	t0 := clk.Now()
	commitT(t, l, recs("a", 1, false))
	clk.Advance(-time.Second)
	behind := recs("b", 1, false)
	commitT(t, l, behind)
	if got := behind[0].CommittedAt; got != t0.UnixMilli() {
		t.Fatalf("committed with the clock a second behind: stamped %d, want the floor %d", got, t0.UnixMilli())
	}
	clk.Advance(2 * time.Second)
	commitT(t, l, recs("c", 1, false))
	for _, c := range []struct {
		at   time.Time
		want uint64
	}{
		{t0.Add(-500 * time.Millisecond), 0}, // the stepped-back clock's time of offset 1
		{t0, 0},
		{t0.Add(time.Millisecond), 2},
		{clk.Now(), 2},
		{clk.Now().Add(time.Millisecond), 3},
	} {
		if got := seekT(t, l, c.at); got != c.want {
			t.Errorf("at %s from the first commit: %d, want %d", c.at.Sub(t0), got, c.want)
		}
	}
}

// What the HTTP layer's since seek will do: OffsetAtTime, then Read from
// there. Read already hands out each record's CommittedAt, so the caller
// sees the first record is at or after t and the one before it is not.
func TestOffsetAtTimeThenRead(t *testing.T) {
	clk := clock.NewFake(time.Time{})
	l := openT(t, t.TempDir(), Options{SegmentBytes: 4 << 10, Now: clk.Now})
	defer l.Close()
	times := timedLog(t, l, clk, 120, 3, 100, func(i int) time.Duration { return time.Duration(i%3) * time.Millisecond })
	for _, ms := range []int64{times[10] + 1, times[60], times[len(times)-1]} {
		o := seekT(t, l, time.UnixMilli(ms))
		res, err := l.Read(o, 1, 1<<20, NoDueLimit)
		if err != nil || len(res.Records) != 1 {
			t.Fatalf("read from %d: %v, %d records", o, err, len(res.Records))
		}
		if at := res.Records[0].CommittedAt; at < ms {
			t.Errorf("since %d ms: offset %d was committed at %d, before it", ms, o, at)
		}
		prev, err := l.Read(o-1, 1, 1<<20, NoDueLimit)
		if err != nil || len(prev.Records) != 1 {
			t.Fatalf("read from %d: %v, %d records", o-1, err, len(prev.Records))
		}
		if at := prev.Records[0].CommittedAt; at >= ms {
			t.Errorf("since %d ms: offset %d before the answer %d was committed at %d, not before", ms, o-1, o, at)
		}
	}
}
