package lease

import (
	"errors"
	"math"
	"strconv"
	"strings"
	"testing"
)

func TestParseHandle(t *testing.T) {
	const maxU = "18446744073709551615" // math.MaxUint64
	type want struct {
		p      int
		o, n   uint64
		reject bool
	}
	tests := []struct {
		in   string
		want want
	}{
		{"0:0:0", want{p: 0, o: 0, n: 0}},
		{"7:42:1700000000000000001", want{p: 7, o: 42, n: 1700000000000000001}},
		{"2147483647:" + maxU + ":" + maxU, want{p: math.MaxInt32, o: math.MaxUint64, n: math.MaxUint64}},

		{"", want{reject: true}},
		{"1", want{reject: true}},
		{"1:2", want{reject: true}},
		{"1:2:3:4", want{reject: true}},
		{"1:2:3:", want{reject: true}},
		{":1:2", want{reject: true}},
		{"1::2", want{reject: true}},
		{"1:2:", want{reject: true}},
		{"::", want{reject: true}},
		{"-1:2:3", want{reject: true}},
		{"1:-2:3", want{reject: true}},
		{"1:2:-3", want{reject: true}},
		{"+1:2:3", want{reject: true}},
		{"1:+2:3", want{reject: true}},
		{"1:2:+3", want{reject: true}},
		{"01:2:3", want{reject: true}},
		{"1:02:3", want{reject: true}},
		{"1:2:00", want{reject: true}},
		{" 1:2:3", want{reject: true}},
		{"1:2:3 ", want{reject: true}},
		{"1:2:3\n", want{reject: true}},
		{"1: 2:3", want{reject: true}},
		{"1:2:3x", want{reject: true}},
		{"0x1:2:3", want{reject: true}},
		{"1_0:2:3", want{reject: true}},
		{"1.0:2:3", want{reject: true}},
		{"1;2;3", want{reject: true}},
		{"١:2:3", want{reject: true}},                           // Arabic-Indic digit one
		{"2147483648:0:0", want{reject: true}},                  // partition above MaxInt32
		{"1:18446744073709551616:0", want{reject: true}},        // offset = MaxUint64+1
		{"1:0:18446744073709551616", want{reject: true}},        // nonce = MaxUint64+1
		{"1:0:99999999999999999999", want{reject: true}},        // 20 digits, overflow
		{"1:0:" + strings.Repeat("9", 100), want{reject: true}}, // long
	}
	for _, tc := range tests {
		t.Run(strconv.Quote(tc.in), func(t *testing.T) {
			p, o, n, err := ParseHandle(tc.in)
			if tc.want.reject {
				if err == nil {
					t.Fatalf("accepted as (%d, %d, %d), want rejection", p, o, n)
				}
				if !errors.Is(err, ErrBadHandle) {
					t.Fatalf("error %v does not wrap ErrBadHandle", err)
				}
				return
			}
			if err != nil {
				t.Fatalf("rejected: %v", err)
			}
			if p != tc.want.p || o != tc.want.o || n != tc.want.n {
				t.Fatalf("got (%d, %d, %d), want (%d, %d, %d)", p, o, n, tc.want.p, tc.want.o, tc.want.n)
			}
			if back := FormatHandle(p, o, n); back != tc.in {
				t.Fatalf("FormatHandle round trip = %q, want %q", back, tc.in)
			}
		})
	}
}

func TestFormatHandle(t *testing.T) {
	if got := FormatHandle(3, 1024, 99); got != "3:1024:99" {
		t.Fatalf("FormatHandle = %q", got)
	}
	l := Lease{Partition: 5, Offset: 6, Nonce: 7}
	if got := l.Handle(); got != "5:6:7" {
		t.Fatalf("Lease.Handle = %q", got)
	}
}

func FuzzParseHandle(f *testing.F) {
	for _, s := range []string{
		"0:0:0", "7:42:1700000000000000001", "2147483647:18446744073709551615:18446744073709551615",
		"", "1:2", "1:2:3:4", "-1:2:3", "+1:2:3", "01:2:3", "1::3", "1:18446744073709551616:0", " 1:2:3",
		"2147483648:0:0", "0:0:99999999999999999999", "0:0:18446744073709551615:", "1:2:", ":1:2", "0:00:1",
		"1:2:3/", "9:9:9\x00",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		p, o, n, err := ParseHandle(s)
		// The one-pass parser accepts exactly what the field-by-field one
		// does, with the same values.
		fp, fo, fn, ok := parseHandleFast(s)
		sp, so, sn, serr := parseHandleSlow(s)
		if ok != (serr == nil) || (ok && (fp != sp || fo != so || fn != sn)) {
			t.Fatalf("%q: one pass (%d, %d, %d, %v), field by field (%d, %d, %d, %v)", s, fp, fo, fn, ok, sp, so, sn, serr)
		}
		if err != nil {
			if !errors.Is(err, ErrBadHandle) {
				t.Fatalf("ParseHandle(%q) error %v does not wrap ErrBadHandle", s, err)
			}
			// Must agree with an independent canonical check.
			if isCanonicalHandle(s) {
				t.Fatalf("ParseHandle(%q) rejected a canonical handle: %v", s, err)
			}
			return
		}
		// Accepted: it must be canonical, i.e. exactly what FormatHandle
		// would print for the parsed values.
		if back := FormatHandle(p, o, n); back != s {
			t.Fatalf("ParseHandle(%q) accepted a non-canonical form (canonical is %q)", s, back)
		}
		if p < 0 || p > MaxPartition {
			t.Fatalf("ParseHandle(%q) partition %d out of range", s, p)
		}
	})
}

// isCanonicalHandle is a slow, independent definition of the accepted
// language, used as the fuzz oracle: three fields, each accepted by
// strconv.ParseUint and equal to its own re-formatting.
func isCanonicalHandle(s string) bool {
	parts := strings.Split(s, ":")
	if len(parts) != 3 {
		return false
	}
	for i, part := range parts {
		v, err := strconv.ParseUint(part, 10, 64)
		if err != nil || strconv.FormatUint(v, 10) != part {
			return false
		}
		if i == 0 && v > MaxPartition {
			return false
		}
	}
	return true
}

func TestHandleRoundTripEdges(t *testing.T) {
	// A deterministic sweep of the round trip over edge values, so the
	// property holds in plain `go test` runs too, not only under -fuzz.
	parts := []int{0, 1, 9, 10, 255, MaxPartition}
	nums := []uint64{0, 1, 9, 10, 99, 100, math.MaxUint32, math.MaxUint64 - 1, math.MaxUint64}
	for _, p := range parts {
		for _, o := range nums {
			for _, n := range nums {
				h := FormatHandle(p, o, n)
				gp, gOff, gn, err := ParseHandle(h)
				if err != nil || gp != p || gOff != o || gn != n {
					t.Fatalf("round trip %q: (%d, %d, %d, %v)", h, gp, gOff, gn, err)
				}
			}
		}
	}
}

// BenchmarkParseHandle parses a handle as the server issues them.
func BenchmarkParseHandle(b *testing.B) {
	h := FormatHandle(2, 1234567, 12345678901234567890)
	b.ReportAllocs()
	for b.Loop() {
		if _, _, _, err := ParseHandle(h); err != nil {
			b.Fatal(err)
		}
	}
}
