package main

import (
	"runtime/debug"
	"testing"
)

// A node collects at GOGC=200 unless the environment says otherwise.
func TestTuneMemoryGCPercent(t *testing.T) {
	prev := debug.SetGCPercent(100)
	t.Cleanup(func() { debug.SetGCPercent(prev) })
	tuneMemory(func(k string) (string, bool) { return "", false })
	if got := debug.SetGCPercent(100); got != nodeGCPercent {
		t.Errorf("GC percent %d without GOGC, want %d", got, nodeGCPercent)
	}
	tuneMemory(func(k string) (string, bool) { return "100", k == "GOGC" || k == "GOMEMLIMIT" })
	if got := debug.SetGCPercent(100); got != 100 {
		t.Errorf("GC percent %d with GOGC=100 set, want it left at 100", got)
	}
}

// The soft limit is 90% of a cgroup's memory.max; none for "max".
func TestMemoryLimitOfCgroup(t *testing.T) {
	for _, tt := range []struct {
		in   string
		want int64
		ok   bool
	}{
		{"1073741824\n", 966367641, true},
		{"max\n", 0, false},
		{"", 0, false},
		{"-1", 0, false},
		{"0", 0, false},
	} {
		got, ok := memoryLimit(tt.in)
		if got != tt.want || ok != tt.ok {
			t.Errorf("memoryLimit(%q) = %d, %v; want %d, %v", tt.in, got, ok, tt.want, tt.ok)
		}
	}
}
