package dispatch

import (
	"context"
	"errors"
	"testing"
)

// fakeIncarnations is a metastore as LeaderDiscarder sees it.
type fakeIncarnations struct {
	cur      uint64
	present  bool
	caughtUp bool
	gone     bool
	err      error
	asked    int // ConfirmIncarnationGone calls
}

func (f *fakeIncarnations) CurrentIncarnation(string) (uint64, bool) { return f.cur, f.present }
func (f *fakeIncarnations) AppliedCaughtUp() bool                    { return f.caughtUp }
func (f *fakeIncarnations) ConfirmIncarnationGone(ctx context.Context, _ string, _ uint64) (bool, error) {
	f.asked++
	if _, ok := ctx.Deadline(); !ok {
		return false, errors.New("asked the leader without a deadline")
	}
	return f.gone, f.err
}

// Records go only when this replica does not hold their incarnation as
// current, is caught up, and the leader confirms; the leader is not asked
// while this replica's view alone keeps them.
func TestLeaderDiscarder(t *testing.T) {
	cases := []struct {
		name      string
		ms        fakeIncarnations
		inc       uint64
		want      bool
		wantAsked bool
	}{
		{"current incarnation", fakeIncarnations{cur: 5, present: true, caughtUp: true, gone: true}, 5, false, false},
		{"record without incarnation", fakeIncarnations{cur: 5, present: true, caughtUp: true, gone: true}, 0, false, false},
		{"topic without incarnation", fakeIncarnations{cur: 0, present: true, caughtUp: true, gone: true}, 5, false, false},
		{"re-created, confirmed", fakeIncarnations{cur: 7, present: true, caughtUp: true, gone: true}, 5, true, true},
		{"absent, confirmed", fakeIncarnations{caughtUp: true, gone: true}, 5, true, true},
		{"absent, behind the leader", fakeIncarnations{gone: true}, 5, false, false},
		{"absent, leader says current", fakeIncarnations{caughtUp: true}, 5, false, true},
		{"absent, leader unreachable", fakeIncarnations{caughtUp: true, gone: true, err: errors.New("no leader")}, 5, false, true},
	}
	for _, c := range cases {
		ms := c.ms
		got := LeaderDiscarder(&ms)(context.Background(), "orders", c.inc)
		if got != c.want || (ms.asked > 0) != c.wantAsked {
			t.Errorf("%s: discard = %v (leader asked %d times), want %v (asked: %v)", c.name, got, ms.asked, c.want, c.wantAsked)
		}
	}
}
