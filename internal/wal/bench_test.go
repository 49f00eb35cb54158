package wal

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"

	"golang.org/x/sys/unix"
)

// BenchmarkAppend measures group-commit throughput: b.N single-record
// appends of 256-byte payloads shared among concurrent appenders, each of
// which waits for its own fdatasync like a produce handler does.
func BenchmarkAppend(b *testing.B) {
	for _, appenders := range []int{1, 16, 64} {
		b.Run(fmt.Sprintf("appenders=%d", appenders), func(b *testing.B) {
			w, err := Open(b.TempDir(), Options{})
			if err != nil {
				b.Fatal(err)
			}
			defer w.Close()
			payload := make([]byte, 256)
			key := []byte("key-0001")
			ctx := context.Background()
			var left atomic.Int64
			left.Store(int64(b.N))
			var wg sync.WaitGroup
			var failed atomic.Pointer[error]
			b.SetBytes(int64(len(payload)))
			b.ResetTimer()
			for range appenders {
				wg.Go(func() {
					recs := make([]Record, 1)
					for left.Add(-1) >= 0 {
						recs[0] = Record{Topic: "orders", Key: key, Partition: 3, Payload: payload, AcceptedAt: 1}
						if err := w.Append(ctx, recs); err != nil {
							e := err // a fresh variable, so err itself does not escape per call
							failed.Store(&e)
							return
						}
					}
				})
			}
			wg.Wait()
			b.StopTimer()
			if e := failed.Load(); e != nil {
				b.Fatal(*e)
			}
			b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "records/s")
			// Records per fdatasync shows how well group commit batches,
			// independently of how fast the disk happens to be right now.
			b.ReportMetric(float64(b.N)/float64(w.syncs.Load()), "records/sync")
			b.ReportMetric(float64(b.Elapsed().Microseconds())/float64(w.syncs.Load()), "us/sync")
		})
	}
}

// BenchmarkRead measures the dispatcher's sequential tail read.
func BenchmarkRead(b *testing.B) {
	w, err := Open(b.TempDir(), Options{})
	if err != nil {
		b.Fatal(err)
	}
	defer w.Close()
	recs := make([]Record, 1000)
	for i := range recs {
		recs[i] = Record{Topic: "orders", Partition: 1, Payload: make([]byte, 256)}
	}
	for range 20 {
		if err := w.Append(context.Background(), recs); err != nil {
			b.Fatal(err)
		}
	}
	last := w.LastSeq()
	b.ResetTimer()
	n := 0
	for b.Loop() {
		from := uint64(1)
		for from <= last {
			got, err := w.Read(from, 500, 1<<20)
			if err != nil {
				b.Fatal(err)
			}
			from += uint64(len(got))
			n += len(got)
		}
	}
	b.ReportMetric(float64(n)/b.Elapsed().Seconds(), "records/s")
}

// BenchmarkFdatasyncBaseline is the floor under BenchmarkAppend: one 256-byte
// append write plus fdatasync on the same filesystem, without the WAL. Run it
// next to BenchmarkAppend to read the others against this disk's latency.
func BenchmarkFdatasyncBaseline(b *testing.B) {
	f, err := os.Create(filepath.Join(b.TempDir(), "baseline"))
	if err != nil {
		b.Fatal(err)
	}
	defer f.Close()
	buf := make([]byte, 256+minFrameSize)
	var off int64
	for b.Loop() {
		if _, err := f.WriteAt(buf, off); err != nil {
			b.Fatal(err)
		}
		if err := unix.Fdatasync(int(f.Fd())); err != nil {
			b.Fatal(err)
		}
		off += int64(len(buf))
	}
	b.ReportMetric(float64(b.Elapsed().Microseconds())/float64(b.N), "us/sync")
}
