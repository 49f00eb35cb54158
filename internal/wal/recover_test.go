package wal

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"testing"

	"github.com/narad-io/narad/internal/vfs"
	"github.com/narad-io/narad/internal/vfs/errorfs"
)

// frameOffsets returns the byte offset of every frame in a clean segment.
func frameOffsets(t testing.TB, path string) []int64 {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var offs []int64
	for off := 0; off < len(b); {
		_, n, err := decodeFrame(b[off:])
		if err != nil {
			t.Fatalf("%s at %d: %v", path, off, err)
		}
		offs = append(offs, int64(off))
		off += n
	}
	return offs
}

func editFile(t testing.TB, path string, edit func(b []byte) []byte) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, edit(b), 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestTornTailTruncated(t *testing.T) {
	lyingHeader := func(n uint32) []byte {
		h := make([]byte, frameHeaderSize+20)
		binary.BigEndian.PutUint32(h, n)
		return h
	}
	// Each edit gets the file (10 records) and the offset of the 10th.
	cases := []struct {
		name     string
		edit     func(b []byte, last int) []byte
		wantLast uint64
	}{
		{"one byte of a header", func(b []byte, last int) []byte { return b[:last+1] }, 9},
		{"partial header", func(b []byte, last int) []byte { return b[:last+frameHeaderSize-1] }, 9},
		{"header only", func(b []byte, last int) []byte { return b[:last+frameHeaderSize] }, 9},
		{"partial body", func(b []byte, last int) []byte { return b[:len(b)-1] }, 9},
		{"checksum fails", func(b []byte, last int) []byte { b[len(b)-2] ^= 0x80; return b }, 9},
		{"last record zeroed", func(b []byte, last int) []byte { clear(b[last:]); return b }, 9},
		{"zeros after last record", func(b []byte, last int) []byte { return append(b, make([]byte, 4096)...) }, 10},
		{"length within bound, data missing", func(b []byte, last int) []byte {
			return append(b, lyingHeader(MaxRecordBytes-frameHeaderSize)...)
		}, 10},
		{"length of 4 GiB", func(b []byte, last int) []byte { return append(b, lyingHeader(1<<32-1)...) }, 10},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			w := openT(t, dir, Options{})
			appendRange(t, w, 0, 10, 1)
			w.Close()
			path := filepath.Join(dir, segmentName(1))
			offs := frameOffsets(t, path)
			goodEnd := fileSize(t, path)
			if tc.wantLast == 9 {
				goodEnd = offs[9]
			}
			editFile(t, path, func(b []byte) []byte { return tc.edit(b, int(offs[9])) })

			w2 := openT(t, dir, Options{})
			if w2.LastSeq() != tc.wantLast {
				t.Fatalf("LastSeq %d after recovery, want %d", w2.LastSeq(), tc.wantLast)
			}
			if got := fileSize(t, path); got != goodEnd {
				t.Fatalf("segment is %d bytes after recovery, want truncated to %d", got, goodEnd)
			}
			// The log continues cleanly after the cut.
			appendRange(t, w2, int(tc.wantLast), 12, 1)
			w2.Close()
			w3 := openT(t, dir, Options{})
			checkRecords(t, readAll(t, w3, 1), 1, 12)
		})
	}
}

func TestTornTailOfLastOfSeveralSegments(t *testing.T) {
	dir := t.TempDir()
	w := openT(t, dir, Options{SegmentBytes: 400})
	appendRange(t, w, 0, 30, 1)
	w.Close()
	segs := segmentFiles(t, dir)
	last := filepath.Join(dir, segs[len(segs)-1])
	// Leave a torn record: the last segment is empty or holds records after
	// rotation; either way a partial frame at its end must be cut.
	editFile(t, last, func(b []byte) []byte {
		return append(b, encodeT(t, testRecord(30), 31)[:20]...)
	})
	w2 := openT(t, dir, Options{SegmentBytes: 400})
	if w2.LastSeq() != 30 {
		t.Fatalf("LastSeq %d, want 30", w2.LastSeq())
	}
	checkRecords(t, readAll(t, w2, 1), 1, 30)
}

func TestMidCorruptionRefusedWithFileAndPosition(t *testing.T) {
	cases := []struct {
		name string
		// edit damages one segment and returns the byte offset it damaged.
		edit func(t *testing.T, b []byte, offs []int64) int64
		// sealed damages the first (sealed) segment instead of the last.
		sealed bool
	}{
		{"payload flip mid segment", func(t *testing.T, b []byte, offs []int64) int64 {
			b[offs[5]+frameHeaderSize+30] ^= 1
			return offs[5]
		}, false},
		{"zeroed header mid segment", func(t *testing.T, b []byte, offs []int64) int64 {
			clear(b[offs[3] : offs[3]+frameHeaderSize])
			return offs[3]
		}, false},
		{"length says 4 GiB mid segment", func(t *testing.T, b []byte, offs []int64) int64 {
			binary.BigEndian.PutUint32(b[offs[4]:], 1<<32-1)
			return offs[4]
		}, false},
		{"valid record with wrong seq", func(t *testing.T, b []byte, offs []int64) int64 {
			// Re-encode record 6 with the seq of record 7: its CRC is fine.
			v, n, err := decodeFrame(b[offs[6]:])
			if err != nil {
				t.Fatal(err)
			}
			var a arena
			r := v.record(&a, "")
			copy(b[offs[6]:], appendRecord(nil, &r, v.seq+1, n))
			return offs[6]
		}, false},
		{"damage at the tail of a sealed segment", func(t *testing.T, b []byte, offs []int64) int64 {
			last := offs[len(offs)-1]
			b[len(b)-1] ^= 1
			return last
		}, true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			// Small segments first, so there is a sealed one; then a large
			// threshold so the last segment holds many records.
			w := openT(t, dir, Options{SegmentBytes: 800})
			appendRange(t, w, 0, 20, 1)
			w.Close()
			opts := Options{SegmentBytes: 1 << 20}
			w = openT(t, dir, opts)
			appendRange(t, w, 20, 40, 1)
			w.Close()
			segs := segmentFiles(t, dir)
			if len(segs) < 2 {
				t.Fatalf("need at least two segments, have %v", segs)
			}
			name := segs[len(segs)-1]
			if tc.sealed {
				name = segs[0]
			}
			path := filepath.Join(dir, name)
			offs := frameOffsets(t, path)
			if len(offs) < 8 {
				t.Fatalf("segment %s has only %d records", name, len(offs))
			}
			var at int64
			var damaged []byte
			editFile(t, path, func(b []byte) []byte {
				at = tc.edit(t, b, offs)
				damaged = bytes.Clone(b)
				return b
			})

			w2, err := Open(dir, opts)
			if err == nil {
				w2.Close()
				t.Fatal("Open succeeded on corrupt data")
			}
			var ce *CorruptError
			if !errors.As(err, &ce) {
				t.Fatalf("error %v is not a *CorruptError", err)
			}
			if ce.Path != path || ce.Offset != at {
				t.Fatalf("CorruptError at %s:%d, want %s:%d", ce.Path, ce.Offset, path, at)
			}
			msg := err.Error()
			if !strings.Contains(msg, name) || !strings.Contains(msg, fmt.Sprintf("byte %d", at)) {
				t.Fatalf("error %q does not name file %s and byte %d", msg, name, at)
			}
			mustErrIs(t, err, ErrCorrupt)
			// Nothing was "repaired": the file is as damaged as we left it.
			if after, err := os.ReadFile(path); err != nil || !bytes.Equal(after, damaged) {
				t.Fatalf("refused Open modified %s (%v)", path, err)
			}
		})
	}
}

func TestMissingMiddleSegmentRefused(t *testing.T) {
	dir := t.TempDir()
	opts := Options{SegmentBytes: 300}
	w := openT(t, dir, opts)
	appendRange(t, w, 0, 30, 1)
	w.Close()
	segs := segmentFiles(t, dir)
	if len(segs) < 3 {
		t.Fatalf("need three segments, have %v", segs)
	}
	if err := os.Remove(filepath.Join(dir, segs[1])); err != nil {
		t.Fatal(err)
	}
	w2, err := Open(dir, opts)
	if err == nil {
		w2.Close()
		t.Fatal("Open succeeded with a segment missing")
	}
	mustErrIs(t, err, ErrCorrupt)
	if !strings.Contains(err.Error(), segs[2]) {
		t.Fatalf("error %q does not name %s", err, segs[2])
	}
}

// A corrupt length must not make recovery allocate what it claims.
func TestRecoveryDoesNotTrustLengths(t *testing.T) {
	for _, claim := range []uint32{MaxRecordBytes - frameHeaderSize, 1<<32 - 1} {
		t.Run(fmt.Sprint(claim), func(t *testing.T) {
			dir := t.TempDir()
			w := openT(t, dir, Options{})
			appendRange(t, w, 0, 3, 1)
			w.Close()
			path := filepath.Join(dir, segmentName(1))
			editFile(t, path, func(b []byte) []byte {
				h := bytes.Repeat([]byte{1}, 200) // version byte 1, seq ...
				binary.BigEndian.PutUint32(h, claim)
				return append(b, h...)
			})
			var ms runtime.MemStats
			runtime.ReadMemStats(&ms)
			before := ms.TotalAlloc
			w2, err := Open(dir, Options{})
			runtime.ReadMemStats(&ms)
			if err != nil {
				t.Fatal(err)
			}
			defer w2.Close()
			if grew := ms.TotalAlloc - before; grew > 4<<20 {
				t.Fatalf("Open allocated %d bytes for a %d-byte length claim", grew, claim)
			}
			if w2.LastSeq() != 3 {
				t.Fatalf("LastSeq %d, want 3", w2.LastSeq())
			}
		})
	}
}

// TestRecoveryReadErrorPastDamageTruncatesNothing: a bad record at the
// tail of the active segment is a torn tail only if nothing valid follows
// it. When the disk fails the reads that would tell (EIO), recovery does
// not know that: Open must fail and leave the file as it was, not cut
// the acknowledged records after the damage. A later Open on a disk that
// answers refuses the mid-segment damage as before.
func TestRecoveryReadErrorPastDamageTruncatesNothing(t *testing.T) {
	dir := t.TempDir()
	opts := Options{SegmentBytes: 64 << 20}
	path, damaged := bigRecordsDamaged(t, dir, opts, 20, 64<<10, 2) // ~1.3 MB: past the scanner's first window; damage inside it
	// The first read (the scanner's first window) succeeds; after it, the
	// reads looking past the bad record fail: every one, or only the next
	// (the read of the record after the damage, which runs past the
	// window).
	for _, times := range []int{0, 1} {
		openFailsUnchanged(t, dir, opts, errorfs.Rule{Ops: errorfs.OpRead, Path: segmentSuffix, After: 1, Times: times, Err: syscall.EIO}, path, damaged)
	}
	_, err := Open(dir, opts)
	mustErrIs(t, err, ErrCorrupt)
}

// TestNewWALIsDurableInItsParents: a WAL opened in directories that did
// not exist leaves no directory entry to a power cut once an append has
// returned (acknowledged): not a level of its directory, not a segment.
func TestNewWALIsDurableInItsParents(t *testing.T) {
	root := t.TempDir()
	efs := errorfs.New(vfs.Default)
	w := openT(t, filepath.Join(root, "data", "n1", "ingress"), Options{FS: efs})
	appendRange(t, w, 0, 3, 1)
	if got := efs.UnsyncedEntries(root); len(got) != 0 {
		t.Fatalf("after an acknowledged append, entries a power cut could remove: %v", got)
	}
}

// TestRecoveryPeekReadErrorTruncatesNothing: the same, where the failing
// read is one of the candidate peeks past the bad record (records larger
// than the scanner's window, so the look-ahead crosses its edge before it
// reaches the next record).
func TestRecoveryPeekReadErrorTruncatesNothing(t *testing.T) {
	dir := t.TempDir()
	opts := Options{SegmentBytes: 64 << 20}
	path, damaged := bigRecordsDamaged(t, dir, opts, 3, readChunk+(44<<10), 1)
	// Reads: record 0's header window and its frame, record 1's; the next
	// is the look-ahead's first read past record 1's window.
	openFailsUnchanged(t, dir, opts, errorfs.Rule{Ops: errorfs.OpRead, Path: segmentSuffix, After: 4, Times: 1, Err: syscall.EIO}, path, damaged)
}

// TestRecoveryReadErrorOfLastRecordCutsNothing: the last record of the
// active segment was acknowledged like the others. A read of it that
// fails once (EIO) says nothing about its bytes, so recovery must fail,
// not take the record for a torn tail and cut it (nor report damage, of
// this record or an earlier one's). Records larger than
// the scanner's window make the scan's last reads hold that record and
// nothing else. Each read of the segment fails once in turn, those
// included: every such Open fails with the EIO and leaves the file as it
// was, and once the fault is gone Open has every record, the last one
// whole.
func TestRecoveryReadErrorOfLastRecordCutsNothing(t *testing.T) {
	dir := t.TempDir()
	opts := Options{SegmentBytes: 64 << 20}
	const n, size = 3, readChunk + (44 << 10)
	path := bigRecords(t, dir, opts, n, size)
	clean, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	reads := 0
	for ; ; reads++ {
		efs := errorfs.New(vfs.Default)
		in := efs.Inject(errorfs.Rule{Ops: errorfs.OpRead, Path: segmentSuffix, After: reads, Times: 1, Err: syscall.EIO})
		o := opts
		o.FS = efs
		w, err := Open(dir, o)
		var last uint64
		if err == nil {
			last = w.LastSeq()
			w.Close()
		}
		if in.Fired() == 0 { // the scan made only reads earlier rounds failed
			break
		}
		if !errors.Is(err, syscall.EIO) || errors.Is(err, ErrCorrupt) {
			t.Errorf("segment read %d failed once: Open = %v (last seq %d), want the EIO and no damage", reads, err, last)
		}
		if after, err := os.ReadFile(path); err != nil || !bytes.Equal(after, clean) {
			t.Fatalf("segment read %d failed once: Open changed %s (%d bytes, was %d; %v)", reads, path, len(after), len(clean), err)
		}
	}
	if reads < n { // each record, larger than the window, takes a read of its own
		t.Fatalf("recovery made %d reads of %d records larger than its window", reads, n)
	}
	w := openT(t, dir, opts)
	if w.LastSeq() != n {
		t.Fatalf("LastSeq %d after the fault is gone, want %d", w.LastSeq(), n)
	}
	got, err := w.Read(n, 1, 0)
	if err != nil || len(got) != 1 || !sameRecord(got[0], bigRecord(n-1, size)) {
		t.Fatalf("Read(%d) = %d records, %v; want the last record whole", n, len(got), err)
	}
}

// openFailsUnchanged opens the WAL in dir with rule in force and wants
// the rule's error, with the segment at path still holding want.
func openFailsUnchanged(t *testing.T, dir string, opts Options, rule errorfs.Rule, path string, want []byte) {
	t.Helper()
	efs := errorfs.New(vfs.Default)
	efs.Inject(rule)
	opts.FS = efs
	if w, err := Open(dir, opts); err == nil {
		w.Close()
		t.Fatalf("%+v: Open succeeded while a read past a bad record failed", rule)
	} else if !errors.Is(err, rule.Err) {
		t.Fatalf("%+v: Open: %v, want %v", rule, err, rule.Err)
	}
	if after, err := os.ReadFile(path); err != nil || !bytes.Equal(after, want) {
		t.Fatalf("%+v: a failed Open changed %s (%d bytes, was %d; %v)", rule, path, len(after), len(want), err)
	}
}

// bigRecordsDamaged appends n records of size payload bytes to a WAL in
// dir (bigRecords) and flips a payload byte of record damage in the last
// segment; it returns that segment's path and bytes.
func bigRecordsDamaged(t *testing.T, dir string, opts Options, n, size, damage int) (string, []byte) {
	t.Helper()
	path := bigRecords(t, dir, opts, n, size)
	offs := frameOffsets(t, path)
	var damaged []byte
	editFile(t, path, func(b []byte) []byte {
		b[offs[damage]+frameHeaderSize+100] ^= 1
		damaged = bytes.Clone(b)
		return b
	})
	return path, damaged
}

// bigRecord is record i of bigRecords: testRecord(i) with size bytes of
// payload.
func bigRecord(i, size int) Record {
	r := testRecord(i)
	r.Payload = bytes.Repeat([]byte{byte('a' + i%26)}, size)
	return r
}

// bigRecords appends bigRecord(i, size) for i in [0, n) to a WAL in dir,
// one per append, closes it and returns the last segment's path.
func bigRecords(t *testing.T, dir string, opts Options, n, size int) string {
	t.Helper()
	w := openT(t, dir, opts)
	for i := 0; i < n; i++ {
		if err := w.Append(context.Background(), []Record{bigRecord(i, size)}); err != nil {
			t.Fatal(err)
		}
	}
	w.Close()
	segs := segmentFiles(t, dir)
	return filepath.Join(dir, segs[len(segs)-1])
}
