package main

import (
	"strings"
	"testing"
	"time"
)

func TestDurationFlagValue(t *testing.T) {
	var d time.Duration
	v := newDurationValue(&d, 5*time.Second)
	if v.String() != "5s" || v.Type() != "duration" {
		t.Fatalf("String %q Type %q", v.String(), v.Type())
	}
	if err := v.Set("2d"); err != nil || d != 48*time.Hour {
		t.Fatalf("Set 2d: %v %v", d, err)
	}
	if err := v.Set(" 1.5d "); err != nil || d != 36*time.Hour {
		t.Fatalf("Set \" 1.5d \" (typed by hand, trimmed): %v %v", d, err)
	}
	if err := v.Set("-1s"); err == nil {
		t.Fatal("Set -1s: want error")
	}
	if err := v.Set("7"); err == nil || !strings.Contains(err.Error(), `missing unit in duration "7"`) {
		t.Fatalf("Set 7: %v, want the missing unit named", err)
	}
	var zero time.Duration
	if s := newDurationValue(&zero, 0).String(); s != "" {
		t.Fatalf("zero prints %q; help would show a default", s)
	}
}
