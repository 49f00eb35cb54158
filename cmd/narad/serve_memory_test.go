package main

import (
	"os"
	"path/filepath"
	"runtime/debug"
	"testing"
)

// A node collects at GOGC=200 unless the environment says otherwise.
func TestTuneMemoryGCPercent(t *testing.T) {
	prev := debug.SetGCPercent(100)
	t.Cleanup(func() { debug.SetGCPercent(prev) })
	tuneMemory(func(k string) (string, bool) { return "", false }, "")
	if got := debug.SetGCPercent(100); got != nodeGCPercent {
		t.Errorf("GC percent %d without GOGC, want %d", got, nodeGCPercent)
	}
	tuneMemory(func(k string) (string, bool) { return "100", k == "GOGC" || k == "GOMEMLIMIT" }, "")
	if got := debug.SetGCPercent(100); got != 100 {
		t.Errorf("GC percent %d with GOGC=100 set, want it left at 100", got)
	}
}

// A node in a container with a memory limit takes 90% of it as its soft
// limit, unless GOMEMLIMIT is set.
func TestTuneMemoryLimitFromCgroup(t *testing.T) {
	prev := debug.SetMemoryLimit(-1)
	t.Cleanup(func() { debug.SetMemoryLimit(prev) })
	memoryMax := filepath.Join(t.TempDir(), "memory.max")
	if err := os.WriteFile(memoryMax, []byte("1073741824\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	none := func(string) (string, bool) { return "", false }
	tuneMemory(none, memoryMax)
	if got := debug.SetMemoryLimit(-1); got != 966367641 {
		t.Errorf("memory limit %d under a 1 GiB cgroup, want 966367641", got)
	}
	debug.SetMemoryLimit(prev)
	tuneMemory(func(k string) (string, bool) { return "1GiB", k == "GOMEMLIMIT" }, memoryMax)
	if got := debug.SetMemoryLimit(-1); got != prev {
		t.Errorf("memory limit %d with GOMEMLIMIT set, want it left at %d", got, prev)
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
