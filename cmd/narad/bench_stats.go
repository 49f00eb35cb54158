package main

import (
	"sync"
	"sync/atomic"
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"
)

// Latencies are recorded in microseconds from 1µs to an hour with three
// significant digits: 0.1% resolution at any size, in a few tens of KiB.
const (
	latencyLowest  = 1
	latencyHighest = int64(time.Hour / time.Microsecond)
	latencyDigits  = 3
)

// Why a phase ended before its work was done.
const (
	stoppedHardError   = "hard_error"  // a refusal: repeating the request cannot help
	stoppedFailures    = "failures"    // every worker failed benchFailures times in a row
	stoppedInterrupted = "interrupted" // Ctrl-C
)

// phaseStats collects one phase. Latencies are per request (a produce, or
// a consume with the acks of what it returned).
type phaseStats struct {
	name     string
	messages atomic.Int64 // read by the progress bar while workers run

	mu       sync.Mutex
	hist     *hdrhistogram.Histogram
	requests int64
	errors   int64
	firstErr error
	retried  int // ack handles retried after a transient answer
	elapsed  time.Duration
	stopped  string
	hardErr  error
}

func newPhaseStats(name string) *phaseStats {
	return &phaseStats{name: name, hist: hdrhistogram.New(latencyLowest, latencyHighest, latencyDigits)}
}

// record notes one request that carried n messages.
func (s *phaseStats) record(n int, d time.Duration, err error) {
	us := min(max(d.Microseconds(), latencyLowest), latencyHighest)
	s.mu.Lock()
	defer s.mu.Unlock()
	s.requests++
	_ = s.hist.RecordValue(us) // cannot fail: us is clamped to the range
	if err != nil {
		s.errors++
		if s.firstErr == nil {
			s.firstErr = err
		}
		return
	}
	s.messages.Add(int64(n))
}

func (s *phaseStats) addRetried(n int) {
	s.mu.Lock()
	s.retried += n
	s.mu.Unlock()
}

// ok is how many messages the phase moved.
func (s *phaseStats) ok() int { return int(s.messages.Load()) }
