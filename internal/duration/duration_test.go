package duration

import (
	"errors"
	"math"
	"strconv"
	"strings"
	"testing"
	"time"
)

// accepted is the union of what the three parsers this package replaced
// accepted: the CLI's flags (Go syntax plus "d", a bare "0"), the
// configuration's duration settings (time.ParseDuration) and the API's
// wait parameter (time.ParseDuration, or integer milliseconds — see
// TestParseMillis). Each must keep meaning what it meant.
var accepted = []struct {
	in   string
	want time.Duration
}{
	// The CLI's forms.
	{"30s", 30 * time.Second},
	{"12h", 12 * time.Hour},
	{"7d", 7 * Day},
	{"1d12h", 36 * time.Hour},
	{"1.5d", 36 * time.Hour},
	{"0.1d", 2*time.Hour + 24*time.Minute}, // exact, not a float's 2.4000000000000004h
	{"2d30m15s", 48*time.Hour + 30*time.Minute + 15*time.Second},
	{"250ms", 250 * time.Millisecond},
	{"1h30m", 90 * time.Minute},
	{"0", 0},
	{"-2d", -48 * time.Hour},
	{"+1d", 24 * time.Hour},
	{"106751d23h47m16.854775807s", math.MaxInt64},
	// The configuration's and the API's: all of Go's syntax.
	{"10s", 10 * time.Second},
	{"500ms", 500 * time.Millisecond},
	{"2m", 2 * time.Minute},
	{"1h2m3s4ms5us6ns", time.Hour + 2*time.Minute + 3*time.Second + 4*time.Millisecond + 5*time.Microsecond + 6},
	{"1µs", time.Microsecond}, // U+00B5 micro sign
	{"1μs", time.Microsecond}, // U+03BC Greek mu
	{"+5s", 5 * time.Second},
	{"-5s", -5 * time.Second},
	{"+0", 0},
	{"-0", 0},
	{"0s", 0},
	{".5s", 500 * time.Millisecond},
	{"5.s", 5 * time.Second},
	{"1.5h", 90 * time.Minute},
	{"1s2s", 3 * time.Second},
	{"1d1d", 2 * Day},
	{"0.0000000001s", 0},
	{"9223372036854775807ns", math.MaxInt64},
	{"-9223372036854775808ns", math.MinInt64},
}

var refused = []struct{ in, says string }{
	{"", "empty duration"},
	{"7", `missing unit in duration "7"`}, // seconds or milliseconds? (a bare number: ParseMillis)
	{"1d7", "missing unit"},
	{"00", "missing unit"},
	{"d", "invalid duration"},
	{"7x", "invalid duration"},
	{"1hh", "invalid duration"},
	{"1..5d", "invalid duration"},
	{".s", "invalid duration"},
	{".", "missing unit"},
	{"+", "invalid duration"},
	{"-", "invalid duration"},
	{"--1s", "invalid duration"},
	{"1h-5m", "invalid duration"},
	{"1e3s", "invalid duration"},
	{"0x10s", "invalid duration"},
	{"1_000ms", "invalid duration"},
	{"soon", "invalid duration"},
	{" 5s", "invalid duration"}, // hand-typed text is trimmed by its reader, not here
	{"5s ", "invalid duration"},
	{"1 h", "invalid duration"},
	{"200000000d", "too long"},
	{"9999999999h", "too long"},
	{"9223372036854775808ns", "too long"},
	{"106751d23h47m16.854775808s", "too long"},
	{"-106751d23h47m16.854775809s", "too long"},
}

func TestParseAccepts(t *testing.T) {
	for _, tt := range accepted {
		got, err := Parse(tt.in)
		if err != nil || got != tt.want {
			t.Errorf("Parse(%q) = %v, %v; want %v", tt.in, got, err, tt.want)
		}
		// Where Go's own parser reads the text, both agree.
		if !strings.Contains(tt.in, "d") {
			if g, err := time.ParseDuration(tt.in); err != nil || g != got {
				t.Errorf("time.ParseDuration(%q) = %v, %v; Parse says %v", tt.in, g, err, got)
			}
		}
	}
}

func TestParseRefuses(t *testing.T) {
	for _, tt := range refused {
		got, err := Parse(tt.in)
		if err == nil || !strings.Contains(err.Error(), tt.says) {
			t.Errorf("Parse(%q) = %v, %v; want an error saying %q", tt.in, got, err, tt.says)
		}
		if err != nil && !strings.HasSuffix(err.Error(), "too long") && !strings.Contains(err.Error(), "want e.g. 30s, 12h, 7d") {
			t.Errorf("Parse(%q): %q does not say what is accepted", tt.in, err)
		}
	}
}

func TestParseMillis(t *testing.T) {
	for _, tt := range []struct {
		in   string
		want time.Duration
	}{
		{"30000", 30 * time.Second},
		{"1500", 1500 * time.Millisecond},
		{"0", 0},
		{"+5", 5 * time.Millisecond}, // the API's strconv.ParseInt took a sign
		{"-5", -5 * time.Millisecond},
		{"9223372036854", 9223372036854 * time.Millisecond},
		{"30s", 30 * time.Second},
		{"7d", 7 * Day},
		{"500ms", 500 * time.Millisecond},
	} {
		if got, err := ParseMillis(tt.in); err != nil || got != tt.want {
			t.Errorf("ParseMillis(%q) = %v, %v; want %v", tt.in, got, err, tt.want)
		}
	}
	for _, tt := range []struct{ in, says string }{
		{"9223372036855", "out of range"},
		{"-9223372036855", "out of range"},
		{"99999999999999999999", "out of range"},
		{"soon", "invalid duration"},
		{"1e3", "invalid duration"},
		{"", "empty duration"},
		{" 5", "invalid duration"},
	} {
		if got, err := ParseMillis(tt.in); err == nil || !strings.Contains(err.Error(), tt.says) {
			t.Errorf("ParseMillis(%q) = %v, %v; want an error saying %q", tt.in, got, err, tt.says)
		}
	}
}

func TestFormatRoundTrips(t *testing.T) {
	for _, tt := range []struct {
		d    time.Duration
		want string
	}{
		{0, "0s"},
		{7 * Day, "7d"},
		{36 * time.Hour, "1d12h"},
		{time.Hour, "1h"},
		{90 * time.Minute, "1h30m"},
		{45 * time.Second, "45s"},
		{1500 * time.Millisecond, "1.5s"},
		{250 * time.Millisecond, "250ms"},
		{Day + 500*time.Millisecond, "1d500ms"},
		{-time.Hour, "-1h"},
		{math.MaxInt64, "106751d23h47m16.854775807s"},
		{math.MinInt64, "-106751d23h47m16.854775808s"},
	} {
		got := Format(tt.d)
		if got != tt.want {
			t.Errorf("Format(%v) = %q, want %q", tt.d, got, tt.want)
		}
		if back, err := Parse(got); err != nil || back != tt.d {
			t.Errorf("Parse(Format(%v)) = %v, %v", tt.d, back, err)
		}
	}
}

// FuzzParse holds Parse to Go's parser on every text without a "d" (the
// one unit Go lacks) and to Format's round trip on every text it accepts.
func FuzzParse(f *testing.F) {
	for _, tt := range accepted {
		f.Add(tt.in)
	}
	for _, tt := range refused {
		f.Add(tt.in)
	}
	f.Fuzz(func(t *testing.T, s string) {
		got, err := Parse(s)
		if !strings.Contains(s, "d") {
			want, werr := time.ParseDuration(s)
			if (err == nil) != (werr == nil) || got != want {
				t.Fatalf("Parse(%q) = %v, %v; time.ParseDuration: %v, %v", s, got, err, want, werr)
			}
		}
		if err != nil {
			return
		}
		if back, err := Parse(Format(got)); err != nil || back != got {
			t.Fatalf("Parse(Format(%v)) = %v, %v (from %q)", got, back, err, s)
		}
	})
}

// TestIsIntegerIsWhatStrconvReads: ParseMillis skips strconv for what
// isInteger declines, so the two must agree on every input's syntax.
func TestIsIntegerIsWhatStrconvReads(t *testing.T) {
	for _, s := range []string{"", "+", "-", "0", "+5", "-5", "007", "1s", "1_000", "0x10", " 1", "1 ",
		"٣", "99999999999999999999", "-99999999999999999999", "1.5", "1e3"} {
		_, err := strconv.ParseInt(s, 10, 64)
		syntax := errors.Is(err, strconv.ErrSyntax)
		if isInteger(s) == syntax {
			t.Errorf("%q: isInteger %v, strconv syntax error %v", s, isInteger(s), syntax)
		}
	}
}
