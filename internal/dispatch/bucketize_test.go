package dispatch

import (
	"fmt"
	"testing"

	"github.com/narad-io/narad/internal/header"
	"github.com/narad-io/narad/internal/wal"
)

func windowOf(n, parts int) []wal.Record {
	recs := make([]wal.Record, n)
	for i := range recs {
		recs[i] = wal.Record{Seq: uint64(i + 1), Topic: "t", Partition: int32(i % parts), Payload: []byte(fmt.Sprint(i))}
	}
	return recs
}

// Buckets keep WAL order within a destination, start at its lowest seq,
// and own their slices: appending to one (a pending destination's later
// records) never writes into another's.
func TestBucketizeOrderAndIndependence(t *testing.T) {
	bs := bucketize(windowOf(10, 3), 0xA11CE)
	if len(bs) != 3 {
		t.Fatalf("%d buckets, want 3", len(bs))
	}
	for p, b := range bs {
		if b.key.partition != int32(p) || b.minSeq != uint64(p+1) {
			t.Fatalf("bucket %d: key %+v minSeq %d", p, b.key, b.minSeq)
		}
		for j, r := range b.recs {
			if want := fmt.Sprint(p + 3*j); string(r.Payload) != want {
				t.Fatalf("bucket %d record %d = %q, want %q", p, j, r.Payload, want)
			}
			// Its WAL source, the message id produce answered, goes with
			// it to whichever node commits it.
			if want := uint64(p + 3*j + 1); r.Origin != 0xA11CE || r.Seq != want || b.seqs[j] != want {
				t.Fatalf("bucket %d record %d: source %x/%d, want a11ce/%d", p, j, r.Origin, r.Seq, want)
			}
		}
	}
	bs[0].recs = append(bs[0].recs, bs[0].recs[0])
	if string(bs[1].recs[0].Payload) != "1" {
		t.Fatalf("appending to bucket 0 overwrote bucket 1: %q", bs[1].recs[0].Payload)
	}
}

// BenchmarkBucketize is one full window of a 3-partition topic.
func BenchmarkBucketize(b *testing.B) {
	recs := windowOf(windowBase, 3)
	b.ReportAllocs()
	for b.Loop() {
		bucketize(recs, 1)
	}
}

// A record's headers go with it into its bucket (and so to its owner).
func TestBucketizeKeepsHeaders(t *testing.T) {
	recs := windowOf(4, 2)
	recs[2].Headers = []header.Header{{Name: "trace", Value: "t2"}}
	bs := bucketize(recs, 1)
	if got := bs[0].recs[1].Headers; len(got) != 1 || got[0].Value != "t2" {
		t.Fatalf("record 2 reached its bucket with headers %v", got)
	}
	if got := bs[0].recs[0].Headers; got != nil {
		t.Fatalf("record 0 gained headers %v", got)
	}
}
