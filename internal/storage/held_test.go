package storage

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"testing"
	"time"

	"github.com/narad-io/narad/internal/header"
)

// A held log (held.go): commits durable but invisible until Release,
// Release capped at End and never down, ReadTo up to End, Append of a
// leader's records with their offsets and times, and its refusals.

func heldOpts() Options { return Options{Held: true} }

// clockAt is a clock stuck at ms, settable by the test.
func clockAt(ms *int64) func() time.Time { return func() time.Time { return time.UnixMilli(*ms) } }

func fired(ch <-chan struct{}) bool {
	select {
	case <-ch:
		return true
	default:
		return false
	}
}

func TestHeldCommitVisibleOnlyAfterRelease(t *testing.T) {
	l := openT(t, t.TempDir(), heldOpts())
	defer l.Close()
	readers, fetchers := l.Notify(), l.EndNotify()
	if b := commitT(t, l, recs("a", 3, false)); b != 0 {
		t.Fatalf("base %d", b)
	}
	if l.End() != 3 || l.HWM() != 0 || len(readAll(t, l, 0)) != 0 {
		t.Fatalf("after a held commit: end %d, hwm %d, %d readable; want 3, 0, 0", l.End(), l.HWM(), len(readAll(t, l, 0)))
	}
	if l.Flushed() != 0 || l.flushed.Load() != 3 {
		t.Fatalf("flushed %d (internal %d): a held commit is on disk, but Flushed never passes HWM", l.Flushed(), l.flushed.Load())
	}
	if fired(readers) || !fired(fetchers) {
		t.Fatalf("a held commit woke readers %v, fetchers %v; want only fetchers", fired(readers), fired(fetchers))
	}
	readers = l.Notify()
	if err := l.Release(2); err != nil {
		t.Fatal(err)
	}
	if !fired(readers) || l.HWM() != 2 {
		t.Fatalf("Release(2): hwm %d, readers woken %v", l.HWM(), fired(readers))
	}
	if got := readAll(t, l, 0); len(got) != 2 || string(got[1].Payload) != "a-1" {
		t.Fatalf("read after Release(2): %v", got)
	}
}

// A held commit is never lazy: nothing but this copy holds the records
// until replication counts it.
func TestHeldCommitIgnoresLazy(t *testing.T) {
	var syncs int
	l := openT(t, t.TempDir(), Options{Held: true, Hooks: Hooks{Fsync: func(time.Duration) { syncs++ }}})
	defer l.Close()
	if _, _, err := l.CommitFrom(recs("a", 2, false), Source{Origin: 7, Seqs: []uint64{1, 2}, Lazy: true}); err != nil {
		t.Fatal(err)
	}
	if syncs != 1 || l.flushed.Load() != 2 {
		t.Fatalf("a lazy commit on a held log: %d fdatasyncs, flushed %d; want 1 and 2", syncs, l.flushed.Load())
	}
}

func TestReleaseNeverDownAndCappedAtEnd(t *testing.T) {
	l := openT(t, t.TempDir(), heldOpts())
	defer l.Close()
	commitT(t, l, recs("a", 3, false))
	if err := l.Release(10); err != nil || l.HWM() != 3 {
		t.Fatalf("Release(10) with end 3: %v, hwm %d; want 3", err, l.HWM())
	}
	readers := l.Notify()
	if err := l.Release(1); err != nil || l.HWM() != 3 {
		t.Fatalf("Release(1) after 3: %v, hwm %d; want 3 (never down)", err, l.HWM())
	}
	if fired(readers) {
		t.Fatal("a Release that moved nothing woke readers")
	}
	l.Close()
	if err := l.Release(3); !errors.Is(err, ErrClosed) {
		t.Fatalf("Release on a closed log: %v", err)
	}
}

func TestReadToSeesUnreleased(t *testing.T) {
	l := openT(t, t.TempDir(), heldOpts())
	defer l.Close()
	commitT(t, l, recs("a", 3, false))
	commitT(t, l, recs("b", 2, false))
	got, err := l.ReadTo(1, 100, 1<<20)
	if err != nil || len(got) != 4 || got[0].Offset != 1 || string(got[3].Payload) != "b-1" {
		t.Fatalf("ReadTo(1): %v, %v; want offsets 1..4", got, err)
	}
	if got, _ := l.ReadTo(0, 2, 1<<20); len(got) != 2 {
		t.Fatalf("ReadTo capped at 2 records returned %d", len(got))
	}
	if got, _ := l.ReadTo(0, 100, 1); len(got) != 1 {
		t.Fatalf("ReadTo capped at 1 byte returned %d records, want the one that always comes", len(got))
	}
	if got, err := l.ReadTo(5, 100, 1<<20); err != nil || len(got) != 0 {
		t.Fatalf("ReadTo at the end: %v, %v", got, err)
	}
}

// A log that is not held keeps End == HWM; Release does nothing;
// EndNotify fires at a commit like Notify; replication's writes refuse.
func TestUnheldLogIsItsOwnCommittedPoint(t *testing.T) {
	l := openT(t, t.TempDir(), Options{})
	defer l.Close()
	end := l.EndNotify()
	commitT(t, l, recs("a", 3, false))
	if l.End() != 3 || l.HWM() != 3 || !fired(end) {
		t.Fatalf("unheld: end %d, hwm %d, EndNotify fired %v", l.End(), l.HWM(), fired(end))
	}
	if err := l.Release(1); err != nil || l.HWM() != 3 {
		t.Fatalf("Release on an unheld log: %v, hwm %d", err, l.HWM())
	}
	if err := l.Append([]Record{{Offset: 3}}); !errors.Is(err, ErrNotHeld) {
		t.Fatalf("Append on an unheld log: %v", err)
	}
	if err := l.SaveReplicaState(ReplicaState{LastEpoch: 1}); !errors.Is(err, ErrNotHeld) {
		t.Fatalf("SaveReplicaState on an unheld log: %v", err)
	}
}

// leaderRecs are records as a leader's fetch hands them: offsets from
// base, times as given, keys and headers on some.
func leaderRecs(base uint64, times ...int64) []Record {
	out := make([]Record, len(times))
	for i, at := range times {
		out[i] = Record{Offset: base + uint64(i), CommittedAt: at, Payload: []byte(fmt.Sprintf("L-%d", base+uint64(i)))}
		if i%2 == 0 {
			out[i].Key = []byte(fmt.Sprintf("k%d", i))
			out[i].Headers = []header.Header{{Name: "trace-id", Value: fmt.Sprint(base + uint64(i))}}
		}
	}
	return out
}

// sameRecords compares what a copy must keep: offset, time, key, headers,
// payload.
func sameRecords(t *testing.T, got, want []Record) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%d records, want %d", len(got), len(want))
	}
	for i := range want {
		g, w := got[i], want[i]
		if g.Offset != w.Offset || g.CommittedAt != w.CommittedAt || string(g.Key) != string(w.Key) ||
			string(g.Payload) != string(w.Payload) || !reflect.DeepEqual(g.Headers, w.Headers) {
			t.Fatalf("record %d: %+v, want %+v", i, g, w)
		}
	}
}

func TestAppendKeepsOffsetsAndTimes(t *testing.T) {
	dir := t.TempDir()
	l := openT(t, dir, heldOpts())
	want := append(leaderRecs(0, 100, 100, 250), leaderRecs(3, 250, 300)...)
	fetchers := l.EndNotify()
	if err := l.Append(want[:3]); err != nil {
		t.Fatal(err)
	}
	if !fired(fetchers) {
		t.Fatal("Append did not fire EndNotify")
	}
	if err := l.Append(want[3:]); err != nil {
		t.Fatal(err)
	}
	if l.End() != 5 || l.HWM() != 0 {
		t.Fatalf("after Append: end %d, hwm %d; want 5, 0", l.End(), l.HWM())
	}
	got, err := l.ReadTo(0, 100, 1<<20)
	if err != nil {
		t.Fatal(err)
	}
	sameRecords(t, got, want)
	l.Release(5)
	sameRecords(t, readAll(t, l, 0), want)
	l.Close()
	l = openT(t, dir, heldOpts())
	defer l.Close()
	if l.End() != 5 || l.HWM() != 0 {
		t.Fatalf("reopened without a checkpoint: end %d, hwm %d; want 5, 0", l.End(), l.HWM())
	}
	got, _ = l.ReadTo(0, 100, 1<<20)
	sameRecords(t, got, want)
	// A leader commit after the appended ones is stamped no lower.
	if _, err := l.Commit(recs("c", 1, false)); err != nil {
		t.Fatal(err)
	}
	if got, _ := l.ReadTo(5, 1, 1<<20); got[0].CommittedAt < 300 {
		t.Fatalf("a commit after appended records at time 300 stamped %d", got[0].CommittedAt)
	}
}

// An Append that does not continue the log is refused whole: nothing is
// written, End and the file stay as they were.
func TestAppendRefusalsChangeNothing(t *testing.T) {
	dir := t.TempDir()
	l := openT(t, dir, heldOpts())
	defer l.Close()
	if err := l.Append(leaderRecs(0, 100, 200)); err != nil {
		t.Fatal(err)
	}
	seg := filepath.Join(dir, segmentName(0))
	size := fileSize(t, seg)
	gap := leaderRecs(2, 200, 200, 200)
	gap[2].Offset = 5
	for _, c := range []struct {
		name string
		recs []Record
	}{
		{"first offset behind the end", leaderRecs(1, 200)},
		{"first offset past the end", leaderRecs(3, 200)},
		{"a gap inside", gap},
		{"time decreasing inside", leaderRecs(2, 300, 250)},
		{"time below the log's newest", leaderRecs(2, 199)},
	} {
		t.Run(c.name, func(t *testing.T) {
			err := l.Append(c.recs)
			if !errors.Is(err, ErrAppendMismatch) {
				t.Fatalf("Append: %v, want ErrAppendMismatch", err)
			}
			if l.End() != 2 || fileSize(t, seg) != size {
				t.Fatalf("a refused Append changed the log: end %d, %d bytes (was %d)", l.End(), fileSize(t, seg), size)
			}
		})
	}
	if err := l.Append(nil); !errors.Is(err, ErrEmptyBatch) {
		t.Fatalf("empty Append: %v", err)
	}
	if err := l.Append(leaderRecs(2, 200)); err != nil {
		t.Fatalf("the continuing Append after refusals: %v", err)
	}
}

// Append rolls segments as commits do.
func TestAppendRollsSegments(t *testing.T) {
	dir := t.TempDir()
	l := openT(t, dir, Options{Held: true, SegmentBytes: 200})
	for i := uint64(0); i < 6; i++ {
		if err := l.Append(leaderRecs(i*2, int64(i), int64(i))); err != nil {
			t.Fatal(err)
		}
	}
	if n := len(segmentFiles(t, dir)); n < 3 {
		t.Fatalf("%d segment files after 6 appends of ~100 bytes into 200-byte segments", n)
	}
	got, _ := l.ReadTo(0, 100, 1<<20)
	if len(got) != 12 {
		t.Fatalf("%d records", len(got))
	}
	l.Close()
	l = openT(t, dir, heldOpts())
	defer l.Close()
	if l.End() != 12 {
		t.Fatalf("reopened end %d", l.End())
	}
}

// ReadTo verifies frames as Read does: an unreadable first record is a
// *GapError naming the range (a replica cannot copy a hole), counted as
// skipped once however often it is asked; records before the damage come
// back without it.
func TestReadToReportsAGap(t *testing.T) {
	dir := t.TempDir()
	l := openT(t, dir, Options{Held: true, SegmentBytes: 200})
	for i := uint64(0); i < 3; i++ {
		if err := l.Append(leaderRecs(i*3, 1, 1, 1)); err != nil {
			t.Fatal(err)
		}
	}
	l.Close()
	seg := filepath.Join(dir, segmentName(3)) // sealed: Open does not scan it
	b, err := os.ReadFile(seg)
	if err != nil {
		t.Fatal(err)
	}
	b[FrameHeaderSize+5] ^= 0xff
	if err := os.WriteFile(seg, b, 0o644); err != nil {
		t.Fatal(err)
	}
	l = openT(t, dir, heldOpts())
	defer l.Close()
	if got, err := l.ReadTo(0, 100, 1<<20); err != nil || len(got) != 3 {
		t.Fatalf("ReadTo before the damage: %d records, %v; want the 3 before it", len(got), err)
	}
	for i := 0; i < 2; i++ {
		_, err := l.ReadTo(3, 100, 1<<20)
		var gap *GapError
		if !errors.As(err, &gap) || gap.From != 3 || gap.To != 6 {
			t.Fatalf("ReadTo at the damage: %v, want a gap 3..6", err)
		}
	}
	if n := l.CorruptSkipped(); n != 3 {
		t.Fatalf("%d records counted skipped, want 3 (once)", n)
	}
	if got, err := l.ReadTo(6, 100, 1<<20); err != nil || len(got) != 3 {
		t.Fatalf("ReadTo past the damage: %d records, %v", len(got), err)
	}
}

// A reader of a held log stepping over damage stops at the HWM: the range
// past it is not the reader's to skip yet.
func TestHeldReadSkipStopsAtTheHWM(t *testing.T) {
	dir := t.TempDir()
	l := openT(t, dir, Options{Held: true, SegmentBytes: 200})
	for i := uint64(0); i < 3; i++ {
		if err := l.Append(leaderRecs(i*3, 1, 1, 1)); err != nil {
			t.Fatal(err)
		}
	}
	l.Close()
	seg := filepath.Join(dir, segmentName(3))
	b, _ := os.ReadFile(seg)
	b[FrameHeaderSize+5] ^= 0xff
	os.WriteFile(seg, b, 0o644)
	l = openT(t, dir, heldOpts())
	defer l.Close()
	l.Release(4)
	res, err := l.Read(3, 100, 1<<20, NoDueLimit)
	if err != nil || res.Skipped != 1 || res.Next != 4 {
		t.Fatalf("Read over damage with hwm 4: skipped %d, next %d, %v; want 1 and 4", res.Skipped, res.Next, err)
	}
}

// EndNotify also wakes a fetch long-poll when a truncation moves End and
// when the log closes.
func TestEndNotifyOnTruncateAndClose(t *testing.T) {
	l := openT(t, t.TempDir(), heldOpts())
	if err := l.Append(leaderRecs(0, 1, 1)); err != nil {
		t.Fatal(err)
	}
	ch := l.EndNotify()
	if err := l.TruncateTo(1); err != nil || !fired(ch) {
		t.Fatalf("TruncateTo: %v, EndNotify fired %v", err, fired(ch))
	}
	ch = l.EndNotify()
	l.Close()
	if !fired(ch) {
		t.Fatal("Close did not fire EndNotify")
	}
}
