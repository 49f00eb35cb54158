package client_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/narad-io/narad/client"
)

// loopEnv is a fake broker with one topic and a loop running over it.
type loopEnv struct {
	t      *testing.T
	b      *fakeBroker
	c      *client.Client
	cancel context.CancelFunc
	done   chan error

	mu     sync.Mutex
	errs   []error // what OnError received
	called []string
}

func newLoopEnv(t *testing.T, visibilityMs int64, payloads ...string) *loopEnv {
	t.Helper()
	b := newFakeBroker()
	t.Cleanup(b.Close)
	c := client.New(b.URL(), "", "", nil)
	ctx := context.Background()
	if _, err := c.CreateTopic(ctx, client.CreateTopicRequest{Name: "jobs", VisibilityTimeoutMs: visibilityMs}); err != nil {
		t.Fatal(err)
	}
	for _, p := range payloads {
		if err := c.Produce(ctx, "jobs", []byte(p), client.ProduceOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	return &loopEnv{t: t, b: b, c: c}
}

// start runs the loop in the background with h.
func (e *loopEnv) start(opts client.ConsumeLoopOptions, h client.Handler) {
	ctx, cancel := context.WithCancel(context.Background())
	e.cancel, e.done = cancel, make(chan error, 1)
	opts.OnError = func(err error) {
		e.mu.Lock()
		defer e.mu.Unlock()
		e.errs = append(e.errs, err)
	}
	if opts.Backoff == 0 {
		opts.Backoff = time.Millisecond
	}
	if opts.Wait == 0 {
		opts.Wait = 50 * time.Millisecond // short long-polls: a stop is seen soon
	}
	go func() { e.done <- e.c.ConsumeLoop(ctx, "jobs", opts, h) }()
	e.t.Cleanup(func() {
		cancel()
		select {
		case <-e.done:
		case <-time.After(20 * time.Second):
			e.t.Error("the loop did not stop after its context was cancelled")
		}
	})
}

// stop cancels the loop and returns what it returned.
func (e *loopEnv) stop() error {
	e.t.Helper()
	e.cancel()
	select {
	case err := <-e.done:
		e.done <- err // for the cleanup
		return err
	case <-time.After(20 * time.Second):
		e.t.Fatal("the loop did not stop after its context was cancelled")
		return nil
	}
}

func (e *loopEnv) wait(what string, cond func() bool) {
	e.t.Helper()
	if err := e.b.waitFor(what, cond); err != nil {
		e.t.Fatal(err)
	}
}

// record notes that the handler saw m.
func (e *loopEnv) record(m client.Message) {
	e.mu.Lock()
	defer e.mu.Unlock()
	p, _ := m.Bytes()
	e.called = append(e.called, fmt.Sprintf("%s#%d", p, m.DeliveryCount))
}

func (e *loopEnv) handled() []string {
	e.mu.Lock()
	defer e.mu.Unlock()
	return append([]string(nil), e.called...)
}

func (e *loopEnv) reported() []error {
	e.mu.Lock()
	defer e.mu.Unlock()
	return append([]error(nil), e.errs...)
}

// A handler that returns nil gets its message acknowledged, once, and
// nothing is nacked or handled twice.
func TestConsumeLoopAcksWhatTheHandlerFinished(t *testing.T) {
	e := newLoopEnv(t, 30000, "a", "b", "c")
	e.start(client.ConsumeLoopOptions{Max: 2}, func(ctx context.Context, m client.Message) error {
		e.record(m)
		return nil
	})
	e.wait("three acks, then a consume", func() bool { return e.b.polledAfter("ack 0:2:3") })
	if err := e.stop(); !errors.Is(err, context.Canceled) {
		t.Fatalf("ConsumeLoop returned %v after a cancel, want context.Canceled", err)
	}
	if got := e.handled(); !slices.Equal(got, []string{"a#1", "b#1", "c#1"}) {
		t.Fatalf("handled %v", got)
	}
	for _, ev := range e.b.eventLog() {
		if !strings.HasPrefix(ev, "ack ") {
			t.Fatalf("events %v: only acks expected", e.b.eventLog())
		}
	}
}

// A handler that returns an error gets its message nacked, so it comes
// back at once (delivery 2) rather than after the visibility timeout.
func TestConsumeLoopNacksWhatTheHandlerRefused(t *testing.T) {
	e := newLoopEnv(t, 30000, "poison")
	e.start(client.ConsumeLoopOptions{}, func(ctx context.Context, m client.Message) error {
		e.record(m)
		if m.DeliveryCount == 1 {
			return errors.New("not this time")
		}
		return nil
	})
	e.wait("the second delivery acked", func() bool { return e.b.polledAfter("ack 0:0:2") })
	e.stop()
	if got := e.b.eventLog(); !slices.Equal(got, []string{"nack 0:0:1", "ack 0:0:2"}) {
		t.Fatalf("events %v, want the first delivery nacked and the second acked", got)
	}
	if got := e.handled(); !slices.Equal(got, []string{"poison#1", "poison#2"}) {
		t.Fatalf("handled %v", got)
	}
}

// With KeepLeaseOnError a failed message is neither acked nor nacked: its
// lease lapses on the server by itself.
func TestConsumeLoopCanLeaveAFailedLeaseToLapse(t *testing.T) {
	e := newLoopEnv(t, 30000, "poison", "fine")
	e.start(client.ConsumeLoopOptions{KeepLeaseOnError: true}, func(ctx context.Context, m client.Message) error {
		if p, _ := m.Bytes(); string(p) == "poison" {
			return errors.New("no")
		}
		return nil
	})
	e.wait("the second message acked", func() bool { return e.b.polledAfter("ack 0:1:2") })
	e.stop()
	if got := e.b.eventLog(); !slices.Equal(got, []string{"ack 0:1:2"}) {
		t.Fatalf("events %v, want only the good message acked", got)
	}
}

// A handler slower than the visibility timeout keeps its message: the loop
// extends the lease while it runs, every third of the timeout it read from
// the topic (30 ms here), and acks once it returns.
func TestConsumeLoopExtendsTheLeaseOfASlowHandler(t *testing.T) {
	e := newLoopEnv(t, 30, "slow")
	e.start(client.ConsumeLoopOptions{}, func(ctx context.Context, m client.Message) error {
		// Runs until the lease was extended three times: many visibility
		// timeouts, whatever the machine's speed.
		if err := e.b.waitFor("three extends", func() bool { return e.b.count("extend 0:0:1") >= 3 }); err != nil {
			return err
		}
		e.record(m)
		return nil
	})
	e.wait("the ack", func() bool { return e.b.polledAfter("ack 0:0:1") })
	errs := e.reported()
	e.stop()
	ev := e.b.eventLog()
	if ev[len(ev)-1] != "ack 0:0:1" {
		t.Fatalf("events %v: the ack must come last, with no extend after it", ev)
	}
	if got := e.handled(); !slices.Equal(got, []string{"slow#1"}) {
		t.Fatalf("handled %v, want the one delivery", got)
	}
	if len(errs) != 0 {
		t.Fatalf("errors reported: %v", errs)
	}
}

// Messages that wait their turn in a batch keep their leases too.
func TestConsumeLoopExtendsTheLeasesWaitingTheirTurn(t *testing.T) {
	e := newLoopEnv(t, 30000, "first", "second")
	e.start(client.ConsumeLoopOptions{Max: 2, ExtendEvery: 5 * time.Millisecond}, func(ctx context.Context, m client.Message) error {
		if p, _ := m.Bytes(); string(p) == "first" {
			return e.b.waitFor("the second message extended", func() bool { return e.b.count("extend 0:1:2") >= 2 })
		}
		return nil
	})
	e.wait("both acked", func() bool { return e.b.polledAfter("ack 0:1:2") && e.b.count("ack 0:0:1") == 1 })
	e.stop()
}

// When an extend finds the lease gone (410), the handler's context is
// cancelled with ErrLeaseLost, the message is not acknowledged, and
// OnError hears of it.
func TestConsumeLoopCancelsAHandlerWhoseLeaseWasLost(t *testing.T) {
	e := newLoopEnv(t, 30000, "late")
	e.b.loseLeases = true
	cause := make(chan error, 1)
	e.start(client.ConsumeLoopOptions{ExtendEvery: 5 * time.Millisecond}, func(ctx context.Context, m client.Message) error {
		<-ctx.Done()
		cause <- context.Cause(ctx)
		return nil // even a nil return must not ack a lost lease
	})
	select {
	case err := <-cause:
		if !errors.Is(err, client.ErrLeaseLost) {
			t.Fatalf("handler context ended with %v, want ErrLeaseLost", err)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("the handler's context was never cancelled")
	}
	e.stop()
	for _, ev := range e.b.eventLog() {
		if !strings.HasPrefix(ev, "extend ") {
			t.Fatalf("events %v: a lost lease must be neither acked nor nacked", e.b.eventLog())
		}
	}
	errs := e.reported()
	if len(errs) == 0 || !errors.Is(errs[0], client.ErrLeaseLost) || client.StatusOf(errs[0]) != http.StatusGone {
		t.Fatalf("reported %v, want ErrLeaseLost with the 410", errs)
	}
}

// Cancelling the loop cancels the running handler; what it did not finish,
// and what was leased but not yet handled, is nacked (handed back at once),
// and ConsumeLoop returns context.Canceled.
func TestConsumeLoopHandsBackWhatItHoldsWhenStopped(t *testing.T) {
	e := newLoopEnv(t, 30000, "one", "two", "three")
	running := make(chan struct{})
	e.start(client.ConsumeLoopOptions{Max: 3}, func(ctx context.Context, m client.Message) error {
		close(running)
		<-ctx.Done()
		return ctx.Err()
	})
	select {
	case <-running:
	case <-time.After(20 * time.Second):
		t.Fatal("the handler never ran")
	}
	if err := e.stop(); !errors.Is(err, context.Canceled) {
		t.Fatalf("ConsumeLoop returned %v, want context.Canceled", err)
	}
	want := []string{"nack 0:0:1", "nack 0:1:2", "nack 0:2:3"}
	if got := e.b.eventLog(); !slices.Equal(got, want) {
		t.Fatalf("events %v, want %v", got, want)
	}
}

// A handler that finishes its message after the stop still gets it
// acknowledged (the work is done), on a context of the loop's own.
func TestConsumeLoopAcksWorkFinishedDuringTheStop(t *testing.T) {
	e := newLoopEnv(t, 30000, "one")
	running := make(chan struct{})
	e.start(client.ConsumeLoopOptions{}, func(ctx context.Context, m client.Message) error {
		close(running)
		<-ctx.Done()
		return nil
	})
	<-running
	e.stop()
	if got := e.b.eventLog(); !slices.Equal(got, []string{"ack 0:0:1"}) {
		t.Fatalf("events %v, want the finished message acked", got)
	}
}

// Consumes that fail with a transient error (503) are retried after a
// backoff and reported; the loop goes on.
func TestConsumeLoopRetriesTransientFailures(t *testing.T) {
	e := newLoopEnv(t, 30000, "after the storm")
	e.b.failConsumes = 2
	e.start(client.ConsumeLoopOptions{}, func(ctx context.Context, m client.Message) error {
		e.record(m)
		return nil
	})
	e.wait("the ack", func() bool { return e.b.polledAfter("ack 0:0:1") })
	errs := e.reported()
	e.stop()
	if len(errs) != 2 || client.StatusOf(errs[0]) != 503 || client.StatusOf(errs[1]) != 503 {
		t.Fatalf("reported %v, want the two 503s", errs)
	}
}

// A failure retrying cannot cure (the topic does not exist) ends the loop
// with that error.
func TestConsumeLoopReturnsAPermanentFailure(t *testing.T) {
	b := newFakeBroker()
	defer b.Close()
	c := client.New(b.URL(), "", "", nil)
	err := c.ConsumeLoop(context.Background(), "missing", client.ConsumeLoopOptions{ExtendEvery: time.Second},
		func(context.Context, client.Message) error { return nil })
	if client.StatusOf(err) != http.StatusNotFound {
		t.Fatalf("ConsumeLoop on a missing topic returned %v, want the 404", err)
	}
	err = c.ConsumeLoop(context.Background(), "missing", client.ConsumeLoopOptions{},
		func(context.Context, client.Message) error { return nil })
	if client.StatusOf(err) != http.StatusNotFound || !strings.Contains(err.Error(), "visibility timeout") {
		t.Fatalf("ConsumeLoop reading a missing topic's timeout returned %v, want the 404", err)
	}
}
