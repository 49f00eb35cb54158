package main

import (
	"context"
	"encoding/hex"
	"errors"
	"fmt"
	"sync/atomic"
	"time"

	"github.com/narad-io/narad/client"
)

// The end-to-end mode (--e2e) measures what a waiting consumer sees: the
// time from the start of a record's produce request to the moment a
// long-polling consumer has it in hand. Producers and consumers run at
// once; with --rate the producers are paced (open loop), so the figure is
// the latency at that load rather than at saturation; with --via-child the
// consumers read a child topic attached to the scratch topic, so the figure
// is the fan-out copy's latency on top of the parent's own.
//
// Each payload starts with its send time: 16 hex digits of nanoseconds
// since the bench started, from the bench's own monotonic clock. Producer
// and consumer are this one process, so no two clocks are compared.
const stampLen = 16

// stamp writes the time since base into the first stampLen bytes of p.
func stamp(p []byte, base time.Time) {
	var raw [8]byte
	v := uint64(time.Since(base))
	for i := 7; i >= 0; i-- {
		raw[i] = byte(v)
		v >>= 8
	}
	hex.Encode(p[:stampLen], raw[:])
}

// stampAge is how long ago (on base's clock) p was stamped.
func stampAge(p []byte, base time.Time) (time.Duration, error) {
	if len(p) < stampLen {
		return 0, fmt.Errorf("payload of %d bytes has no send time (another producer's record?)", len(p))
	}
	var raw [8]byte
	if _, err := hex.Decode(raw[:], p[:stampLen]); err != nil {
		return 0, fmt.Errorf("payload has no send time (another producer's record?): %w", err)
	}
	var v uint64
	for _, b := range raw {
		v = v<<8 | uint64(b)
	}
	return time.Since(base) - time.Duration(v), nil
}

// pacer spaces one producer's requests for --rate: the n-th request of
// producer i is due at start + (i/producers + n) × interval, where the
// interval makes the producers together send rate records per second. A
// late request goes at once and the schedule is kept (open loop: a slow
// answer does not lower the offered load, it shows as latency).
type pacer struct {
	start    time.Time
	interval time.Duration
	next     time.Duration
}

func newPacer(start time.Time, rate, producers, batch, worker int) *pacer {
	if rate <= 0 {
		return nil
	}
	interval := time.Duration(float64(time.Second) * float64(producers*batch) / float64(rate))
	return &pacer{start: start, interval: interval, next: interval * time.Duration(worker) / time.Duration(producers)}
}

// wait blocks until the next request is due (nil pacer: never).
func (p *pacer) wait(ctx context.Context) error {
	if p == nil {
		return nil
	}
	due := p.start.Add(p.next)
	p.next += p.interval
	return client.Sleep(ctx, time.Until(due))
}

// e2eStats is the consumers' side of an end-to-end run: the consume
// requests (as in the consume phase) and, per record, its end-to-end age.
type e2eStats struct {
	consume *phaseStats
	ages    *phaseStats
}

// consumeLive consumes and acknowledges from topic while the producers run
// (consumeUntil), timing each record's age since its stamp.
func (b *bench) consumeLive(ctx context.Context, topic string, base time.Time, done <-chan struct{}, produced func() int64) e2eStats {
	st := e2eStats{consume: newPhaseStats("consume"), ages: newPhaseStats("end-to-end")}
	b.consumeUntil(ctx, topic, st, base, done, produced)
	st.ages.elapsed = st.consume.elapsed
	return st
}

// consumeUntil consumes and acknowledges from topic until every produced
// record is in (produced reports the producers' total once done is
// closed), or until benchIdlePolls empty polls in a row after that. Empty
// long polls are not measured: they time the wait, not the broker; and
// the clock stops at the last message so a quiet tail does not dilute
// msg/s. With st.ages, each record's age since its stamp on base's clock
// is recorded too.
func (b *bench) consumeUntil(ctx context.Context, topic string, st e2eStats, base time.Time, done <-chan struct{}, produced func() int64) {
	var taken atomic.Int64
	var lastAt atomic.Int64 // nanoseconds after start of the last receipt
	start := time.Now()
	ended := func() bool {
		select {
		case <-done:
			return true
		default:
			return false
		}
	}
	workers(ctx, st.consume, b.f.consumers, func(ctx context.Context, fail func(error) bool) {
		for idle := 0; ctx.Err() == nil && idle < benchIdlePolls; {
			max := int64(b.f.consumeMax)
			if ended() {
				left := produced() - taken.Load()
				if left <= 0 {
					return
				}
				max = min(max, left)
			}
			t0 := time.Now()
			msgs, err := b.d.consume(ctx, topic, int(max))
			if err == nil && len(msgs) == 0 {
				if ended() {
					idle++ // nothing more is coming once the producers stopped
				}
				continue
			}
			if err == nil && st.ages != nil {
				err = st.recordAges(msgs, base, b.f.delay)
			}
			if err == nil {
				err = b.ackAll(ctx, st.consume, topic, msgs)
			}
			if err != nil && ctx.Err() != nil {
				return // cut short by Ctrl-C or another worker's refusal: not a measurement
			}
			st.consume.record(len(msgs), time.Since(t0), err)
			if !fail(err) {
				return
			}
			if err == nil {
				idle = 0
				taken.Add(int64(len(msgs)))
				lastAt.Store(int64(time.Since(start)))
			}
		}
	})
	st.consume.elapsed = time.Duration(lastAt.Load())
}

// recordAges records each message's age since its stamp, as of now; a
// message without a stamp (another producer's record) is an error.
func (st e2eStats) recordAges(msgs []client.Message, base time.Time, delay time.Duration) error {
	now := time.Now()
	for _, m := range msgs {
		p, err := m.Bytes()
		if err != nil {
			return err
		}
		age, err := stampAge(p, base)
		if err != nil {
			return err
		}
		// With --delay, what counts is the time past the due time.
		st.ages.record(1, age-time.Since(now)-delay, nil)
	}
	return nil
}

// runE2E is the --e2e run: producers into the target, consumers on the
// consumed topic (the target, or its scratch child), at once.
func (b *bench) runE2E(ctx context.Context, rep *benchReport, produceTo, consumeFrom string) error {
	if consumeFrom != produceTo {
		if err := b.warmChild(ctx, produceTo, consumeFrom); err != nil {
			return err
		}
	}
	base := time.Now()
	done := make(chan struct{})
	var prod *phaseStats
	var total atomic.Int64
	consumed := make(chan e2eStats, 1)
	go func() {
		consumed <- b.consumeLive(ctx, consumeFrom, base, done, total.Load)
	}()
	prod = b.produceStamped(ctx, produceTo, base)
	total.Store(int64(prod.ok()))
	close(done)
	st := <-consumed
	rep.Produce = prod.report(b.f.size)
	rep.Consume = st.consume.report(b.f.size)
	if st.ages.hist.TotalCount() > 0 {
		l := st.ages.report(b.f.size).LatencyUs
		rep.EndToEnd = &l
	}
	failed := errors.Join(prod.failure(), st.consume.failure())
	if got, want := st.consume.ok(), prod.ok(); failed == nil && ctx.Err() == nil && got < want {
		failed = fmt.Errorf("end-to-end: %d of %d produced records were consumed", got, want)
	}
	return failed
}

// warmChildTimeout bounds the wait for a fresh child's first copy.
const warmChildTimeout = 30 * time.Second

// warmChild sends one probe record through the parent and waits until the
// child has it (and acknowledges it there), so that the measured records
// time the copy, not the start of a new link's cursors (the engine's
// reconciler starts them within a second of the attach: without this, the
// first second's records waited for it and were the run's whole p99).
func (b *bench) warmChild(ctx context.Context, parent, child string) error {
	ctx, cancel := context.WithTimeout(ctx, warmChildTimeout)
	defer cancel()
	if err := b.c.Produce(ctx, parent, []byte("bench warm-up probe"), client.ProduceOptions{}); err != nil {
		return fmt.Errorf("warming up the child: producing the probe into %s: %w", parent, err)
	}
	for {
		msgs, err := b.c.Consume(ctx, child, client.ConsumeOptions{Wait: time.Second, Max: 1})
		if err != nil {
			return fmt.Errorf("warming up the child: waiting for the probe in %s: %w", child, err)
		}
		if len(msgs) > 0 {
			return b.c.Ack(ctx, child, msgs[0].ReceiptHandle)
		}
	}
}
