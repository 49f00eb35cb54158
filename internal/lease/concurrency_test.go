package lease

import (
	"errors"
	"sync"
	"testing"
)

// TestConcurrentConsumers runs consumers in parallel against one table
// (meaningful under -race) and checks the core safety property from the
// outside: no offset is ever held by two consumers at once, and every
// record is acked exactly once. The clock does not move, so a lease is
// held exactly from Reserve until its holder acks or nacks it.
func TestConcurrentConsumers(t *testing.T) {
	const (
		hwm       = 2000
		consumers = 8
	)
	tb, _ := newTable(t, Limits{VisibilityTimeout: vt, MaxInFlight: 64, MaxAckedAhead: hwm})

	var (
		mu      sync.Mutex
		holder  = map[uint64]int{}
		acked   = map[uint64]int{}
		failure error
	)
	fail := func(err error) {
		mu.Lock()
		defer mu.Unlock()
		if failure == nil {
			failure = err
		}
	}

	var wg sync.WaitGroup
	done := make(chan struct{})
	for c := range consumers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; tb.Frontier() < hwm; i++ {
				batch := tb.Reserve(hwm, 5)
				// Hold the whole batch in our books first, so the window
				// in which a double lease would be seen is wide.
				mu.Lock()
				for _, l := range batch {
					if _, held := holder[l.Offset]; held {
						mu.Unlock()
						fail(errors.New("offset leased to two consumers at once"))
						return
					}
					holder[l.Offset] = c
				}
				mu.Unlock()
				for _, l := range batch {
					// Let go in our books before the table does: right
					// after Nack another consumer may get the offset.
					mu.Lock()
					delete(holder, l.Offset)
					mu.Unlock()
					// The clock is frozen, so no lease can expire: any
					// error here means two holders raced for one lease.
					if (i+int(l.Offset))%5 == 0 {
						if err := tb.Nack(l.Offset, l.Nonce); err != nil {
							fail(err)
						}
						continue
					}
					if err := tb.Ack(l.Offset, l.Nonce); err != nil {
						fail(err)
						continue
					}
					mu.Lock()
					acked[l.Offset]++
					mu.Unlock()
				}
			}
		}()
	}
	// A sweeper and a persister poll concurrently, as in production.
	var bg sync.WaitGroup
	bg.Add(1)
	go func() {
		defer bg.Done()
		for {
			select {
			case <-done:
				return
			default:
				tb.Expire()
				tb.NextExpiry()
				tb.FrontierVersion()
				tb.Stats()
			}
		}
	}()
	wg.Wait()
	close(done)
	bg.Wait()

	if failure != nil {
		t.Fatal(failure)
	}
	if len(acked) != hwm {
		t.Fatalf("%d distinct offsets acked, want %d", len(acked), hwm)
	}
	for off, n := range acked {
		if n != 1 {
			t.Fatalf("offset %d acked %d times", off, n)
		}
	}
	if s := tb.Stats(); s.Frontier != hwm || s.InFlight != 0 || s.AckedAhead != 0 {
		t.Fatalf("final Stats = %+v", s)
	}
	checkInternal(t, tb)
}
