package wal

import (
	"math"
	"testing"
)

func TestSegmentNames(t *testing.T) {
	cases := []struct {
		name  string
		first uint64
		ok    bool
	}{
		{"00000000000000000001.wal", 1, true},
		{segmentName(math.MaxUint64), math.MaxUint64, true},
		{"00000000000000000001.wal.tmp", 0, false},
		{"0000000000000000001.wal", 0, false},   // 19 digits
		{"000000000000000000001.wal", 0, false}, // 21 digits
		{"0000000000000000000x.wal", 0, false},
		{"99999999999999999999.wal", 0, false}, // overflows uint64
		{"checkpoint", 0, false},
	}
	for _, tc := range cases {
		first, ok := parseSegmentName(tc.name)
		if ok != tc.ok || first != tc.first {
			t.Errorf("parseSegmentName(%q) = %d, %v; want %d, %v", tc.name, first, ok, tc.first, tc.ok)
		}
		if tc.ok && segmentName(first) != tc.name {
			t.Errorf("segmentName(%d) = %q, want %q", first, segmentName(first), tc.name)
		}
	}
}

func TestSegmentSeek(t *testing.T) {
	s := &segment{first: 100}
	for _, e := range []indexEntry{{100, 0}, {150, indexEveryBytes}, {151, indexEveryBytes + 10}, {200, 3 * indexEveryBytes}} {
		s.noteBoundary(e.seq, e.off)
	}
	// {151, +10} is too close to the previous entry to be kept.
	if len(s.index) != 3 {
		t.Fatalf("index %v, want 3 entries", s.index)
	}
	cases := []struct {
		seq     uint64
		wantSeq uint64
		wantOff int64
	}{
		{100, 100, 0},
		{149, 100, 0},
		{150, 150, indexEveryBytes},
		{199, 150, indexEveryBytes},
		{200, 200, 3 * indexEveryBytes},
		{1 << 40, 200, 3 * indexEveryBytes},
	}
	for _, tc := range cases {
		seq, off := s.seek(tc.seq)
		if seq != tc.wantSeq || off != tc.wantOff {
			t.Errorf("seek(%d) = %d@%d, want %d@%d", tc.seq, seq, off, tc.wantSeq, tc.wantOff)
		}
	}
	if seq, off := (&segment{first: 7}).seek(9); seq != 7 || off != 0 {
		t.Errorf("seek on empty index = %d@%d, want 7@0", seq, off)
	}
}
