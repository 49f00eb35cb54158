package storage

import (
	"bytes"
	"encoding/binary"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"testing"
)

// Frames copied as stored (rawframes.go): a follower fed by ReadFrames
// holds the leader's segment bytes, records and WAL sources; what frames
// cannot serve is left to ReadTo; AppendFrames refuses, changing nothing,
// whatever Append would refuse, and lazy or damaged frames.

// copyFrames moves a leader's frames to a follower with ReadFrames and
// AppendFrames, maxBytes at a time, until the follower holds all.
func copyFrames(t *testing.T, leader, follower *Log, maxBytes int) (calls int) {
	t.Helper()
	for follower.End() < leader.Written() {
		f, err := leader.ReadFrames(follower.End(), maxBytes)
		if err != nil || len(f) == 0 {
			t.Fatalf("ReadFrames(%d, %d): %d bytes, %v", follower.End(), maxBytes, len(f), err)
		}
		if len(f) > maxBytes {
			t.Fatalf("ReadFrames(%d, %d) gave %d bytes", follower.End(), maxBytes, len(f))
		}
		before := follower.End()
		n, err := follower.AppendFrames(f)
		if err != nil {
			t.Fatal(err)
		}
		if follower.End() != before+uint64(n) || n == 0 {
			t.Fatalf("AppendFrames reported %d records, the end moved %d → %d", n, before, follower.End())
		}
		bad := make([]byte, FrameHeaderSize) // unknown flags, a count of 5
		bad[0], bad[1], bad[2], bad[6] = magic0, magic1, 0xC0, 5
		if got := FrameRecords(append(f[:len(f):len(f)], bad...)); got != n {
			t.Fatalf("FrameRecords of %d appended records and a header that does not parse: %d", n, got)
		}
		calls++
	}
	return calls
}

func TestFramesCopyByteForByte(t *testing.T) {
	for _, codec := range []Codec{CodecNone, CodecZstd} {
		t.Run(codec.String(), func(t *testing.T) {
			ldir, fdir := t.TempDir(), t.TempDir()
			opts := Options{Held: true, Codec: codec, SegmentBytes: 600}
			leader, follower := openT(t, ldir, opts), openT(t, fdir, opts)
			defer leader.Close()
			seq := uint64(0)
			for i := 0; i < 12; i++ {
				rs := recs("r", 1+i%3, i%2 == 0)
				src := Source{Origin: 7 + uint64(i%2)}
				for range rs {
					seq += 2
					src.Seqs = append(src.Seqs, seq)
				}
				if i%4 == 3 {
					src = Source{} // a frame without a source
				}
				if _, _, err := leader.CommitFrom(rs, src); err != nil {
					t.Fatal(err)
				}
			}
			if calls := copyFrames(t, leader, follower, 150); calls < 2 {
				t.Fatalf("%d ReadFrames calls copied the log: maxBytes not applied", calls)
			}
			want, _ := leader.ReadTo(0, 1000, 1<<20)
			got, _ := follower.ReadTo(0, 1000, 1<<20)
			sameRecords(t, got, want)
			for i := range want {
				if got[i].Origin != want[i].Origin || got[i].Seq != want[i].Seq {
					t.Fatalf("record %d: WAL id %x/%d, leader's %x/%d", i, got[i].Origin, got[i].Seq, want[i].Origin, want[i].Seq)
				}
			}
			lsegs, fsegs := segmentFiles(t, ldir), segmentFiles(t, fdir)
			if len(lsegs) < 2 || len(lsegs) != len(fsegs) {
				t.Fatalf("segments: leader %d, follower %d", len(lsegs), len(fsegs))
			}
			for i := range lsegs {
				lb, _ := os.ReadFile(lsegs[i])
				fb, _ := os.ReadFile(fsegs[i])
				if filepath.Base(lsegs[i]) != filepath.Base(fsegs[i]) || len(lb) == 0 || !bytes.Equal(lb, fb) {
					t.Fatalf("segment %s (%d bytes) differs from the leader's %s (%d bytes)", fsegs[i], len(fb), lsegs[i], len(lb))
				}
			}
			if !reflect.DeepEqual(follower.applied, leader.applied) || len(follower.applied) != 2 {
				t.Fatalf("WAL sources held: follower %v, leader %v", follower.applied, leader.applied)
			}
			follower.Close()
			follower = openT(t, fdir, opts)
			defer follower.Close()
			if follower.End() != leader.Written() || !reflect.DeepEqual(follower.applied, leader.applied) {
				t.Fatalf("reopened follower: end %d, sources %v; leader %d, %v", follower.End(), follower.applied, leader.Written(), leader.applied)
			}
		})
	}
}

// ReadFrames serves only whole frames it could check; anything else is
// left to ReadTo.
func TestReadFramesLeavesTheRestToReadTo(t *testing.T) {
	dir := t.TempDir()
	l := openT(t, dir, heldOpts())
	commitT(t, l, recs("a", 3, false)) // offsets 0..2, one frame
	commitT(t, l, recs("b", 2, false)) // 3..4
	for _, from := range []uint64{1, 2, 4, 5, 9} {
		if f, err := l.ReadFrames(from, 1<<20); err != nil || f != nil {
			t.Fatalf("ReadFrames(%d): %d bytes, %v; want nothing (inside a frame, or at the end)", from, len(f), err)
		}
	}
	f, err := l.ReadFrames(3, 1<<20)
	h, _ := parseHeader(f)
	if err != nil || h.base != 3 || h.count != 2 || int64(len(f)) != h.frameLen() {
		t.Fatalf("ReadFrames(3): %d bytes (header %+v), %v; want the one frame 3..4", len(f), h, err)
	}
	// A frame larger than the budget is read as records (ReadTo cuts it):
	// a frame may be larger than any answer can carry.
	if f, err := l.ReadFrames(3, len(f)-1); err != nil || f != nil {
		t.Fatalf("ReadFrames with a budget below the frame's size: %d bytes, %v; want nothing", len(f), err)
	}
	// A position remembered wrong (it never is: truncation and retention
	// clear them) gives nothing rather than other frames.
	l.cache.putPosition(0, 3, 0) // where frame 0..2 begins
	if f, err := l.ReadFrames(3, 1<<20); err != nil || f != nil {
		t.Fatalf("ReadFrames from a wrong position: %d bytes, %v; want nothing", len(f), err)
	}
	l.cache.clear()
	// A damaged first frame is ReadTo's to report (a GapError).
	seg := filepath.Join(dir, segmentName(0))
	b, _ := os.ReadFile(seg)
	b[FrameHeaderSize+2] ^= 0xff
	if err := os.WriteFile(seg, b, 0o644); err != nil {
		t.Fatal(err)
	}
	if f, err := l.ReadFrames(0, 1<<20); err != nil || f != nil {
		t.Fatalf("ReadFrames over a damaged frame: %d bytes, %v; want nothing", len(f), err)
	}
	l.Close()
	if _, err := l.ReadFrames(3, 1<<20); !errors.Is(err, ErrClosed) {
		t.Fatalf("ReadFrames on a closed log: %v", err)
	}
}

// AppendFrames refuses whole what does not continue the log or does not
// check: nothing is written, End and the file stay as they were.
func TestAppendFramesRefusalsChangeNothing(t *testing.T) {
	leader := openT(t, t.TempDir(), heldOpts())
	defer leader.Close()
	if err := leader.Append(leaderRecs(0, 100, 200)); err != nil {
		t.Fatal(err)
	}
	if err := leader.Append(leaderRecs(2, 200, 250)); err != nil {
		t.Fatal(err)
	}
	both, _ := leader.ReadFrames(0, 1<<20)
	h, _ := parseHeader(both)
	first, second := both[:h.frameLen()], both[h.frameLen():]
	dir := t.TempDir()
	l := openT(t, dir, heldOpts())
	defer l.Close()
	if _, err := l.AppendFrames(first); err != nil {
		t.Fatal(err)
	}
	seg := filepath.Join(dir, segmentName(0))
	size := fileSize(t, seg)
	edit := func(f []byte, change func(b []byte)) []byte {
		b := bytes.Clone(f)
		change(b)
		return b
	}
	reseal := func(b []byte) { // a frame that checks, as a leader could have written it
		binary.BigEndian.PutUint32(b[23:], frameCRC(b[:FrameHeaderSize], b[FrameHeaderSize:]))
	}
	for _, c := range []struct {
		name   string
		frames []byte
		want   error
	}{
		{"the frame the log holds already", first, ErrAppendMismatch},
		{"a frame past the end", edit(second, func(b []byte) { binary.BigEndian.PutUint64(b[7:], 3); reseal(b) }), ErrAppendMismatch},
		{"a lazy frame", edit(second, func(b []byte) { b[2] |= flagLazy; reseal(b) }), ErrAppendMismatch},
		{"a good frame, then one that does not follow it", append(bytes.Clone(second), first...), ErrAppendMismatch},
		{"a payload byte changed", edit(second, func(b []byte) { b[len(b)-1] ^= 1 }), errBadFrame},
		{"cut short", second[:len(second)-1], errBadFrame},
		{"a good frame and trailing bytes", append(bytes.Clone(second), 0xCA), errBadFrame},
	} {
		t.Run(c.name, func(t *testing.T) {
			n, err := l.AppendFrames(c.frames)
			if !errors.Is(err, c.want) || n != 0 {
				t.Fatalf("AppendFrames: %d, %v; want 0, %v", n, err, c.want)
			}
			if l.End() != 2 || fileSize(t, seg) != size {
				t.Fatalf("a refused AppendFrames changed the log: end %d, %d bytes (was %d)", l.End(), fileSize(t, seg), size)
			}
		})
	}
	// A commit time below the log's newest: the follower's own newest is
	// later than what the leader's next frame holds.
	late := openT(t, t.TempDir(), heldOpts())
	defer late.Close()
	if err := late.Append(leaderRecs(0, 100, 300)); err != nil {
		t.Fatal(err)
	}
	if _, err := late.AppendFrames(second); !errors.Is(err, ErrAppendMismatch) || late.End() != 2 {
		t.Fatalf("frames with times below the log's newest: %v, end %d", err, late.End())
	}
	if _, err := l.AppendFrames(nil); !errors.Is(err, ErrEmptyBatch) {
		t.Fatalf("no frames: %v", err)
	}
	if n, err := l.AppendFrames(second); err != nil || n != 2 || l.End() != 4 {
		t.Fatalf("the continuing frames after refusals: %d, %v, end %d", n, err, l.End())
	}
	unheld := openT(t, t.TempDir(), Options{})
	defer unheld.Close()
	if _, err := unheld.AppendFrames(first); !errors.Is(err, ErrNotHeld) {
		t.Fatalf("AppendFrames on a log that is not held: %v", err)
	}
}
