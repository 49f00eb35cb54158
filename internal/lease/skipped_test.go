package lease

import (
	"slices"
	"testing"
)

func TestSkipSetAdd(t *testing.T) {
	tests := []struct {
		name    string
		initial []span
		add     span
		already uint64
		want    []span
	}{
		{"into empty", nil, span{3, 5}, 0, []span{{3, 5}}},
		{"empty range", []span{{3, 5}}, span{7, 7}, 0, []span{{3, 5}}},
		{"disjoint before", []span{{10, 12}}, span{3, 5}, 0, []span{{3, 5}, {10, 12}}},
		{"disjoint after", []span{{3, 5}}, span{10, 12}, 0, []span{{3, 5}, {10, 12}}},
		{"adjacent below merges", []span{{5, 8}}, span{3, 5}, 0, []span{{3, 8}}},
		{"adjacent above merges", []span{{3, 5}}, span{5, 8}, 0, []span{{3, 8}}},
		{"overlap", []span{{3, 6}}, span{5, 9}, 1, []span{{3, 9}}},
		{"contained", []span{{3, 10}}, span{4, 6}, 2, []span{{3, 10}}},
		{"covers several", []span{{2, 3}, {5, 6}, {8, 9}, {20, 21}}, span{1, 10}, 3, []span{{1, 10}, {20, 21}}},
		{"bridges two", []span{{1, 3}, {5, 7}}, span{3, 5}, 0, []span{{1, 7}}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := skipSet{spans: slices.Clone(tc.initial)}
			if got := s.add(tc.add.lo, tc.add.hi); got != tc.already {
				t.Fatalf("add returned %d already, want %d", got, tc.already)
			}
			if !slices.Equal(s.spans, tc.want) {
				t.Fatalf("spans = %v, want %v", s.spans, tc.want)
			}
		})
	}
}

func TestSkipSetQueries(t *testing.T) {
	s := skipSet{spans: []span{{3, 5}, {10, 12}}}
	for x, want := range map[uint64]bool{0: false, 2: false, 3: true, 4: true, 5: false, 9: false, 10: true, 11: true, 12: false} {
		if got := s.contains(x); got != want {
			t.Errorf("contains(%d) = %v, want %v", x, got, want)
		}
	}
	if _, ok := s.takeFront(2); ok {
		t.Fatal("takeFront(2) took a span starting at 3")
	}
	if sp, ok := s.takeFront(3); !ok || sp != (span{3, 5}) {
		t.Fatalf("takeFront(3) = %v, %v", sp, ok)
	}
	s.dropBelow(12)
	if s.len() != 0 {
		t.Fatalf("dropBelow(12) left %v", s.spans)
	}
	s = skipSet{spans: []span{{3, 5}, {10, 12}}}
	s.dropBelow(11)
	if !slices.Equal(s.spans, []span{{10, 12}}) {
		t.Fatalf("dropBelow(11) = %v, want the span containing 11 kept", s.spans)
	}
}
