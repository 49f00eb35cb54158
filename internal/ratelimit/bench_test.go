package ratelimit

import (
	"testing"
	"time"

	"github.com/narad-io/narad/internal/clock"
)

// BenchmarkTake is what an admitted limited request pays at the edge:
// one produce's records and bytes from a user's buckets.
func BenchmarkTake(b *testing.B) {
	l := New(clock.NewFake(time.Unix(1_800_000_000, 0)))
	rates := Rates{ProduceRecords: 1 << 40, ProduceBytes: 1 << 40}
	cost := Rates{ProduceRecords: 1, ProduceBytes: 256}
	b.ReportAllocs()
	for b.Loop() {
		if !l.Take("producer", 9, rates, cost).Allowed {
			b.Fatal("refused")
		}
	}
}
