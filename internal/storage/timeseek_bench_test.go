package storage

import (
	"math/rand/v2"
	"testing"
	"time"
)

// BenchmarkOffsetAtTime seeks by time in a partition of 1,000 segments
// (the target: at most 10 ms). warm: the segments' first times
// and indexes are known from earlier seeks, as on a serving node; cold:
// they are forgotten before each seek, as just after a reopen (the files'
// bytes are in the page cache either way).
func BenchmarkOffsetAtTime(b *testing.B) {
	l, times := manySegments(b, b.TempDir(), nil, 1000)
	defer l.Close()
	l.mu.RLock()
	sealed := append([]*segment(nil), l.segs[:len(l.segs)-1]...)
	l.mu.RUnlock()
	first, last := times[0], times[len(times)-1]
	for _, cold := range []bool{false, true} {
		name := "warm"
		if cold {
			name = "cold"
		}
		b.Run(name, func(b *testing.B) {
			rng := rand.New(rand.NewPCG(27, 4))
			b.ReportAllocs()
			for b.Loop() {
				if cold {
					b.StopTimer()
					for _, s := range sealed {
						s.mu.Lock()
						s.idx, s.idxBuilt, s.oldestAt = nil, false, -1
						s.mu.Unlock()
					}
					b.StartTimer()
				}
				if _, err := l.OffsetAtTime(time.UnixMilli(first + rng.Int64N(last-first+1))); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
