package main

import (
	"os"
	"runtime/debug"
	"strconv"
	"strings"
)

// The node's garbage collector. Go's default, GOGC=100, collects each
// time the heap doubles; a broker allocates briskly per request (answers,
// records in flight) and keeps a small live heap, so it collects often:
// allocating and collecting took 10–25% of a node's CPU in profiles of
// narad bench runs. At 200 the same node took 10% more single produces
// and consumes a second and 9% more batch produces (docs/performance.md,
// "The garbage collector"), for a heap that may grow to three times the
// live one rather than two. Both are the runtime's own knobs and the environment
// rules: GOGC and GOMEMLIMIT, when set, are left as they are.

// nodeGCPercent is GOGC for a node when the environment does not set it.
const nodeGCPercent = 200

// memLimitShare is the part of a container's memory limit given to the
// Go runtime as its soft limit (GOMEMLIMIT), the rest left to what the
// runtime does not count (the kernel's page cache of the logs, stacks
// of threads outside Go): near the limit the runtime collects harder
// instead of the container being killed.
const memLimitShare = 0.9

// cgroupMemoryMax is cgroup v2's memory limit of this process's group.
const cgroupMemoryMax = "/sys/fs/cgroup/memory.max"

// tuneMemory sets the collector's target and soft memory limit for a
// node, unless the environment set them; memoryMax is the cgroup file
// that holds the container's limit (cgroupMemoryMax).
func tuneMemory(lookupEnv func(string) (string, bool), memoryMax string) {
	if _, ok := lookupEnv("GOGC"); !ok {
		debug.SetGCPercent(nodeGCPercent)
	}
	if _, ok := lookupEnv("GOMEMLIMIT"); !ok {
		if raw, err := os.ReadFile(memoryMax); err == nil {
			if limit, ok := memoryLimit(string(raw)); ok {
				debug.SetMemoryLimit(limit)
			}
		}
	}
}

// memoryLimit is the soft limit for a cgroup memory.max: memLimitShare
// of it; ok is false for "max" (no limit) or anything unreadable.
func memoryLimit(memoryMax string) (int64, bool) {
	n, err := strconv.ParseInt(strings.TrimSpace(memoryMax), 10, 64)
	if err != nil || n <= 0 {
		return 0, false
	}
	return int64(float64(n) * memLimitShare), true
}
