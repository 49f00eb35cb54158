package storage

import (
	"fmt"
	"testing"

	"github.com/narad-io/narad/internal/header"
)

func payloads(n, size int) []Record {
	out := make([]Record, n)
	p := make([]byte, size)
	for i := range p {
		p[i] = byte('a' + i%26)
	}
	for i := range out {
		out[i].Payload = p
	}
	return out
}

// BenchmarkCommit measures durable commits (write + fdatasync + verify) of
// batches of 256-byte records.
func BenchmarkCommit(b *testing.B) {
	for _, n := range []int{1, 64, 4096} {
		b.Run(fmt.Sprintf("records=%d", n), func(b *testing.B) {
			l := openT(b, b.TempDir(), Options{})
			defer l.Close()
			batch := payloads(n, 256)
			b.SetBytes(int64(n * 256))
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				if _, err := l.Commit(batch); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(n*b.N)/b.Elapsed().Seconds(), "records/s")
		})
	}
}

// BenchmarkCommitHeaders is BenchmarkCommit's batches with and without
// three headers per record (trace-id, content-type, a tenant: 51 bytes
// of names and values): the envelope's cost of the feature.
func BenchmarkCommitHeaders(b *testing.B) {
	hs := []header.Header{{Name: "content-type", Value: "application/json"}, {Name: "tenant", Value: "acme"},
		{Name: "trace-id", Value: "4bf92f3577b34da6a3ce929d"}}
	for _, n := range []int{1, 64, 4096} {
		for _, with := range []bool{false, true} {
			b.Run(fmt.Sprintf("records=%d/headers=%v", n, with), func(b *testing.B) {
				l := openT(b, b.TempDir(), Options{})
				defer l.Close()
				batch := payloads(n, 256)
				if with {
					for i := range batch {
						batch[i].Headers = hs
					}
				}
				b.SetBytes(int64(n * 256))
				b.ReportAllocs()
				b.ResetTimer()
				for i := 0; i < b.N; i++ {
					if _, err := l.Commit(batch); err != nil {
						b.Fatal(err)
					}
				}
				b.ReportMetric(float64(n*b.N)/b.Elapsed().Seconds(), "records/s")
			})
		}
	}
}

// BenchmarkSequentialRead reads committed 256-byte records front to back,
// 1,000 per call, the way a consumer or cursor tails a partition.
func BenchmarkSequentialRead(b *testing.B) {
	for _, codec := range []Codec{CodecNone, CodecZstd} {
		b.Run(codec.String(), func(b *testing.B) {
			l := openT(b, b.TempDir(), Options{Codec: codec})
			defer l.Close()
			batch := payloads(1000, 256)
			for i := 0; i < 500; i++ {
				if _, err := l.Commit(batch); err != nil {
					b.Fatal(err)
				}
			}
			readSequentially(b, l)
		})
	}
}

// BenchmarkReadOne reads committed 256-byte records one per call, front to
// back, the way consumers taking one record per request walk a backlog:
// most reads land in the middle of a frame another read just decoded.
func BenchmarkReadOne(b *testing.B) {
	l := openT(b, b.TempDir(), Options{})
	defer l.Close()
	batch := payloads(100, 256)
	for i := 0; i < 100; i++ {
		if _, err := l.Commit(batch); err != nil {
			b.Fatal(err)
		}
	}
	hwm := l.HWM()
	b.ReportAllocs()
	b.ResetTimer()
	next := uint64(0)
	for i := 0; i < b.N; i++ {
		if next >= hwm {
			next = 0
		}
		res, err := l.Read(next, 1, 4<<20, NoDueLimit)
		if err != nil || len(res.Records) != 1 {
			b.Fatal(err, len(res.Records))
		}
		next = res.Next
	}
}

// BenchmarkCommitLazy is BenchmarkCommit for records durable in their
// ingress WAL (CommitFrom, Lazy): write, read back, verify, publish — the
// fdatasync left to a Flush every 64 commits, about what the dispatcher's
// checkpoint cadence does under load.
func BenchmarkCommitLazy(b *testing.B) {
	for _, n := range []int{1, 64} {
		b.Run(fmt.Sprintf("records=%d", n), func(b *testing.B) {
			l := openT(b, b.TempDir(), Options{})
			defer l.Close()
			batch := payloads(n, 256)
			seqs := make([]uint64, n)
			seq := uint64(0)
			b.SetBytes(int64(n * 256))
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				for j := range seqs {
					seq++
					seqs[j] = seq
				}
				if _, _, err := l.CommitFrom(batch, Source{Origin: 1, Seqs: seqs, Lazy: true}); err != nil {
					b.Fatal(err)
				}
				if i%64 == 63 {
					if err := l.Flush(); err != nil {
						b.Fatal(err)
					}
				}
			}
			b.ReportMetric(float64(n*b.N)/b.Elapsed().Seconds(), "records/s")
		})
	}
}

// BenchmarkSequentialReadSourced is BenchmarkSequentialRead of records
// committed from an ingress WAL (CommitFrom): frames that carry every
// record's WAL seq, decoded on each read (frame.go, the ids flag).
func BenchmarkSequentialReadSourced(b *testing.B) {
	l := openT(b, b.TempDir(), Options{})
	defer l.Close()
	batch := payloads(1000, 256)
	seqs := make([]uint64, len(batch))
	seq := uint64(0)
	for range 500 {
		for j := range seqs {
			seq += 3 // a dispatcher's bucket: seqs a few apart
			seqs[j] = seq
		}
		if _, _, err := l.CommitFrom(batch, Source{Origin: 1, Seqs: seqs}); err != nil {
			b.Fatal(err)
		}
	}
	readSequentially(b, l)
}

// readSequentially reads b.N records of l front to back, 1,000 a call,
// starting over at the HWM.
func readSequentially(b *testing.B, l *Log) {
	hwm := l.HWM()
	b.ResetTimer()
	read := 0
	next := uint64(0)
	for read < b.N {
		if next >= hwm {
			next = 0
		}
		res, err := l.Read(next, 1000, 4<<20, NoDueLimit)
		if err != nil {
			b.Fatal(err)
		}
		read += len(res.Records)
		next = res.Next
	}
	b.ReportMetric(float64(read)/b.Elapsed().Seconds(), "records/s")
}

// BenchmarkFrameIDs encodes and decodes one frame of 64 256-byte records
// from an ingress WAL, without and with the records' WAL seqs (frame.go,
// the ids flag): the CPU the ids cost a commit and a read, away from the
// disk.
func BenchmarkFrameIDs(b *testing.B) {
	for _, ids := range []bool{false, true} {
		b.Run(fmt.Sprintf("ids=%v", ids), func(b *testing.B) {
			enc, _ := newEncoder(CodecNone, "")
			recs := payloads(64, 256)
			for i := range recs {
				if ids {
					recs[i].Origin, recs[i].Seq = 1, uint64(3*i+1)
				}
			}
			b.ReportAllocs()
			for b.Loop() {
				frame, err := enc.encode(0, recs, 1, 1, 190, false)
				if err != nil {
					b.Fatal(err)
				}
				h, _ := parseHeader(frame)
				if _, err := decodeFrame(h, frame[:FrameHeaderSize], frame[FrameHeaderSize:]); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
