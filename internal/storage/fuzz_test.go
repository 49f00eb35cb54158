package storage

import (
	"slices"
	"testing"

	"github.com/narad-io/narad/internal/header"
)

// FuzzDecodeFrame feeds arbitrary bytes to the frame decoder: it must never
// panic, and it must refuse any header whose sizes pass the frame bound
// before allocating for them.
func FuzzDecodeFrame(f *testing.F) {
	enc, _ := newEncoder(CodecNone, "")
	frame, _ := enc.encode(7, recs("seed", 3, true), 1234, 0, 0, false)
	f.Add(append([]byte(nil), frame...))
	zenc, _ := newEncoder(CodecZstd, "fastest")
	zframe, _ := zenc.encode(0, recs("z", 5, false), 99, 0, 0, false)
	f.Add(append([]byte(nil), zframe...))
	sframe, _ := enc.encode(3, recs("src", 2, true), 5, 0xA11CE, 42, true)
	f.Add(append([]byte(nil), sframe...))
	zsframe, _ := zenc.encode(3, recs("zsrc", 4, false), 5, 0xA11CE, 42, false)
	f.Add(append([]byte(nil), zsframe...))
	f.Add([]byte{0xCA, 0xFE})
	for _, e := range []*frameEncoder{enc, zenc} {
		idrecs := recs("ids", 3, true)
		for i := range idrecs {
			idrecs[i].Origin, idrecs[i].Seq = 0xA11CE, uint64(40+i*i)
		}
		iframe, _ := e.encode(3, idrecs, 5, 0xA11CE, 44, false) // source and ids
		f.Add(append([]byte(nil), iframe...))
		iframe, _ = e.encode(3, idrecs, 5, 0, 0, false) // ids alone
		f.Add(append([]byte(nil), iframe...))
	}
	withHeaders := recs("hdr", 2, true)
	withHeaders[1].Headers = []header.Header{{Name: "x", Value: "y"}}
	hframe, _ := enc.encode(3, withHeaders, 5, 0, 0, false)
	f.Add(append([]byte(nil), hframe...))
	f.Fuzz(func(t *testing.T, b []byte) {
		h, err := parseHeader(b)
		if err != nil {
			return
		}
		if h.storedSize > MaxFrameBytes || h.rawSize > MaxFrameBytes {
			t.Fatalf("header with sizes %d/%d passed the bound", h.storedSize, h.rawSize)
		}
		if int64(len(b)) < h.frameLen() {
			return
		}
		recs, err := decodeFrame(h, b[:FrameHeaderSize], b[FrameHeaderSize:h.frameLen()])
		if err != nil {
			return
		}
		if len(recs) != int(h.count) {
			t.Fatalf("decoded %d records, header says %d", len(recs), h.count)
		}
		for i, r := range recs {
			if r.Offset != h.base+uint64(i) {
				t.Fatalf("record %d has offset %d", i, r.Offset)
			}
			if h.ids != (r.Origin != 0 && r.Seq != 0) || (i > 0 && h.ids && r.Seq <= recs[i-1].Seq) {
				t.Fatalf("record %d: ids flag %v, origin %x seq %d", i, h.ids, r.Origin, r.Seq)
			}
		}
	})
}

// FuzzDecodeRecord: arbitrary bytes never panic, and a decoded record
// re-encodes to the same bytes.
func FuzzDecodeRecord(f *testing.F) {
	r := Record{Key: []byte("k"), Payload: []byte("payload")}
	f.Add(appendRecord(nil, &r, 42))
	r2 := Record{Payload: []byte{0, 1, 2}}
	f.Add(appendRecord(nil, &r2, -1))
	f.Add([]byte{0x02, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01})
	r3 := Record{Key: []byte("k"), Payload: []byte("p"), Headers: []header.Header{{Name: "a", Value: "b"}, {Name: "c", Value: ""}}}
	f.Add(appendRecord(nil, &r3, 7))
	f.Add([]byte{0x03, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 0xff, 0xff, 0x0f, 1, 'a'})
	f.Fuzz(func(t *testing.T, b []byte) {
		rec, err := decodeRecord(b)
		if err != nil {
			return
		}
		again := appendRecord(nil, &rec, rec.CommittedAt)
		if rec.encodedLen() != len(again) {
			t.Fatalf("encodedLen %d, encoded %d", rec.encodedLen(), len(again))
		}
		// Uvarints have several encodings of small numbers; compare decoded fields.
		back, err := decodeRecord(again)
		if err != nil || string(back.Key) != string(rec.Key) || string(back.Payload) != string(rec.Payload) || back.CommittedAt != rec.CommittedAt ||
			!slices.Equal(back.Headers, rec.Headers) {
			t.Fatalf("re-encode mismatch: %+v vs %+v (%v)", back, rec, err)
		}
	})
}

func TestFrameBoundOnWrite(t *testing.T) {
	for _, codec := range []Codec{CodecNone, CodecZstd} {
		enc, _ := newEncoder(codec, "")
		enc.limit = 1000 // stands in for 256 MiB; the check is the same line
		if _, err := enc.encode(0, payloads(3, 300), 1, 0, 0, false); err != nil {
			t.Fatalf("%v: frame under the bound refused: %v", codec, err)
		}
		if _, err := enc.encode(0, payloads(4, 300), 1, 0, 0, false); err != ErrFrameTooLarge {
			t.Fatalf("%v: frame over the bound: %v", codec, err)
		}
	}
}

func TestParseHeaderRules(t *testing.T) {
	enc, _ := newEncoder(CodecNone, "")
	good, _ := enc.encode(0, recs("x", 2, false), 1, 0, 0, false)
	hdr := append([]byte(nil), good[:FrameHeaderSize]...)
	cases := []struct {
		name string
		mut  func(b []byte)
	}{
		{"bad magic", func(b []byte) { b[0] = 0 }},
		{"unknown codec", func(b []byte) { b[2] = 5 }},
		{"unknown flag bits", func(b []byte) { b[2] = 0x80 }},
		{"zero records", func(b []byte) { b[3], b[4], b[5], b[6] = 0, 0, 0, 0 }},
		{"stored over bound", func(b []byte) { b[19] = 0x20 }},
		{"raw over bound", func(b []byte) { b[15] = 0x20 }},
		{"more records than bytes", func(b []byte) { b[3] = 0x10 }},
	}
	if _, err := parseHeader(hdr); err != nil {
		t.Fatalf("good header refused: %v", err)
	}
	for _, c := range cases {
		b := append([]byte(nil), hdr...)
		c.mut(b)
		if _, err := parseHeader(b); err == nil {
			t.Errorf("%s: accepted", c.name)
		}
	}
}
