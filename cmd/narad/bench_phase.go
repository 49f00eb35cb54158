package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/narad-io/narad/client"
)

// benchFailures is how many failed requests in a row end a worker: a
// broker that keeps failing ends the phase instead of being hammered.
// benchIdlePolls is the same for empty long polls of a consumer: the
// messages are all there after the produce phase, so a run of empty polls
// means they are gone (acks that failed: their records come back only
// after the visibility timeout).
const (
	benchFailures  = 3
	benchIdlePolls = 3
)

// workers runs n copies of work on a context that the first hard error
// cancels, so every worker stops at once; stats learn how the phase ended.
// A worker calls fail with each failed request's error: a refusal (4xx but
// 429) is hard, anything else counts towards benchFailures, with a pause
// (backoff, or the server's Retry-After) before the next try.
func workers(ctx context.Context, s *phaseStats, n int, work func(ctx context.Context, fail func(error) bool)) {
	phaseCtx, stopAll := context.WithCancelCause(ctx)
	defer stopAll(nil)
	var gaveUp atomic.Int64
	var wg sync.WaitGroup
	for range n {
		wg.Go(func() {
			failures := 0
			fail := func(err error) bool {
				if err == nil {
					failures = 0
					return true
				}
				if !client.IsTransient(err) {
					stopAll(err)
					return false
				}
				if failures++; failures >= benchFailures {
					gaveUp.Add(1)
					return false
				}
				return pause(phaseCtx, failures-1, err) == nil
			}
			work(phaseCtx, fail)
		})
	}
	wg.Wait()
	s.mu.Lock()
	defer s.mu.Unlock()
	switch cause := context.Cause(phaseCtx); {
	case ctx.Err() != nil:
		s.stopped = stoppedInterrupted
	case cause != nil && !errors.Is(cause, context.Canceled):
		s.stopped, s.hardErr = stoppedHardError, cause
	case gaveUp.Load() == int64(n):
		s.stopped = stoppedFailures
	}
}

// produce runs the producers. Work is claimed from a shared counter so the
// total is exact whatever the split between producers; with --duration a
// request is started only before the deadline, and none is cut short, so
// every counted message was answered.
func (b *bench) produce(ctx context.Context, topic string) *phaseStats {
	return b.produceStamped(ctx, topic, time.Time{})
}

// produceStamped is produce; with a non-zero base every request's payloads
// carry its send time (stamp, for --e2e), and with --rate each producer is
// paced (pacer).
func (b *bench) produceStamped(ctx context.Context, topic string, base time.Time) *phaseStats {
	s := newPhaseStats("produce")
	var claimed, ids atomic.Int64
	start := time.Now()
	end := start.Add(b.f.duration)
	claim := func() int {
		if b.f.duration > 0 {
			if time.Now().Before(end) {
				return b.f.batch
			}
			return 0
		}
		last := claimed.Add(int64(b.f.batch))
		first := last - int64(b.f.batch)
		if first >= int64(b.f.messages) {
			return 0
		}
		return int(min(last, int64(b.f.messages)) - first)
	}
	stopBar := b.progress(s, int64(b.f.messages), b.f.duration > 0)
	workers(ctx, s, b.f.producers, func(ctx context.Context, fail func(error) bool) {
		pace := newPacer(start, b.f.rate, b.f.producers, b.f.batch, int(ids.Add(1)-1))
		payload := bytes.Repeat([]byte("x"), b.f.size)
		records := make([]client.BatchRecord, b.f.batch)
		fill := func() {
			for i := range records {
				records[i] = client.RecordFromBytes(payload)
				if b.f.delay > 0 {
					records[i] = records[i].WithDelay(b.f.delay)
				}
				if k := b.nextKey(); k != nil {
					records[i] = records[i].WithKey([]byte(*k))
				}
			}
		}
		fill()
		for n := claim(); n > 0 && ctx.Err() == nil; n = claim() {
			if pace.wait(ctx) != nil {
				return
			}
			t0 := time.Now()
			if !base.IsZero() {
				stamp(payload, base)
				if b.f.batch > 1 {
					fill()
				}
			}
			var err error
			if b.f.batch == 1 {
				err = b.d.produce(ctx, topic, payload, b.produceOptions())
			} else {
				var accepted int
				accepted, err = b.d.produceBatch(ctx, topic, records[:n])
				if err == nil && accepted != n {
					err = fmt.Errorf("batch of %d: the server accepted %d", n, accepted)
				}
			}
			if err != nil && ctx.Err() != nil {
				return // cut short by Ctrl-C or another worker's refusal: not a measurement
			}
			s.record(n, time.Since(t0), err)
			if !fail(err) {
				return
			}
		}
	})
	s.elapsed = time.Since(start)
	stopBar()
	return s
}

// consume consumes and acknowledges target messages, after the produce
// phase (consumeUntil with the producers done).
func (b *bench) consume(ctx context.Context, topic string, target int) *phaseStats {
	s := newPhaseStats("consume")
	stopBar := b.progress(s, int64(target), false)
	done := make(chan struct{})
	close(done)
	b.consumeUntil(ctx, topic, e2eStats{consume: s}, time.Time{}, done, func() int64 { return int64(target) })
	stopBar()
	return s
}

// benchAckTries is how often a bench consumer tries an ack: a 503 (the
// partition's acked-ahead window is full) clears when another consumer
// settles the record at the frontier, which is part of the flow measured.
const benchAckTries = 8

// ackAll acknowledges msgs like any careful client: transient refusals are
// retried (and counted), anything else fails the request.
func (b *bench) ackAll(ctx context.Context, s *phaseStats, topic string, msgs []client.Message) error {
	handles := make([]string, 0, len(msgs))
	for _, m := range msgs {
		handles = append(handles, m.ReceiptHandle)
	}
	var first error
	_, retried := b.d.ack(ctx, topic, handles, benchAckTries, func(h string, err error) {
		if first == nil {
			first = fmt.Errorf("ack %s: %w", h, err)
		}
	})
	s.addRetried(retried)
	return first
}

// produceOptions are a single produce's options: the --delay and the
// next of the --keys, if any.
func (b *bench) produceOptions() client.ProduceOptions {
	var o client.ProduceOptions
	if b.f.delay > 0 {
		d := b.f.delay
		o.Delay = &d
	}
	o.Key = b.nextKey()
	return o
}

// nextKey is the next of the --keys in turn (nil: keyless).
func (b *bench) nextKey() *string {
	if b.f.keys <= 0 {
		return nil
	}
	k := "k" + strconv.FormatInt(b.keyTurn.Add(1)%int64(b.f.keys), 10)
	return &k
}
