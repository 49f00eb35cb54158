package main

import (
	"context"
	"strings"
	"testing"
	"time"
)

// A stamp reads back as the time since it was written, and a payload
// without one (another producer's record) is an error, not a bogus age.
func TestStampRoundTrip(t *testing.T) {
	base := time.Now().Add(-time.Hour)
	p := []byte(strings.Repeat("x", 32))
	before := time.Since(base)
	stamp(p, base)
	age, err := stampAge(p, base)
	if err != nil {
		t.Fatal(err)
	}
	if age < 0 || age > time.Since(base)-before+time.Second {
		t.Fatalf("age %s of a fresh stamp", age)
	}
	if string(p[stampLen:]) != strings.Repeat("x", 16) {
		t.Fatalf("stamp wrote past its %d bytes: %q", stampLen, p)
	}
	for _, bad := range []string{"short", strings.Repeat("x", 20)} {
		if _, err := stampAge([]byte(bad), base); err == nil {
			t.Errorf("stampAge(%q): no error", bad)
		}
	}
}

// The pacer spreads producers over the interval and keeps its schedule:
// producer i of n is due at (i/n + k) intervals, whatever the answers took.
func TestPacerSchedule(t *testing.T) {
	if newPacer(time.Now(), 0, 4, 1, 0) != nil {
		t.Fatal("--rate 0 paces")
	}
	start := time.Now()
	// 4 producers of batches of 10 at 4,000 records/s: each sends every 10 ms.
	p := newPacer(start, 4000, 4, 10, 2)
	if p.interval != 10*time.Millisecond || p.next != 5*time.Millisecond {
		t.Fatalf("interval %s first due %s, want 10ms and 5ms", p.interval, p.next)
	}
	for range 3 {
		if err := p.wait(context.Background()); err != nil {
			t.Fatal(err)
		}
	}
	if el := time.Since(start); el < 25*time.Millisecond {
		t.Fatalf("three requests due at 5, 15, 25 ms were all sent by %s", el)
	}
	if p.next != 35*time.Millisecond {
		t.Fatalf("next due %s, want 35ms", p.next)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	late := newPacer(start, 1, 1, 1, 0)
	late.next = time.Hour
	if err := late.wait(ctx); err == nil {
		t.Fatal("wait on a cancelled context returned nil")
	}
}
