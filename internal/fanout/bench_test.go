package fanout

import (
	"fmt"
	"sort"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/narad-io/narad/internal/storage"
)

// Fan-out benchmarks report figures, never assert them. Run with
//   go test -run '^$' -bench Fanout -benchtime 1x ./internal/fanout/

// produceAtRate commits records into the parent's partitions (round robin)
// at about rate records/s for d, in batches of batch, each payload naming
// its partition and offset so copies can be matched to their originals.
func produceAtRate(b *testing.B, n *node, parent string, parts, rate int, d time.Duration, batch int) int {
	tick := time.Duration(float64(time.Second) * float64(batch) / float64(rate))
	total := 0
	deadline := time.Now().Add(d)
	next := time.Now()
	for p := 0; time.Now().Before(deadline); p = (p + 1) % parts {
		recs := make([]storage.Record, batch)
		for i := range recs {
			recs[i].Payload = []byte("x")
			recs[i].Key = []byte(strconv.Itoa(total + i))
		}
		if err := commitLocal(n.b, n.ctx(), parent, p, recs); err != nil {
			b.Fatal(err)
		}
		total += batch
		next = next.Add(tick)
		time.Sleep(time.Until(next))
	}
	return total
}

// latencies maps each copy back to its original by key and returns the
// child commit time minus the parent commit time (minus delay), in ms.
func latencies(b *testing.B, n *node, parent string, pparts int, child string, cparts int, delay time.Duration) []float64 {
	at := map[string]int64{}
	for p := 0; p < pparts; p++ {
		for _, r := range n.read(parent, p) {
			at[string(r.Key)] = r.CommittedAt
		}
	}
	var out []float64
	for p := 0; p < cparts; p++ {
		for _, r := range n.read(child, p) {
			out = append(out, float64(r.CommittedAt-at[string(r.Key)])-float64(delay.Milliseconds()))
		}
	}
	sort.Float64s(out)
	return out
}

func pct(xs []float64, q float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	return xs[min(len(xs)-1, int(q*float64(len(xs))))]
}

// BenchmarkFanoutThroughput: a 6-partition parent fed at 10,000 records/s
// for 5 s into 1 and into 3 children; copy latency (parent commit → child
// commit) p50/p99 and the copy rate.
func BenchmarkFanoutThroughput(b *testing.B) {
	for _, children := range []int{1, 3} {
		b.Run(fmt.Sprintf("children=%d", children), func(b *testing.B) {
			n := newNode(b, Config{})
			n.createTopic("src", 6, 0)
			for c := 0; c < children; c++ {
				n.createTopic(fmt.Sprintf("c%d", c), 6, 0)
				n.attach("src", fmt.Sprintf("c%d", c), 0)
			}
			n.e.Start()
			start := time.Now()
			total := produceAtRate(b, n, "src", 6, 10_000, 5*time.Second, 50)
			deadline := time.Now().Add(30 * time.Second)
			for c := 0; c < children; c++ {
				for n.total(fmt.Sprintf("c%d", c), 6) < total && time.Now().Before(deadline) {
					time.Sleep(10 * time.Millisecond)
				}
			}
			elapsed := time.Since(start)
			var all []float64
			for c := 0; c < children; c++ {
				all = append(all, latencies(b, n, "src", 6, fmt.Sprintf("c%d", c), 6, 0)...)
			}
			sort.Float64s(all)
			b.ReportMetric(float64(len(all))/elapsed.Seconds(), "copies/s")
			b.ReportMetric(pct(all, 0.50), "p50-ms")
			b.ReportMetric(pct(all, 0.99), "p99-ms")
			b.ReportMetric(float64(total), "parent-records")
		})
	}
}

// BenchmarkFanoutDelayAccuracy: lateness after due of a 300 ms delay child
// fed at 1,000 records/s for 3 s.
func BenchmarkFanoutDelayAccuracy(b *testing.B) {
	n := newNode(b, Config{})
	n.createTopic("src", 3, 0)
	n.createTopic("late", 3, 0)
	const delay = 300 * time.Millisecond
	n.attach("src", "late", delay.Milliseconds())
	n.e.Start()
	total := produceAtRate(b, n, "src", 3, 1000, 3*time.Second, 10)
	deadline := time.Now().Add(30 * time.Second)
	for n.total("late", 3) < total && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	l := latencies(b, n, "src", 3, "late", 3, delay)
	b.ReportMetric(pct(l, 0.0), "min-ms")
	b.ReportMetric(pct(l, 0.50), "p50-ms")
	b.ReportMetric(pct(l, 0.99), "p99-ms")
}

func cpuTime() time.Duration {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// BenchmarkFanoutIdleDelayCursor: process CPU over 3 s of one delay cursor
// with 1,000,000 pending records and with 1 (they should match: O(1)).
func BenchmarkFanoutIdleDelayCursor(b *testing.B) {
	for _, pending := range []int{1, 1_000_000} {
		b.Run(fmt.Sprintf("pending=%d", pending), func(b *testing.B) {
			n := newNode(b, Config{})
			n.createTopic("big", 1, 0)
			n.createTopic("slow", 1, 0)
			n.attach("big", "slow", time.Hour.Milliseconds())
			for done := 0; done < pending; {
				batch := make([]storage.Record, min(10_000, pending-done))
				for i := range batch {
					batch[i].Payload = []byte("pending")
				}
				if err := commitLocal(n.b, n.ctx(), "big", 0, batch); err != nil {
					b.Fatal(err)
				}
				done += len(batch)
			}
			n.e.Start()
			time.Sleep(500 * time.Millisecond)
			l, _ := n.b.Partitions().Get("big", 0)
			r0, c0 := l.Reads(), cpuTime()
			time.Sleep(3 * time.Second)
			b.ReportMetric(float64((cpuTime()-c0).Microseconds())/1000, "cpu-ms/3s")
			b.ReportMetric(float64(l.Reads()-r0), "reads/3s")
		})
	}
}

// BenchmarkReconcileTick: 5,000 topics × 12 partitions and no links; the
// cost of a full pass against a tick that skips it (rule: skip unchanged
// ticks).
func BenchmarkReconcileTick(b *testing.B) {
	n := newNode(b, Config{})
	for i := 0; i < 5000; i++ {
		n.createTopic(fmt.Sprintf("topic-%05d", i), 12, 0)
	}
	b.Run("full-pass", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			n.e.fullPass()
		}
	})
	b.Run("skipped-tick", func(b *testing.B) {
		n.e.Tick()
		n.e.Tick()
		s0 := n.e.Skips()
		b.ResetTimer()
		for i := 0; i < b.N; i++ {
			n.e.Tick()
		}
		b.StopTimer()
		if n.e.Skips()-s0 < uint64(b.N)*9/10 {
			b.Fatalf("only %d of %d ticks skipped", n.e.Skips()-s0, b.N)
		}
	})
}
