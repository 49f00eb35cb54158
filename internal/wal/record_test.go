package wal

import (
	"bytes"
	"encoding/binary"
	"errors"
	"math"
	"strings"
	"testing"
)

func encodeT(t testing.TB, r Record, seq uint64) []byte {
	t.Helper()
	n, err := encodedSize(&r)
	if err != nil {
		t.Fatalf("encodedSize: %v", err)
	}
	b := appendRecord(nil, &r, seq, n)
	if len(b) != n {
		t.Fatalf("encoded %d bytes, encodedSize said %d", len(b), n)
	}
	return b
}

func TestRecordRoundTrip(t *testing.T) {
	cases := []struct {
		name string
		rec  Record
	}{
		{"keyless nil key", Record{Topic: "orders", Partition: 2, Payload: []byte("p"), AcceptedAt: 5}},
		{"empty key stays keyless", Record{Topic: "orders", Key: []byte{}, Payload: []byte("p")}},
		{"with key", Record{Topic: "t", Key: []byte("k1"), Partition: 9, Payload: []byte("hello"), AcceptedAt: 1_700_000_000_123}},
		{"empty topic and payload", Record{}},
		{"binary key and payload", Record{Topic: "bin", Key: []byte{0, 0xff, 0}, Payload: []byte{0, 1, 2, 0xff}}},
		{"extreme numbers", Record{Topic: "x", Partition: math.MaxInt32, AcceptedAt: math.MinInt64}},
		{"negative partition kept as given", Record{Topic: "x", Partition: -1}},
		{"longest topic", Record{Topic: strings.Repeat("t", MaxTopicBytes), Payload: []byte("p")}},
	}
	for i, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			seq := uint64(i*1000 + 1)
			b := encodeT(t, tc.rec, seq)
			v, n, err := decodeFrame(append(b, 0xAA, 0xBB)) // trailing bytes are the next frame's
			if err != nil {
				t.Fatalf("decode: %v", err)
			}
			if n != len(b) {
				t.Fatalf("decoded size %d, want %d", n, len(b))
			}
			var a arena
			got := v.record(&a, "")
			if got.Seq != seq || !sameRecord(got, tc.rec) {
				t.Fatalf("round trip = %+v, want %+v seq %d", got, tc.rec, seq)
			}
			if len(tc.rec.Key) == 0 && got.Key != nil {
				t.Fatalf("keyless record decoded with key %q", got.Key)
			}
		})
	}
}

func TestEncodedSizeLimit(t *testing.T) {
	cases := []struct {
		name    string
		rec     Record
		wantErr bool
	}{
		{"exactly at bound", Record{Topic: "t", Payload: make([]byte, MaxRecordBytes-minFrameSize-1)}, false},
		{"one byte over bound", Record{Topic: "t", Payload: make([]byte, MaxRecordBytes-minFrameSize)}, true},
		{"key counts", Record{Topic: "t", Key: make([]byte, 10), Payload: make([]byte, MaxRecordBytes-minFrameSize-10)}, true},
		{"topic over 16 bits", Record{Topic: strings.Repeat("t", MaxTopicBytes+1)}, true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			n, err := encodedSize(&tc.rec)
			if tc.wantErr {
				mustErrIs(t, err, ErrRecordTooLarge)
				return
			}
			if err != nil || n > MaxRecordBytes {
				t.Fatalf("encodedSize = %d, %v; want <= %d, nil", n, err, MaxRecordBytes)
			}
		})
	}
}

func TestDecodeRejects(t *testing.T) {
	good := encodeT(t, Record{Topic: "orders", Key: []byte("k"), Payload: []byte("payload")}, 7)
	mut := func(f func(b []byte) []byte) []byte { return f(bytes.Clone(good)) }
	reCRC := func(b []byte) []byte {
		binary.BigEndian.PutUint32(b[4:8], frameCRC(b))
		return b
	}
	cases := []struct {
		name string
		in   []byte
		want error
	}{
		{"empty", nil, errShortFrame},
		{"partial header", good[:5], errShortFrame},
		{"partial body", good[:len(good)-1], errShortFrame},
		{"length below fixed body", mut(func(b []byte) []byte {
			binary.BigEndian.PutUint32(b[0:4], bodyFixedSizeV1-1)
			return b
		}), errBadLength},
		{"version 2 body shorter than its fixed fields", mut(func(b []byte) []byte {
			binary.BigEndian.PutUint32(b[0:4], bodyFixedSize-1)
			return reCRC(b[:frameHeaderSize+bodyFixedSize-1])
		}), errBadFields},
		{"length above bound", mut(func(b []byte) []byte {
			binary.BigEndian.PutUint32(b[0:4], MaxRecordBytes)
			return b
		}), errBadLength},
		{"length 4 GiB", mut(func(b []byte) []byte {
			binary.BigEndian.PutUint32(b[0:4], math.MaxUint32)
			return b
		}), errBadLength},
		{"payload bit flip", mut(func(b []byte) []byte { b[len(b)-1] ^= 1; return b }), errBadCRC},
		{"crc bit flip", mut(func(b []byte) []byte { b[5] ^= 0x10; return b }), errBadCRC},
		{"seq bit flip", mut(func(b []byte) []byte { b[frameHeaderSize+8] ^= 1; return b }), errBadCRC},
		{"length shrunk, crc not", mut(func(b []byte) []byte {
			binary.BigEndian.PutUint32(b[0:4], binary.BigEndian.Uint32(b[0:4])-1)
			return b
		}), errBadCRC},
		{"unknown version", mut(func(b []byte) []byte { b[frameHeaderSize] = 4; /* 3 is version 2 with headers */ return reCRC(b) }), errBadVersion},
		{"topic length past body", mut(func(b []byte) []byte {
			binary.BigEndian.PutUint16(b[frameHeaderSize+21:], 0xffff)
			return reCRC(b)
		}), errBadFields},
		{"key length past body", mut(func(b []byte) []byte {
			binary.BigEndian.PutUint32(b[frameHeaderSize+23:], 1<<31)
			return reCRC(b)
		}), errBadFields},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, _, err := decodeFrame(tc.in)
			if !errors.Is(err, tc.want) {
				t.Fatalf("decode error %v, want %v", err, tc.want)
			}
			if !isFrameErr(err) {
				t.Fatalf("%v not classified as a frame error", err)
			}
		})
	}
}

func TestArenaCopiesDoNotAlias(t *testing.T) {
	var a arena
	x := a.copy([]byte("abc"))
	y := a.copy([]byte("def"))
	x = append(x, 'Z') // capacity is clipped: must not overwrite y
	if string(y) != "def" || string(x) != "abcZ" {
		t.Fatalf("arena slices alias: x=%q y=%q", x, y)
	}
	if a.copy(nil) != nil {
		t.Fatal("empty copy is not nil")
	}
}
