package main

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/narad-io/narad/client"
)

// peekPoll is the pause after an empty read that came back early, so a
// server that does not long-poll offset reads is not hammered. A variable
// so tests need not wait.
var peekPoll = 250 * time.Millisecond

// peek tails every partition from its current end by reading by offset.
// Offset reads create no deliveries, so peeking never takes messages away
// from real consumers. One goroutine per partition, so a quiet partition's
// long poll does not delay a busy one.
func (s *subscriber) peek(ctx context.Context) error {
	info, err := s.c.GetTopic(ctx, s.topic)
	if err != nil {
		return err
	}
	if len(info.PartitionStats) == 0 {
		return fmt.Errorf("topic %s: the server reported no partition stats, so there is no tail to start from", s.topic)
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()

	var (
		mu       sync.Mutex // serialises printing and the count
		printed  int
		wg       sync.WaitGroup
		errOnce  sync.Once
		firstErr error
	)
	fail := func(err error) {
		errOnce.Do(func() { firstErr = err; cancel() })
	}
	// deliver prints msgs in order; it reports false once --count is reached.
	deliver := func(msgs []client.Message) bool {
		mu.Lock()
		defer mu.Unlock()
		for _, m := range msgs {
			if s.f.count > 0 && printed >= s.f.count {
				break
			}
			if err := s.printer.print(m); err != nil {
				fail(err)
				return false
			}
			printed++
		}
		if err := s.flush(); err != nil {
			fail(err)
			return false
		}
		if s.f.count > 0 && printed >= s.f.count {
			cancel()
			return false
		}
		return true
	}
	for _, p := range info.PartitionStats {
		wg.Add(1)
		go func(part int, next uint64) {
			defer wg.Done()
			for ctx.Err() == nil {
				start := time.Now()
				off := next
				msgs, err := s.c.Consume(ctx, s.topic, client.ConsumeOptions{Partition: &part, Offset: &off, Max: max(s.f.max, 1), Wait: s.f.wait})
				if err != nil {
					if ctx.Err() == nil {
						fail(fmt.Errorf("partition %d: %w", part, err))
					}
					return
				}
				if len(msgs) == 0 {
					if time.Since(start) < s.f.wait || s.f.wait == 0 {
						_ = client.Sleep(ctx, peekPoll)
					}
					continue
				}
				last := msgs[len(msgs)-1].Offset
				if last < next {
					fail(fmt.Errorf("partition %d: read from offset %d returned offset %d", part, next, last))
					return
				}
				if !deliver(msgs) {
					return
				}
				next = last + 1
			}
		}(p.Index, p.NextOffset)
	}
	wg.Wait()
	if firstErr != nil {
		return firstErr
	}
	if s.f.count > 0 && printed >= s.f.count {
		return nil
	}
	return ctx.Err()
}
