package rpc

import (
	"context"
	"fmt"
	"syscall"
	"testing"
	"time"

	"github.com/narad-io/narad/internal/storage"
)

// BenchmarkCommitRoundTrip is one dispatch bucket to a remote owner: a
// Commit of records of 256 bytes over loopback through the peer handshake,
// both ends in this process (so ns/op is the CPU of both sides plus the
// loopback's latency). 8 records is a single-produce cycle's bucket, 200 a
// batch produce's (a message past gRPC's 32 KiB buffer tier); each on a
// framed connection and through gRPC (a node of a release before them).
func BenchmarkCommitRoundTrip(b *testing.B) {
	for _, way := range []string{"framed", "grpc"} {
		for _, n := range []int{8, 200} {
			b.Run(fmt.Sprintf("%s/records=%d", way, n), func(b *testing.B) {
				addr, _ := startServer(b, &fake{})
				p := testPool(b, testSecret)
				p.framed.off = way == "grpc"
				recs := make([]storage.Record, n)
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
				// The process's CPU per call: on a shared machine wall time is
				// noise, CPU much less so.
				b.ReportMetric(float64(processCPU()-cpu0)/float64(b.N), "cpu-ns/op")
			})
		}
	}
}

// processCPU is this process's user + system CPU time so far.
func processCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// BenchmarkFetchRoundTrip is a follower's fetch answered with two records
// of 256 bytes (a replicated single produce's fetch carries one or two),
// on a framed connection, on a gRPC stream and as a gRPC call, both ends
// in this process.
func BenchmarkFetchRoundTrip(b *testing.B) {
	recs := []storage.Record{{Offset: 7, CommittedAt: 1, Payload: make([]byte, 256)}, {Offset: 8, CommittedAt: 1, Payload: make([]byte, 256)}}
	f := &fake{fetch: func(context.Context, FetchRequest) (FetchResponse, error) {
		return FetchResponse{Epoch: 3, Committed: 7, Records: recs}, nil
	}}
	req := FetchRequest{Topic: "orders", Incarnation: 1, Partition: 0, Epoch: 3, Follower: "n2", DiskID: "d", Offset: 7, MaxBytes: 1 << 20, Wait: time.Second}
	for _, way := range []string{"framed", "stream", "call"} {
		b.Run(way, func(b *testing.B) {
			addr, _ := startServer(b, f)
			p := testPool(b, testSecret)
			p.framed.off = way != "framed"
			fetch := p.Fetch
			if way == "call" {
				fetch = p.fetchCall
			}
			ctx := context.Background()
			if _, err := fetch(ctx, addr, req); err != nil {
				b.Fatal(err)
			}
			b.ReportAllocs()
			cpu0 := processCPU()
			for b.Loop() {
				if _, err := fetch(ctx, addr, req); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(processCPU()-cpu0)/float64(b.N), "cpu-ns/op")
		})
	}
}
