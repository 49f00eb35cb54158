package lease

import (
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/narad-io/narad/internal/clock"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

const vt = 30 * time.Second

var defaultLimits = Limits{VisibilityTimeout: vt, MaxInFlight: 100, MaxAckedAhead: 100}

func newTable(t testing.TB, l Limits) (*Table, *clock.Fake) {
	t.Helper()
	clk := clock.NewFake(time.Time{})
	return New(7, 0, l, clk), clk
}

// offsets lists the offsets of ls, in order.
func offsets(ls []Lease) []uint64 {
	out := make([]uint64, len(ls))
	for i, l := range ls {
		out[i] = l.Offset
	}
	return out
}

// reserveOne reserves exactly one lease and fails the test otherwise.
func reserveOne(t *testing.T, tb *Table, hwm uint64) Lease {
	t.Helper()
	ls := tb.Reserve(hwm, 1)
	if len(ls) != 1 {
		t.Fatalf("Reserve(%d, 1) = %v, want one lease", hwm, offsets(ls))
	}
	return ls[0]
}

// byOffset reserves everything available below hwm and indexes it.
func byOffset(ls []Lease) map[uint64]Lease {
	m := make(map[uint64]Lease, len(ls))
	for _, l := range ls {
		m[l.Offset] = l
	}
	return m
}

func mustNil(t *testing.T, what string, err error) {
	t.Helper()
	if err != nil {
		t.Fatalf("%s: unexpected error %v", what, err)
	}
}
