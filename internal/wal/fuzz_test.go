package wal

import (
	"bytes"
	"encoding/binary"
	"errors"
	"io"
	"math"
	"os"
	"path/filepath"
	"testing"

	"github.com/narad-io/narad/internal/header"
)

// fuzzSeeds are frames and near-frames that start the fuzzers in the
// interesting corners: valid records, truncations, lying lengths.
func fuzzSeeds(f *testing.F) [][]byte {
	one := encodeT(f, Record{Topic: "orders", Key: []byte("k"), Partition: 3, Payload: []byte("hello"), AcceptedAt: 42}, 1)
	two := append(bytes.Clone(one), encodeT(f, Record{Topic: "orders", Payload: []byte("world")}, 2)...)
	huge := bytes.Clone(one)
	binary.BigEndian.PutUint32(huge[0:4], math.MaxUint32)
	atBound := bytes.Clone(one)
	binary.BigEndian.PutUint32(atBound[0:4], MaxRecordBytes-frameHeaderSize)
	withHeaders := encodeT(f, Record{Topic: "orders", Payload: []byte("h"), Incarnation: 9,
		Headers: []header.Header{{Name: "a", Value: "b"}, {Name: "trace", Value: "ü"}}}, 3)
	lyingHeaders := bytes.Clone(withHeaders)
	binary.BigEndian.PutUint32(lyingHeaders[frameHeaderSize+35:], math.MaxUint32)
	flipped := bytes.Clone(two)
	flipped[len(one)+12] ^= 0x40
	return [][]byte{
		nil,
		{0},
		one,
		two,
		one[:len(one)-1],
		one[:frameHeaderSize],
		huge,
		atBound,
		flipped,
		withHeaders,
		lyingHeaders,
		append(bytes.Clone(one), make([]byte, 64)...),
		bytes.Repeat([]byte{0xff}, 100),
	}
}

// FuzzDecodeRecord feeds arbitrary bytes to the record decoder and to the
// file scanner that recovery and Read use. Neither may panic; a successful
// decode must re-encode to exactly the bytes consumed; and the scanner must
// not allocate more than the input (plus its read-ahead chunk) whatever the
// length fields claim.
func FuzzDecodeRecord(f *testing.F) {
	for _, s := range fuzzSeeds(f) {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		v, n, err := decodeFrame(data)
		if err != nil {
			if !isFrameErr(err) {
				t.Fatalf("decode error %v is not a frame error", err)
			}
		} else {
			if n < minFrameSizeV1 || n > len(data) || n > MaxRecordBytes {
				t.Fatalf("decoded size %d out of range (input %d bytes)", n, len(data))
			}
			var a arena
			r := v.record(&a, "")
			// Versions 2 and 3 are written; a version-1 frame re-encodes
			// as version 2.
			if ver := data[frameHeaderSize]; ver == recordVersion || ver == recordVersionV3 {
				if again := encodeT(t, r, v.seq); !bytes.Equal(again, data[:n]) {
					t.Fatalf("re-encoding differs:\n got %x\nwant %x", again, data[:n])
				}
			}
		}

		// Decoding aliases the input: a valid frame costs no allocation, an
		// invalid one only its small error value.
		allocs := testing.AllocsPerRun(1, func() { decodeFrame(data) })
		if !raceEnabled && ((err == nil && allocs != 0) || allocs > 3) {
			t.Fatalf("decodeFrame allocated %v times (err %v)", allocs, err)
		}

		var sc scanner
		sc.reset(bytes.NewReader(data))
		off := int64(0)
		for {
			_, n, err := sc.frame(off, int64(len(data)))
			if err != nil {
				if err != io.EOF && !isFrameErr(err) {
					t.Fatalf("scanner error %v at %d is neither EOF nor a frame error", err, off)
				}
				break
			}
			off += int64(n)
		}
		if _, _, err := sc.validFrameAfter(0, int64(len(data)), 0); err != nil {
			t.Fatalf("validFrameAfter over bytes in memory: %v", err)
		}
		// Whatever the length fields claim, no buffer may exceed the bytes
		// actually present (nor the record bound).
		if sc.largestAlloc > len(data) || sc.largestAlloc > max(readChunk, MaxRecordBytes) {
			t.Fatalf("scanning %d bytes allocated a %d-byte buffer", len(data), sc.largestAlloc)
		}
	})
}

// FuzzOpenSegment writes arbitrary bytes as the only segment and opens the
// WAL. Open must not panic; it either refuses with a CorruptError or
// recovers a clean, contiguous log that accepts the next append.
func FuzzOpenSegment(f *testing.F) {
	for _, s := range fuzzSeeds(f) {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		dir := t.TempDir()
		path := filepath.Join(dir, segmentName(1))
		if err := os.WriteFile(path, data, 0o644); err != nil {
			t.Fatal(err)
		}
		w, err := Open(dir, Options{})
		if err != nil {
			var ce *CorruptError
			if !errors.As(err, &ce) || ce.Path != path || ce.Offset < 0 || ce.Offset >= int64(len(data)) {
				t.Fatalf("Open refused with %v; want a CorruptError inside %s", err, path)
			}
			return
		}
		defer w.Close()
		recs, err := w.Read(1, math.MaxInt32, 0)
		if err != nil {
			t.Fatalf("Read after recovery: %v", err)
		}
		if uint64(len(recs)) != w.LastSeq() {
			t.Fatalf("read %d records, LastSeq %d", len(recs), w.LastSeq())
		}
		for i, r := range recs {
			if r.Seq != uint64(i+1) {
				t.Fatalf("record %d has seq %d", i, r.Seq)
			}
		}
		if got := fileSize(t, path); got != w.SizeBytes() {
			t.Fatalf("segment is %d bytes after recovery, SizeBytes %d", got, w.SizeBytes())
		}
		next := []Record{{Topic: "t", Payload: []byte("p")}}
		if err := w.Append(t.Context(), next); err != nil || next[0].Seq != uint64(len(recs)+1) {
			t.Fatalf("Append after recovery: seq %d, %v", next[0].Seq, err)
		}
	})
}
