package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/narad-io/narad/client"
	"github.com/spf13/cobra"
)

type benchFlags struct {
	producers int
	messages  int
	size      int
	batch     int
	consume   bool
}

func (a *app) benchCmd() *cobra.Command {
	var f benchFlags
	cmd := &cobra.Command{
		Use:   "bench TOPIC",
		Short: "Measure produce (and consume) throughput and latency",
		Long: `Send --messages messages of --size bytes to TOPIC from --producers concurrent
producers, then print messages per second and the p50/p95/p99 latency of
the requests. --batch N sends N records per request with the batch API.
--consume then consumes and acknowledges the same number of messages.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if f.producers < 1 || f.messages < 1 || f.batch < 1 || f.size < 0 {
				return errors.New("--producers, --messages and --batch must be at least 1, --size at least 0")
			}
			c, err := a.client()
			if err != nil {
				return err
			}
			ctx, stop := withSignals(cmd.Context())
			defer stop()
			b := bencher{c: c, topic: args[0], f: f, prog: a.newProgress()}
			res, err := b.produce(ctx)
			if err != nil {
				return err
			}
			res.print(a.stdout, "produce", f.size)
			failed := res.failure()
			if f.consume && ctx.Err() == nil {
				cres, err := b.consumeAll(ctx)
				if err != nil {
					return err
				}
				cres.print(a.stdout, "consume", f.size)
				failed = errors.Join(failed, cres.failure())
			}
			return failed
		},
	}
	fs := cmd.Flags()
	fs.IntVar(&f.producers, "producers", 16, "concurrent producers (and consumers with --consume)")
	fs.IntVar(&f.messages, "messages", 10000, "messages to send")
	fs.IntVar(&f.size, "size", 256, "payload size in bytes")
	fs.IntVar(&f.batch, "batch", 1, "records per request; above 1 uses batch produce")
	fs.BoolVar(&f.consume, "consume", false, "also consume and acknowledge the messages")
	return cmd
}

type bencher struct {
	c     *client.Client
	topic string
	f     benchFlags
	prog  *progress
}

// benchResult collects one phase. Latencies are per request.
type benchResult struct {
	mu        sync.Mutex
	messages  int
	requests  int
	errors    int
	firstErr  error
	latencies []time.Duration
	elapsed   time.Duration
	retried   int // ack handles retried after a transient answer
}

func (r *benchResult) record(n int, d time.Duration, err error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.requests++
	r.latencies = append(r.latencies, d)
	if err != nil {
		r.errors++
		if r.firstErr == nil {
			r.firstErr = err
		}
		return
	}
	r.messages += n
}

func (r *benchResult) count() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.messages
}

func (r *benchResult) print(w io.Writer, phase string, size int) {
	secs := r.elapsed.Seconds()
	if secs <= 0 {
		secs = 1e-9
	}
	slices.Sort(r.latencies)
	fmt.Fprintf(w, "%s: %d messages in %s: %.0f msg/s, %.2f MiB/s; %d requests, latency p50 %s p95 %s p99 %s\n",
		phase, r.messages, r.elapsed.Round(time.Millisecond), float64(r.messages)/secs,
		float64(r.messages*size)/secs/(1<<20), r.requests,
		roundLatency(percentile(r.latencies, 50)), roundLatency(percentile(r.latencies, 95)), roundLatency(percentile(r.latencies, 99)))
	if r.retried > 0 {
		fmt.Fprintf(w, "%s: %d acks retried after a transient answer (503: the partition's acked-ahead window was full)\n", phase, r.retried)
	}
	if r.errors > 0 {
		fmt.Fprintf(w, "%s: %d of %d requests failed; first: %v\n", phase, r.errors, r.requests, r.firstErr)
	}
}

func (r *benchResult) failure() error {
	if r.errors == 0 {
		return nil
	}
	return fmt.Errorf("%d of %d requests failed: %w", r.errors, r.requests, r.firstErr)
}

// percentile is the nearest-rank percentile of sorted durations.
func percentile(sorted []time.Duration, p float64) time.Duration {
	if len(sorted) == 0 {
		return 0
	}
	rank := int(float64(len(sorted))*p/100+0.999999999) - 1
	return sorted[min(max(rank, 0), len(sorted)-1)]
}

func roundLatency(d time.Duration) time.Duration {
	if d >= time.Millisecond {
		return d.Round(10 * time.Microsecond)
	}
	return d.Round(time.Microsecond)
}

// produce runs the producers. Work is claimed from a shared counter so the
// total is exact whatever the split between producers.
func (b *bencher) produce(ctx context.Context) (*benchResult, error) {
	payload := bytes.Repeat([]byte("x"), b.f.size)
	record := client.RecordFromBytes(payload)
	var claimed atomic.Int64
	claim := func() int {
		end := claimed.Add(int64(b.f.batch))
		startAt := end - int64(b.f.batch)
		if startAt >= int64(b.f.messages) {
			return 0
		}
		return int(min(end, int64(b.f.messages)) - startAt)
	}
	res := &benchResult{}
	stopProgress := b.showProgress("produced", res)
	start := time.Now()
	var wg sync.WaitGroup
	for range b.f.producers {
		wg.Go(func() {
			records := make([]client.BatchRecord, b.f.batch)
			for i := range records {
				records[i] = record
			}
			for n := claim(); n > 0 && ctx.Err() == nil; n = claim() {
				t0 := time.Now()
				var err error
				if b.f.batch == 1 {
					err = b.c.Produce(ctx, b.topic, payload, client.ProduceOptions{})
				} else {
					var accepted int
					accepted, err = b.c.ProduceBatch(ctx, b.topic, records[:n])
					if err == nil && accepted != n {
						err = fmt.Errorf("batch of %d: server accepted %d", n, accepted)
					}
				}
				res.record(n, time.Since(t0), err)
			}
		})
	}
	wg.Wait()
	res.elapsed = time.Since(start)
	stopProgress()
	if ctx.Err() != nil {
		return nil, ctx.Err()
	}
	return res, nil
}

// benchIdlePolls is how many empty long polls in a row end a consumer: the
// messages are all there after the produce phase, so a run of empty polls
// means someone else took the rest. benchFailures is the same for errors:
// a broker that keeps failing ends the phase instead of being hammered.
const (
	benchIdlePolls = 3
	benchFailures  = 3
)

// consumeAll consumes and acknowledges --messages messages. Empty long
// polls are not measured: they time the wait, not the broker, and the
// clock stops at the last message so a quiet tail does not dilute msg/s.
func (b *bencher) consumeAll(ctx context.Context) (*benchResult, error) {
	res := &benchResult{}
	var taken atomic.Int64
	var lastAt atomic.Int64 // nanoseconds after start of the last receipt
	stopProgress := b.showProgress("consumed", res)
	start := time.Now()
	var wg sync.WaitGroup
	for range b.f.producers {
		wg.Go(func() {
			idle, failures := 0, 0
			for ctx.Err() == nil && idle < benchIdlePolls && failures < benchFailures {
				left := int64(b.f.messages) - taken.Load()
				if left <= 0 {
					return
				}
				t0 := time.Now()
				msgs, err := b.c.Consume(ctx, b.topic, client.ConsumeOptions{Wait: time.Second, Max: int(min(left, 100))})
				if err == nil && len(msgs) == 0 {
					idle++
					continue
				}
				if err == nil {
					err = b.ackAll(ctx, res, msgs)
				}
				res.record(len(msgs), time.Since(t0), err)
				if err != nil {
					failures++
					continue
				}
				idle, failures = 0, 0
				taken.Add(int64(len(msgs)))
				lastAt.Store(int64(time.Since(start)))
			}
		})
	}
	wg.Wait()
	res.elapsed = time.Duration(lastAt.Load())
	stopProgress()
	if ctx.Err() != nil {
		return nil, ctx.Err()
	}
	return res, nil
}

// benchAckTries is how often a bench consumer tries an ack: a 503 (the
// partition's acked-ahead window is full) clears when another consumer
// settles the record at the frontier, which is part of the flow measured.
const benchAckTries = 8

// ackAll acknowledges msgs like any careful client: transient refusals are
// retried (and counted), anything else fails the request.
func (b *bencher) ackAll(ctx context.Context, res *benchResult, msgs []client.Message) error {
	handles := make([]string, 0, len(msgs))
	for _, m := range msgs {
		handles = append(handles, m.ReceiptHandle)
	}
	var first error
	_, retried := ackHandles(ctx, b.c, b.topic, handles, benchAckTries, func(h string, err error) {
		if first == nil {
			first = fmt.Errorf("ack %s: %w", h, err)
		}
	})
	res.mu.Lock()
	res.retried += retried
	res.mu.Unlock()
	return first
}

// showProgress redraws "<verb> n/total" until the returned func is called.
func (b *bencher) showProgress(verb string, res *benchResult) func() {
	if !b.prog.enabled {
		return func() {}
	}
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		t := time.NewTicker(200 * time.Millisecond)
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case <-t.C:
				b.prog.update("%s %d/%d", verb, res.count(), b.f.messages)
			}
		}
	})
	return func() {
		close(done)
		wg.Wait()
		b.prog.done("")
	}
}
