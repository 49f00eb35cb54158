package main

import (
	"math"
	"strings"
	"testing"
	"time"
)

func TestParseDuration(t *testing.T) {
	tests := []struct {
		in      string
		want    time.Duration
		wantErr string
	}{
		{"30s", 30 * time.Second, ""},
		{"12h", 12 * time.Hour, ""},
		{"7d", 7 * 24 * time.Hour, ""},
		{"1d12h", 36 * time.Hour, ""},
		{"1.5d", 36 * time.Hour, ""},
		{"2d30m15s", 48*time.Hour + 30*time.Minute + 15*time.Second, ""},
		{"250ms", 250 * time.Millisecond, ""},
		{"1h30m", 90 * time.Minute, ""},
		{"0", 0, ""},
		{" 45s ", 45 * time.Second, ""},
		{"-2d", -48 * time.Hour, ""},
		{"+1d", 24 * time.Hour, ""},
		{"", 0, "empty duration"},
		{"7", 0, `missing unit in duration "7"`},
		{"1d7", 0, "missing unit"},
		{"d", 0, "invalid duration"},
		{"7x", 0, "invalid duration"},
		{"1..5d", 0, "invalid duration"},
		{"200000000d", 0, "too long"},
	}
	for _, tt := range tests {
		got, err := parseDuration(tt.in)
		if tt.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Errorf("parseDuration(%q) = %v, %v; want error containing %q", tt.in, got, err, tt.wantErr)
			}
			continue
		}
		if err != nil || got != tt.want {
			t.Errorf("parseDuration(%q) = %v, %v; want %v", tt.in, got, err, tt.want)
		}
	}
}

func TestFormatDurationRoundTrips(t *testing.T) {
	tests := []struct {
		d    time.Duration
		want string
	}{
		{0, "0s"},
		{7 * 24 * time.Hour, "7d"},
		{36 * time.Hour, "1d12h"},
		{time.Hour, "1h"},
		{90 * time.Minute, "1h30m"},
		{45 * time.Second, "45s"},
		{1500 * time.Millisecond, "1.5s"},
		{250 * time.Millisecond, "250ms"},
		{24*time.Hour + 500*time.Millisecond, "1d500ms"},
		{-time.Hour, "-1h"},
		{time.Duration(math.MaxInt64), "106751d23h47m16.854775807s"},
	}
	for _, tt := range tests {
		got := formatDuration(tt.d)
		if got != tt.want {
			t.Errorf("formatDuration(%v) = %q, want %q", tt.d, got, tt.want)
		}
		back, err := parseDuration(got)
		if err != nil || back != tt.d {
			t.Errorf("parseDuration(formatDuration(%v)) = %v, %v", tt.d, back, err)
		}
	}
}

func TestDurationFlagValue(t *testing.T) {
	var d time.Duration
	v := newDurationValue(&d, 5*time.Second)
	if v.String() != "5s" || v.Type() != "duration" {
		t.Fatalf("String %q Type %q", v.String(), v.Type())
	}
	if err := v.Set("2d"); err != nil || d != 48*time.Hour {
		t.Fatalf("Set 2d: %v %v", d, err)
	}
	if err := v.Set("-1s"); err == nil {
		t.Fatal("Set -1s: want error")
	}
	var zero time.Duration
	if s := newDurationValue(&zero, 0).String(); s != "" {
		t.Fatalf("zero prints %q; help would show a default", s)
	}
}
