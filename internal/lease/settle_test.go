package lease

import (
	"errors"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/narad-io/narad/internal/clock"
)

// step is one settling action in a frontier scenario. Offsets 0..9 are
// leased before the first step.
type step struct {
	op           string // "ack", "skip", "advance"
	a, b         uint64 // ack: offset a; skip: [a, b); advance: to a
	wantFrontier uint64
	wantNewly    int // skip only
}

func TestFrontierAdvance(t *testing.T) {
	tests := []struct {
		name  string
		steps []step
	}{
		{"acks in order", []step{
			{op: "ack", a: 0, wantFrontier: 1},
			{op: "ack", a: 1, wantFrontier: 2},
		}},
		{"acks in reverse close the gap at once", []step{
			{op: "ack", a: 2, wantFrontier: 0},
			{op: "ack", a: 1, wantFrontier: 0},
			{op: "ack", a: 0, wantFrontier: 3},
		}},
		{"gap in the middle holds the frontier", []step{
			{op: "ack", a: 0, wantFrontier: 1},
			{op: "ack", a: 2, wantFrontier: 1},
			{op: "ack", a: 3, wantFrontier: 1},
			{op: "ack", a: 1, wantFrontier: 4},
		}},
		{"skip at frontier advances", []step{
			{op: "skip", a: 0, b: 3, wantFrontier: 3, wantNewly: 3},
		}},
		{"skip above gap waits, then frontier jumps the range", []step{
			{op: "skip", a: 3, b: 6, wantFrontier: 0, wantNewly: 3},
			{op: "ack", a: 1, wantFrontier: 0},
			{op: "ack", a: 2, wantFrontier: 0},
			{op: "ack", a: 0, wantFrontier: 6},
		}},
		{"acked-ahead and skipped interleaved in one run", []step{
			{op: "ack", a: 1, wantFrontier: 0},
			{op: "skip", a: 2, b: 4, wantFrontier: 0, wantNewly: 2},
			{op: "ack", a: 4, wantFrontier: 0},
			{op: "skip", a: 6, b: 8, wantFrontier: 0, wantNewly: 2},
			{op: "ack", a: 5, wantFrontier: 0},
			{op: "ack", a: 0, wantFrontier: 8},
		}},
		{"skip closes a gap between acked-ahead runs", []step{
			{op: "ack", a: 0, wantFrontier: 1},
			{op: "ack", a: 3, wantFrontier: 1},
			{op: "ack", a: 4, wantFrontier: 1},
			{op: "skip", a: 1, b: 3, wantFrontier: 5, wantNewly: 2},
		}},
		{"overlapping skips count only new offsets", []step{
			{op: "skip", a: 4, b: 7, wantFrontier: 0, wantNewly: 3},
			{op: "skip", a: 5, b: 9, wantFrontier: 0, wantNewly: 2},
			{op: "skip", a: 2, b: 4, wantFrontier: 0, wantNewly: 2},
			{op: "skip", a: 0, b: 2, wantFrontier: 9, wantNewly: 2},
		}},
		{"skip over acked-ahead counts only unsettled", []step{
			{op: "ack", a: 3, wantFrontier: 0},
			{op: "skip", a: 2, b: 5, wantFrontier: 0, wantNewly: 2},
		}},
		{"skip below frontier is ignored", []step{
			{op: "ack", a: 0, wantFrontier: 1},
			{op: "ack", a: 1, wantFrontier: 2},
			{op: "skip", a: 0, b: 2, wantFrontier: 2, wantNewly: 0},
			{op: "skip", a: 5, b: 5, wantFrontier: 2, wantNewly: 0},
			{op: "skip", a: 6, b: 5, wantFrontier: 2, wantNewly: 0},
		}},
		{"skip straddling the frontier", []step{
			{op: "ack", a: 0, wantFrontier: 1},
			{op: "skip", a: 0, b: 3, wantFrontier: 3, wantNewly: 2},
		}},
		{"advance over acked-ahead then carry the run above", []step{
			{op: "ack", a: 2, wantFrontier: 0},
			{op: "ack", a: 5, wantFrontier: 0},
			{op: "ack", a: 6, wantFrontier: 0},
			{op: "advance", a: 5, wantFrontier: 7},
		}},
		{"advance into a skipped range", []step{
			{op: "skip", a: 3, b: 8, wantFrontier: 0, wantNewly: 5},
			{op: "advance", a: 4, wantFrontier: 8},
		}},
		{"advance below frontier is a no-op", []step{
			{op: "ack", a: 0, wantFrontier: 1},
			{op: "advance", a: 0, wantFrontier: 1},
			{op: "advance", a: 1, wantFrontier: 1},
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			tb, _ := newTable(t, defaultLimits)
			m := byOffset(tb.Reserve(10, 10))
			prevVersion := tb.Stats().FrontierVersion
			prevFrontier := tb.Frontier()
			for i, s := range tc.steps {
				switch s.op {
				case "ack":
					mustNil(t, fmt.Sprintf("step %d ack %d", i, s.a), tb.Ack(s.a, m[s.a].Nonce))
				case "skip":
					if n := tb.MarkSkipped(s.a, s.b); n != s.wantNewly {
						t.Fatalf("step %d MarkSkipped(%d, %d) = %d, want %d", i, s.a, s.b, n, s.wantNewly)
					}
				case "advance":
					tb.AdvanceTo(s.a)
				}
				f, v := tb.FrontierVersion()
				if f != s.wantFrontier {
					t.Fatalf("step %d (%s %d): frontier %d, want %d", i, s.op, s.a, f, s.wantFrontier)
				}
				if moved := f != prevFrontier; moved != (v != prevVersion) {
					t.Fatalf("step %d: frontier %d->%d but version %d->%d", i, prevFrontier, f, prevVersion, v)
				}
				prevFrontier, prevVersion = f, v
			}
			checkInternal(t, tb)
		})
	}
}

// Reserve leaves room for every ack: with MaxAckedAhead 2 it hands out the
// frontier record and two above it, no more, and every ack is accepted.
func TestAckRoomBoundsReserve(t *testing.T) {
	l := defaultLimits
	l.MaxAckedAhead = 2
	tb, _ := newTable(t, l)
	first := tb.Reserve(10, 6)
	if !slices.Equal(offsets(first), []uint64{0, 1, 2}) {
		t.Fatalf("Reserve = %v, want [0 1 2]: the frontier record and room for two acks above it", offsets(first))
	}
	m := byOffset(first)
	if got := tb.Reserve(10, 6); len(got) != 0 {
		t.Fatalf("no ack room left: Reserve = %v, want none", offsets(got))
	}
	mustNil(t, "ack 2", tb.Ack(2, m[2].Nonce)) // joins acked-ahead: still no room
	if got := tb.Reserve(10, 6); len(got) != 0 {
		t.Fatalf("acked-ahead 1 + lease 1 above the frontier: Reserve = %v, want none", offsets(got))
	}
	mustNil(t, "ack 0", tb.Ack(0, m[0].Nonce)) // frontier 1, whose lease is now the frontier's
	got := tb.Reserve(10, 6)
	if !slices.Equal(offsets(got), []uint64{3}) {
		t.Fatalf("Reserve = %v, want [3]", offsets(got))
	}
	mustNil(t, "ack 3", tb.Ack(3, got[0].Nonce))
	mustNil(t, "ack 1", tb.Ack(1, m[1].Nonce))
	if f := tb.Frontier(); f != 4 {
		t.Fatalf("frontier = %d, want 4", f)
	}
	if got := tb.Reserve(10, 6); !slices.Equal(offsets(got), []uint64{4, 5, 6}) {
		t.Fatalf("Reserve = %v, want [4 5 6]", offsets(got))
	}
	checkInternal(t, tb)
}

// The acked-ahead set can only fill when MaxAckedAhead is lowered under
// what is already out; then acks above the gap are refused (the lease
// stays live) and Reserve hands out only the frontier record.
func TestAckedAheadFullAndUnstick(t *testing.T) {
	l := defaultLimits
	l.MaxAckedAhead = 4
	tb, _ := newTable(t, l)
	m := byOffset(tb.Reserve(10, 6)) // 0..4
	mustNil(t, "ack 1", tb.Ack(1, m[1].Nonce))
	mustNil(t, "ack 2", tb.Ack(2, m[2].Nonce))
	l.MaxAckedAhead = 2
	tb.SetLimits(l)
	if err := tb.Ack(4, m[4].Nonce); !errors.Is(err, ErrAckedAheadFull) {
		t.Fatalf("third ack above the gap = %v, want ErrAckedAheadFull", err)
	}
	// The refused ack leaves the lease live.
	mustNil(t, "extend after refused ack", tb.Extend(4, m[4].Nonce, 0))
	if s := tb.Stats(); !s.Unsticking || s.AckedAhead != 2 || s.InFlight != 3 {
		t.Fatalf("Stats = %+v, want Unsticking, AckedAhead 2, InFlight 3 (0, 3, 4)", s)
	}
	// Frontier record (0) is leased: nothing at all is handed out, even
	// though 5..9 are free and in-flight room remains.
	if got := tb.Reserve(10, 10); len(got) != 0 {
		t.Fatalf("unstick with frontier leased: Reserve = %v, want none", offsets(got))
	}
	// Once the frontier record is free, it and only it is handed out.
	mustNil(t, "nack 0", tb.Nack(0, m[0].Nonce))
	got := tb.Reserve(10, 10)
	if !slices.Equal(offsets(got), []uint64{0}) {
		t.Fatalf("unstick: Reserve = %v, want only the frontier record [0]", offsets(got))
	}
	if got := tb.Reserve(10, 10); len(got) != 0 {
		t.Fatalf("unstick, frontier re-leased: Reserve = %v, want none", offsets(got))
	}
	// An ack of the frontier record is never refused, and closes the gap.
	mustNil(t, "ack 0", tb.Ack(0, got[0].Nonce))
	if f := tb.Frontier(); f != 3 {
		t.Fatalf("frontier = %d, want 3", f)
	}
	// Room again: the earlier refused ack now succeeds; normal reserve
	// resumes within the ack room (3 at the frontier, 4 acked-ahead).
	mustNil(t, "retry ack 4", tb.Ack(4, m[4].Nonce))
	if got := tb.Reserve(10, 10); !slices.Equal(offsets(got), []uint64{5}) {
		t.Fatalf("after unstick: Reserve = %v, want [5]", offsets(got))
	}
	// Expiry of the frontier record in unstick mode hands it out again.
	l.MaxAckedAhead = 4
	tb2, clk2 := newTable(t, l)
	m2 := byOffset(tb2.Reserve(10, 4))
	mustNil(t, "ack 1", tb2.Ack(1, m2[1].Nonce))
	mustNil(t, "ack 2", tb2.Ack(2, m2[2].Nonce))
	l.MaxAckedAhead = 2
	tb2.SetLimits(l)
	clk2.Advance(vt)
	if got := tb2.Reserve(10, 10); !slices.Equal(offsets(got), []uint64{0}) {
		t.Fatalf("unstick after expiry: Reserve = %v, want [0]", offsets(got))
	}
	checkInternal(t, tb)
	checkInternal(t, tb2)
}

func TestUnstickRespectsInFlightCap(t *testing.T) {
	l := Limits{VisibilityTimeout: vt, MaxInFlight: 3, MaxAckedAhead: 2}
	tb, _ := newTable(t, l)
	m := byOffset(tb.Reserve(10, 3)) // 0, 1, 2
	mustNil(t, "ack 2", tb.Ack(2, m[2].Nonce))
	mustNil(t, "nack 0", tb.Nack(0, m[0].Nonce))
	// Acked-ahead full (lowered to 1), frontier record free, but the cap
	// is reached: the spec's flow-control rule wins, nothing is handed out.
	l.MaxAckedAhead, l.MaxInFlight = 1, 1
	tb.SetLimits(l)
	if got := tb.Reserve(10, 5); len(got) != 0 {
		t.Fatalf("at the cap in unstick mode: Reserve = %v, want none", offsets(got))
	}
	l.MaxInFlight = 3
	tb.SetLimits(l)
	if got := tb.Reserve(10, 5); !slices.Equal(offsets(got), []uint64{0}) {
		t.Fatalf("below the cap in unstick mode: Reserve = %v, want [0]", offsets(got))
	}
}

func TestSerialModeWithZeroAckedAhead(t *testing.T) {
	l := Limits{VisibilityTimeout: vt, MaxInFlight: 10, MaxAckedAhead: 0}
	tb, _ := newTable(t, l)
	for want := uint64(0); want < 5; want++ {
		got := tb.Reserve(5, 10)
		if !slices.Equal(offsets(got), []uint64{want}) {
			t.Fatalf("serial mode: Reserve = %v, want [%d]", offsets(got), want)
		}
		mustNil(t, "ack", tb.Ack(got[0].Offset, got[0].Nonce))
	}
	if tb.Frontier() != 5 {
		t.Fatalf("frontier = %d, want 5", tb.Frontier())
	}
}

func TestMarkSkippedDropsLeasesAndCounts(t *testing.T) {
	tb, _ := newTable(t, defaultLimits)
	m := byOffset(tb.Reserve(10, 6)) // 0..5
	mustNil(t, "ack 4", tb.Ack(4, m[4].Nonce))
	if n := tb.MarkSkipped(2, 6); n != 3 { // 2, 3, 5 newly; 4 already acked
		t.Fatalf("MarkSkipped(2, 6) = %d, want 3", n)
	}
	for _, off := range []uint64{2, 3, 5} {
		if err := tb.Ack(off, m[off].Nonce); !errors.Is(err, ErrGone) {
			t.Fatalf("ack of skipped %d = %v, want ErrGone", off, err)
		}
	}
	s := tb.Stats()
	if s.InFlight != 2 || s.AckedAhead != 0 || s.Skipped != 3 || s.SkippedRanges != 1 || s.Frontier != 0 {
		t.Fatalf("Stats = %+v", s)
	}
	// Skipped offsets are never handed out; reading resumes after them.
	if got := tb.Reserve(10, 10); !slices.Equal(offsets(got), []uint64{6, 7, 8, 9}) {
		t.Fatalf("Reserve = %v, want [6 7 8 9]", offsets(got))
	}
	mustNil(t, "ack 0", tb.Ack(0, m[0].Nonce))
	mustNil(t, "ack 1", tb.Ack(1, m[1].Nonce))
	if s := tb.Stats(); s.Frontier != 6 || s.SkippedRanges != 0 {
		t.Fatalf("after closing the gap Stats = %+v, want frontier 6, no ranges", s)
	}
	checkInternal(t, tb)
}

func TestMarkSkippedHugeRangeIsCheap(t *testing.T) {
	tb, _ := newTable(t, defaultLimits)
	tb.Reserve(10, 1)
	const huge = 1 << 40
	if n := tb.MarkSkipped(5, huge); n != huge-5 {
		t.Fatalf("MarkSkipped = %d, want %d", n, huge-5)
	}
	if got := tb.Reserve(huge+3, 10); !slices.Equal(offsets(got), []uint64{1, 2, 3, 4, huge, huge + 1, huge + 2}) {
		t.Fatalf("Reserve across a huge skipped range = %v", offsets(got))
	}
	tb.AdvanceTo(huge - 1)
	if f := tb.Frontier(); f != huge {
		t.Fatalf("frontier = %d, want %d", f, uint64(huge))
	}
}

func TestAdvanceTo(t *testing.T) {
	tb, _ := newTable(t, defaultLimits)
	m := byOffset(tb.Reserve(20, 10)) // 0..9
	mustNil(t, "ack 3", tb.Ack(3, m[3].Nonce))
	mustNil(t, "ack 7", tb.Ack(7, m[7].Nonce))
	mustNil(t, "nack 5", tb.Nack(5, m[5].Nonce))
	tb.MarkSkipped(12, 14)
	tb.AdvanceTo(6)

	s := tb.Stats()
	// 0..5 passed over: 3 was acked; 5 was free; so 5 unsettled offsets dropped.
	if s.Frontier != 6 || s.InFlight != 3 || s.AckedAhead != 1 || s.RetentionDropped != 5 || s.SkippedRanges != 1 {
		t.Fatalf("Stats = %+v, want frontier 6, InFlight 3 (6, 8, 9), AckedAhead 1 (7), dropped 5", s)
	}
	for off := uint64(0); off < 6; off++ {
		if l, ok := m[off]; ok {
			if err := tb.Extend(off, l.Nonce, 0); !errors.Is(err, ErrGone) {
				t.Fatalf("extend of %d below the new frontier = %v, want ErrGone", off, err)
			}
		}
	}
	// The freed offset 5 is below the frontier now and must not come back.
	if got := tb.Reserve(20, 3); !slices.Equal(offsets(got), []uint64{10, 11, 14}) {
		t.Fatalf("Reserve = %v, want [10 11 14]", offsets(got))
	}
	mustNil(t, "ack 6", tb.Ack(6, m[6].Nonce))
	if f := tb.Frontier(); f != 8 {
		t.Fatalf("frontier = %d, want 8 (6 acked, 7 acked-ahead)", f)
	}
	tb.AdvanceTo(13)
	if s := tb.Stats(); s.Frontier != 14 || s.SkippedRanges != 0 {
		t.Fatalf("AdvanceTo(13) into skipped [12,14): Stats %+v, want frontier 14", s)
	}
	checkInternal(t, tb)
}

func TestAdvanceToBeyondHWM(t *testing.T) {
	tb, _ := newTable(t, defaultLimits)
	tb.AdvanceTo(100)
	if got := tb.Reserve(50, 5); len(got) != 0 {
		t.Fatalf("Reserve below the frontier = %v, want none", offsets(got))
	}
	if got := tb.Reserve(102, 5); !slices.Equal(offsets(got), []uint64{100, 101}) {
		t.Fatalf("Reserve = %v, want [100 101]", offsets(got))
	}
}

func TestSetLimitsLive(t *testing.T) {
	t.Run("raise and lower in-flight", func(t *testing.T) {
		tb, _ := newTable(t, Limits{VisibilityTimeout: vt, MaxInFlight: 2, MaxAckedAhead: 10})
		ls := tb.Reserve(100, 10)
		if len(ls) != 2 {
			t.Fatalf("got %d, want 2", len(ls))
		}
		tb.SetLimits(Limits{VisibilityTimeout: vt, MaxInFlight: 5, MaxAckedAhead: 10})
		if got := tb.Reserve(100, 10); len(got) != 3 {
			t.Fatalf("after raise got %d, want 3 more", len(got))
		}
		tb.SetLimits(Limits{VisibilityTimeout: vt, MaxInFlight: 3, MaxAckedAhead: 10})
		mustNil(t, "ack", tb.Ack(ls[0].Offset, ls[0].Nonce))
		if got := tb.Reserve(100, 10); len(got) != 0 {
			t.Fatalf("4 out with cap 3: got %v, want none", offsets(got))
		}
		mustNil(t, "ack", tb.Ack(ls[1].Offset, ls[1].Nonce))
		if got := tb.Reserve(100, 10); len(got) != 0 {
			t.Fatalf("3 out with cap 3: got %v, want none", offsets(got))
		}
		if s := tb.Stats(); s.InFlight != 3 {
			t.Fatalf("InFlight = %d", s.InFlight)
		}
	})
	t.Run("visibility timeout: existing leases keep expiry", func(t *testing.T) {
		tb, clk := newTable(t, defaultLimits)
		t0 := clk.Now()
		old := reserveOne(t, tb, 10)
		tb.SetLimits(Limits{VisibilityTimeout: time.Minute, MaxInFlight: 100, MaxAckedAhead: 100})
		fresh := reserveOne(t, tb, 10)
		if !fresh.Expiry.Equal(t0.Add(time.Minute)) {
			t.Fatalf("new lease expiry %v, want now+1m", fresh.Expiry)
		}
		clk.Set(t0.Add(vt))
		if n := tb.Expire(); n != 1 {
			t.Fatalf("old lease: Expire() = %d at its original expiry, want 1", n)
		}
		mustNil(t, "extend uses the new timeout", tb.Extend(fresh.Offset, fresh.Nonce, 0))
		if at, _ := tb.NextExpiry(); !at.Equal(t0.Add(vt + time.Minute)) {
			t.Fatalf("extended expiry %v, want %v", at, t0.Add(vt+time.Minute))
		}
		if !old.Expiry.Equal(t0.Add(vt)) {
			t.Fatalf("old lease expiry %v, want %v", old.Expiry, t0.Add(vt))
		}
	})
	t.Run("lowering acked-ahead puts reserve in frontier-only mode", func(t *testing.T) {
		tb, _ := newTable(t, defaultLimits)
		m := byOffset(tb.Reserve(10, 5))
		mustNil(t, "ack 2", tb.Ack(2, m[2].Nonce))
		mustNil(t, "ack 3", tb.Ack(3, m[3].Nonce))
		tb.SetLimits(Limits{VisibilityTimeout: vt, MaxInFlight: 100, MaxAckedAhead: 1})
		if err := tb.Ack(4, m[4].Nonce); !errors.Is(err, ErrAckedAheadFull) {
			t.Fatalf("ack with 2 acked-ahead and limit 1 = %v, want ErrAckedAheadFull", err)
		}
		if got := tb.Reserve(10, 10); len(got) != 0 {
			t.Fatalf("frontier leased, unstick mode: got %v, want none", offsets(got))
		}
		mustNil(t, "ack 0", tb.Ack(0, m[0].Nonce))
		if got := tb.Reserve(10, 10); len(got) != 0 {
			t.Fatalf("frontier 1 still leased: got %v", offsets(got))
		}
		mustNil(t, "ack 1", tb.Ack(1, m[1].Nonce))
		if f := tb.Frontier(); f != 4 {
			t.Fatalf("frontier = %d, want 4", f)
		}
		// The frontier (4) is leased: one more within the ack room of 1.
		if got := tb.Reserve(10, 10); !slices.Equal(offsets(got), []uint64{5}) {
			t.Fatalf("gap closed: got %v", offsets(got))
		}
	})
	t.Run("invalid limits are clamped, not fatal", func(t *testing.T) {
		tb, _ := newTable(t, defaultLimits)
		tb.SetLimits(Limits{MaxAckedAhead: -3})
		want := Limits{VisibilityTimeout: FloorVisibilityTimeout, MaxInFlight: 1, MaxAckedAhead: 0}
		if got := tb.Limits(); got != want {
			t.Fatalf("Limits() = %+v, want %+v", got, want)
		}
		// Still serves, serially, one at a time.
		if got := tb.Reserve(10, 5); !slices.Equal(offsets(got), []uint64{0}) {
			t.Fatalf("Reserve = %v, want [0]", offsets(got))
		}
	})
}

func TestLimitsValidateAndNormalize(t *testing.T) {
	tests := []struct {
		l    Limits
		ok   bool
		norm Limits
	}{
		{Limits{VisibilityTimeout: time.Second, MaxInFlight: 1, MaxAckedAhead: 0}, true,
			Limits{VisibilityTimeout: time.Second, MaxInFlight: 1, MaxAckedAhead: 0}},
		{defaultLimits, true, defaultLimits},
		{Limits{VisibilityTimeout: 0, MaxInFlight: 5, MaxAckedAhead: 2}, false,
			Limits{VisibilityTimeout: FloorVisibilityTimeout, MaxInFlight: 5, MaxAckedAhead: 2}},
		{Limits{VisibilityTimeout: -time.Second, MaxInFlight: 1}, false,
			Limits{VisibilityTimeout: FloorVisibilityTimeout, MaxInFlight: 1}},
		{Limits{VisibilityTimeout: time.Minute, MaxInFlight: 0}, false,
			Limits{VisibilityTimeout: time.Minute, MaxInFlight: 1}},
		{Limits{VisibilityTimeout: time.Minute, MaxInFlight: 3, MaxAckedAhead: -1}, false,
			Limits{VisibilityTimeout: time.Minute, MaxInFlight: 3, MaxAckedAhead: 0}},
	}
	for _, tc := range tests {
		t.Run(fmt.Sprintf("%+v", tc.l), func(t *testing.T) {
			if err := tc.l.Validate(); (err == nil) != tc.ok {
				t.Fatalf("Validate() = %v, want ok=%v", err, tc.ok)
			}
			if got := tc.l.Normalize(); got != tc.norm {
				t.Fatalf("Normalize() = %+v, want %+v", got, tc.norm)
			}
			if err := tc.norm.Validate(); err != nil {
				t.Fatalf("normalized limits invalid: %v", err)
			}
			if got := New(0, 0, tc.l, clock.NewFake(time.Time{})).Limits(); got != tc.norm {
				t.Fatalf("New(...).Limits() = %+v, want %+v", got, tc.norm)
			}
		})
	}
}

func TestFrontierVersionOnlyOnMove(t *testing.T) {
	tb, _ := newTable(t, defaultLimits)
	m := byOffset(tb.Reserve(10, 3))
	_, v0 := tb.FrontierVersion()
	mustNil(t, "ack 1", tb.Ack(1, m[1].Nonce))
	mustNil(t, "nack 2", tb.Nack(2, m[2].Nonce))
	if _, v := tb.FrontierVersion(); v != v0 {
		t.Fatalf("version moved from %d to %d without a frontier move", v0, v)
	}
	mustNil(t, "ack 0", tb.Ack(0, m[0].Nonce))
	if f, v := tb.FrontierVersion(); f != 2 || v != v0+1 {
		t.Fatalf("FrontierVersion = %d, %d; want 2, %d (one move over a run)", f, v, v0+1)
	}
}

// TakeFreed reports once that an ack made room after a Reserve was held
// back by a cap — and not when nothing was held back.
func TestTakeFreedAfterCappedReserve(t *testing.T) {
	tb, _ := newTable(t, Limits{VisibilityTimeout: vt, MaxInFlight: 2, MaxAckedAhead: 10})
	got := tb.Reserve(10, 1)
	mustNil(t, "ack 0", tb.Ack(0, got[0].Nonce))
	if tb.TakeFreed() {
		t.Fatal("freed reported although no Reserve was held back")
	}
	got = tb.Reserve(10, 5) // 1, 2: capped by MaxInFlight
	if len(got) != 2 {
		t.Fatalf("Reserve = %v, want 2 leases", offsets(got))
	}
	if tb.TakeFreed() {
		t.Fatal("freed reported before any ack")
	}
	mustNil(t, "ack 2", tb.Ack(2, got[1].Nonce))
	mustNil(t, "ack 1", tb.Ack(1, got[0].Nonce))
	if !tb.TakeFreed() {
		t.Fatal("an ack after a capped Reserve did not report freed room")
	}
	if tb.TakeFreed() {
		t.Fatal("freed reported twice for one episode")
	}
}
