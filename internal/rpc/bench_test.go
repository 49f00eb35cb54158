package rpc

import (
	"context"
	"syscall"
	"testing"
	"time"

	"github.com/narad-io/narad/internal/storage"
)

// BenchmarkCommitRoundTrip is one dispatch bucket to a remote owner: a
// Commit of 8 records of 256 bytes over loopback through the door, both
// ends in this process (so ns/op is the CPU of both sides plus the
// loopback's latency).
func BenchmarkCommitRoundTrip(b *testing.B) {
	addr, _ := startServer(b, &fake{})
	p := testPool(b, testSecret)
	recs := make([]storage.Record, 8)
	for i := range recs {
		recs[i] = storage.Record{Key: []byte("key"), Payload: make([]byte, 256)}
	}
	ctx := context.Background()
	if err := p.Commit(ctx, addr, "orders", 1, 0, recs, 1); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	cpu0 := processCPU()
	for b.Loop() {
		if err := p.Commit(ctx, addr, "orders", 1, 0, recs, 1); err != nil {
			b.Fatal(err)
		}
	}
	// The process's CPU per call: on a shared machine wall time is noise,
	// CPU much less so.
	b.ReportMetric(float64(processCPU()-cpu0)/float64(b.N), "cpu-ns/op")
}

// processCPU is this process's user + system CPU time so far.
func processCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
