package storage

import (
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"testing"
)

// idsOf lists the records' (origin, seq) as text, for comparisons.
func idsOf(rs []Record) []string {
	out := make([]string, len(rs))
	for i, r := range rs {
		out[i] = fmt.Sprintf("%d:%x/%d", r.Offset, r.Origin, r.Seq)
	}
	return out
}

func sameIDs(t *testing.T, what string, got, want []Record) {
	t.Helper()
	g, w := idsOf(got), idsOf(want)
	if fmt.Sprint(g) != fmt.Sprint(w) {
		t.Fatalf("%s: ids %v, want %v", what, g, w)
	}
}

// Every record of a sourced commit reads back with its own WAL seq — seqs
// far apart too, whose distance takes several varint bytes — uncompressed
// and zstd, after a reopen as before it.
func TestRecordsKeepTheirWALSeqs(t *testing.T) {
	for _, codec := range []Codec{CodecNone, CodecZstd} {
		t.Run(codec.String(), func(t *testing.T) {
			dir := t.TempDir()
			opts := Options{Codec: codec}
			l := openT(t, dir, opts)
			batches := [][]uint64{{1, 2, 3}, {7, 9, 1 << 20, 1<<40 + 5}, {1<<40 + 6}}
			var want []Record
			for _, sq := range batches {
				rs := recs("r", len(sq), true)
				commitFrom(t, l, rs, Source{Origin: testOrigin, Seqs: sq})
				for i := range rs {
					want = append(want, Record{Offset: rs[i].Offset, Origin: testOrigin, Seq: sq[i]})
				}
			}
			sameIDs(t, "read", readAll(t, l, 0), want)
			if err := l.Close(); err != nil {
				t.Fatal(err)
			}
			l = openT(t, dir, opts)
			defer l.Close()
			sameIDs(t, "after reopen", readAll(t, l, 0), want)
		})
	}
}

// Records that carry ids without a source (a commit from another node's
// WAL: node RPC, a reroute) keep them too; a plain commit's records have
// none; one batch may not mix origins, and nothing of it is stored.
func TestCommitKeepsIDsWithoutASource(t *testing.T) {
	l := openT(t, t.TempDir(), Options{})
	defer l.Close()
	rs := recs("remote", 3, false)
	for i := range rs {
		rs[i].Origin, rs[i].Seq = 0xB0B, uint64(10+2*i)
	}
	commitT(t, l, rs)
	commitT(t, l, recs("plain", 2, false))
	got := readAll(t, l, 0)
	want := []Record{{Offset: 0, Origin: 0xB0B, Seq: 10}, {Offset: 1, Origin: 0xB0B, Seq: 12}, {Offset: 2, Origin: 0xB0B, Seq: 14}, {Offset: 3}, {Offset: 4}}
	sameIDs(t, "read", got, want)

	for name, bad := range map[string][]Record{
		"two origins":   {{Payload: []byte("a"), Origin: 1, Seq: 1}, {Payload: []byte("b"), Origin: 2, Seq: 2}},
		"some without":  {{Payload: []byte("a"), Origin: 1, Seq: 1}, {Payload: []byte("b")}},
		"seq zero":      {{Payload: []byte("a"), Origin: 1}},
		"not ascending": {{Payload: []byte("a"), Origin: 1, Seq: 5}, {Payload: []byte("b"), Origin: 1, Seq: 5}},
	} {
		if _, err := l.Commit(bad); err == nil {
			t.Fatalf("%s: committed", name)
		}
	}
	if l.HWM() != 5 {
		t.Fatalf("hwm %d after refused commits, want 5", l.HWM())
	}
}

// A sourced frame costs about a byte per record for its ids: seqs a few
// apart take one varint byte each, plus the 4-byte length per frame.
func TestIDsCostAByteARecord(t *testing.T) {
	enc, _ := newEncoder(CodecNone, "")
	rs := recs("x", 100, false)
	plain, _ := enc.encode(0, rs, 1, testOrigin, 300, false)
	plainLen := len(plain)
	for i := range rs {
		rs[i].Origin, rs[i].Seq = testOrigin, uint64(1+3*i)
	}
	withIDs, _ := enc.encode(0, rs, 1, testOrigin, 300, false)
	if extra := len(withIDs) - plainLen; extra != 4+100 {
		t.Fatalf("ids cost %d bytes for 100 records, want 104", extra)
	}
}

// A replicated partition's follower keeps the leader's ids: a held log
// commits them like any log, and Append of the leader's records — one
// batch mixing origins, records without any, seqs that restart below the
// previous run's — writes a frame per run that keeps each record's WAL
// source, read back the same after a reopen.
func TestHeldLogsKeepIDs(t *testing.T) {
	leader := openT(t, t.TempDir(), heldOpts())
	defer leader.Close()
	commitFrom(t, leader, recs("a", 2, false), Source{Origin: testOrigin, Seqs: seqs(1, 2)})
	remote := recs("r", 1, false) // a commit of another node's WAL records
	remote[0].Origin, remote[0].Seq = 0xB0B, 9
	commitT(t, leader, remote)
	commitT(t, leader, recs("plain", 1, false))
	commitFrom(t, leader, recs("b", 2, false), Source{Origin: testOrigin, Seqs: seqs(5, 2)})
	commitT(t, leader, []Record{{Payload: []byte("r2"), Origin: 0xB0B, Seq: 3}}) // below the 9 before: a run of its own
	if err := leader.Release(leader.End()); err != nil {
		t.Fatal(err)
	}
	want := readAll(t, leader, 0)
	if len(want) != 7 || want[0].Seq != 1 || want[2].Origin != 0xB0B || want[3].Origin != 0 || want[6].Seq != 3 {
		t.Fatalf("leader's records %v", idsOf(want))
	}

	dir := t.TempDir()
	f := openT(t, dir, heldOpts())
	if err := f.Append(want); err != nil {
		t.Fatal(err)
	}
	if err := f.Release(f.End()); err != nil {
		t.Fatal(err)
	}
	sameIDs(t, "follower", readAll(t, f, 0), want)
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	f = openT(t, dir, heldOpts())
	defer f.Close()
	if err := f.Release(f.End()); err != nil {
		t.Fatal(err)
	}
	sameIDs(t, "follower reopened", readAll(t, f, 0), want)
}

// Logs written before the ids flag (testdata/v1log, v2log) read with no
// ids: their records' ids are derived from their offsets.
func TestOldFramesReadWithoutIDs(t *testing.T) {
	for _, name := range []string{"v1log", "v2log"} {
		dir := t.TempDir()
		ents, err := os.ReadDir(filepath.Join("testdata", name))
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range ents {
			b, err := os.ReadFile(filepath.Join("testdata", name, e.Name()))
			if err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(dir, e.Name()), b, 0o644); err != nil {
				t.Fatal(err)
			}
		}
		l := openT(t, dir, Options{SegmentBytes: 1 << 10})
		got := readAll(t, l, 0)
		if len(got) == 0 {
			t.Fatalf("%s: nothing read", name)
		}
		for _, r := range got {
			if r.Origin != 0 || r.Seq != 0 {
				t.Fatalf("%s: record %d has ids %x/%d", name, r.Offset, r.Origin, r.Seq)
			}
		}
		l.Close()
	}
}

// A copy of the partition (a move: the segment files byte for byte, then
// Verify and Install) reads every record with the ids it had.
func TestIDsSurviveACopy(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "src", PartitionDirName(0))
	l := openT(t, dir, Options{SegmentBytes: 4096})
	defer l.Close()
	for i := range 40 {
		commitFrom(t, l, recs("m", 5, true), Source{Origin: testOrigin, Seqs: seqs(uint64(1+10*i), 5)})
	}
	want := readAll(t, l, 0)
	root := t.TempDir()
	s := stageCopy(t, nil, l, filepath.Join(root, "moves", PartitionDirName(0)))
	if _, err := s.Verify(Options{SegmentBytes: 4096}); err != nil {
		t.Fatal(err)
	}
	dst := filepath.Join(root, "topics", PartitionDirName(0))
	if err := s.Install(dst); err != nil {
		t.Fatal(err)
	}
	got := openT(t, dst, Options{SegmentBytes: 4096})
	defer got.Close()
	if want[0].Seq != 1 || want[len(want)-1].Seq != 395 {
		t.Fatalf("source ids %v", idsOf(want[:2]))
	}
	sameIDs(t, "copy", readAll(t, got, 0), want)
}

// A frame whose ids block lies — cut short, too long, bytes left over, a
// seq that overflows — is refused as bad even when its CRC is right; any
// flipped byte of the block fails the CRC.
func TestBadIDsBlockIsABadFrame(t *testing.T) {
	enc, _ := newEncoder(CodecNone, "")
	rs := recs("c", 3, false)
	for i := range rs {
		rs[i].Origin, rs[i].Seq = 0xB0B, uint64(5+i)
	}
	good, err := enc.encode(0, rs, 1, 0, 0, false)
	if err != nil {
		t.Fatal(err)
	}
	good = append([]byte(nil), good...)
	// Layout after the header: origin 8, length 4, three 1-byte seqs.
	idsAt := FrameHeaderSize + 8
	decode := func(b []byte) error {
		h, err := parseHeader(b)
		if err != nil {
			return err
		}
		_, err = decodeFrame(h, b[:FrameHeaderSize], b[FrameHeaderSize:h.frameLen()])
		return err
	}
	if err := decode(good); err != nil {
		t.Fatalf("good frame: %v", err)
	}
	resealed := func(edit func(b []byte)) []byte {
		b := append([]byte(nil), good...)
		edit(b)
		binary.BigEndian.PutUint32(b[23:], frameCRC(b[:FrameHeaderSize], b[FrameHeaderSize:]))
		return b
	}
	for name, b := range map[string][]byte{
		"length past the frame": resealed(func(b []byte) { binary.BigEndian.PutUint32(b[idsAt:], 1<<20) }),
		"length below count":    resealed(func(b []byte) { binary.BigEndian.PutUint32(b[idsAt:], 2) }),
		"length with leftovers": resealed(func(b []byte) { binary.BigEndian.PutUint32(b[idsAt:], 4) }),
		"origin zero":           resealed(func(b []byte) { binary.BigEndian.PutUint64(b[FrameHeaderSize:], 0) }),
		"unterminated varint":   resealed(func(b []byte) { b[idsAt+4+2] = 0x80 }),
		"first seq zero":        resealed(func(b []byte) { b[idsAt+4] = 0 }),
		"flipped seq byte":      func() []byte { b := append([]byte(nil), good...); b[idsAt+5] ^= 1; return b }(),
	} {
		if err := decode(b); !errors.Is(err, errBadFrame) {
			t.Errorf("%s: %v, want a bad frame", name, err)
		}
	}
}
