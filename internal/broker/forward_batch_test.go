package broker

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/narad-io/narad/internal/storage"
)

// stubLeader is a send for forwards.commit: it records each commit's
// payloads, gives the records the next offsets, and holds the first
// commit until released, so that produces pile up behind it.
type stubLeader struct {
	mu      sync.Mutex
	commits [][]string
	next    uint64
	hold    chan struct{}
	err     error
}

func (l *stubLeader) send(recs []storage.Record) error {
	l.mu.Lock()
	first := len(l.commits) == 0
	var ps []string
	for i := range recs {
		ps = append(ps, string(recs[i].Payload))
		recs[i].Offset = l.next
		l.next++
	}
	l.commits = append(l.commits, ps)
	err := l.err
	l.mu.Unlock()
	if first && l.hold != nil {
		<-l.hold
	}
	return err
}

func bucket(name string, n int) []storage.Record {
	recs := make([]storage.Record, n)
	for i := range recs {
		recs[i] = storage.Record{Payload: []byte(fmt.Sprintf("%s%d", name, i)), Offset: storage.NoOffset}
	}
	return recs
}

// waitCommits waits until the leader has seen n commits.
func (l *stubLeader) waitCommits(t *testing.T, n int) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		l.mu.Lock()
		got := len(l.commits)
		l.mu.Unlock()
		if got >= n {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d commits, want %d", got, n)
		}
		time.Sleep(time.Millisecond)
	}
}

// requireNoQueues fails the test unless every partition's queue was
// dropped: nothing waits and nothing is in flight.
func requireNoQueues(t *testing.T, f *forwards) {
	t.Helper()
	f.mu.Lock()
	defer f.mu.Unlock()
	if len(f.queues) != 0 {
		t.Fatalf("%d partition queues left once nothing waits", len(f.queues))
	}
}

// waitPending waits until n produces wait behind the commit in flight.
func waitPending(t *testing.T, f *forwards, k forwardKey, n int) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		f.mu.Lock()
		got := 0
		if q := f.queues[k]; q != nil {
			got = len(q.pending)
		}
		f.mu.Unlock()
		if got == n {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d produces waiting, want %d", got, n)
		}
		time.Sleep(time.Millisecond)
	}
}

// Produces that arrive while a partition's forwarded commit is in flight
// go together in the next one, each learning its own records' offsets,
// contiguous and in its order.
func TestForwardsCoalesce(t *testing.T) {
	var f forwards
	k := forwardKey{"t", 1, 0}
	l := &stubLeader{hold: make(chan struct{})}
	buckets := map[string][]storage.Record{"a": bucket("a", 2), "b": bucket("b", 3), "c": bucket("c", 1), "d": bucket("d", 2)}
	errs := make(chan error, len(buckets))
	go func() { errs <- f.commit(context.Background(), k, buckets["a"], l.send) }()
	l.waitCommits(t, 1) // a is in flight
	for _, name := range []string{"b", "c", "d"} {
		go func() { errs <- f.commit(context.Background(), k, buckets[name], l.send) }()
	}
	waitPending(t, &f, k, 3)
	close(l.hold)
	for range buckets {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
	if len(l.commits) != 2 || len(l.commits[0]) != 2 || len(l.commits[1]) != 6 {
		t.Fatalf("commits %v: want a alone, then b, c and d in one", l.commits)
	}
	for name, recs := range buckets {
		for i := range recs {
			if string(recs[i].Payload) != fmt.Sprintf("%s%d", name, i) {
				t.Fatalf("bucket %s record %d is %q", name, i, recs[i].Payload)
			}
			if i > 0 && recs[i].Offset != recs[i-1].Offset+1 {
				t.Fatalf("bucket %s offsets not contiguous: %d after %d", name, recs[i].Offset, recs[i-1].Offset)
			}
			if got := l.commits[0]; name == "a" && got[i] != string(recs[i].Payload) {
				t.Fatalf("a's record %d went out as %q", i, got[i])
			}
			if name != "a" && l.commits[1][recs[i].Offset-2] != string(recs[i].Payload) {
				t.Fatalf("bucket %s record %d has offset %d, which the leader gave %q", name, i, recs[i].Offset, l.commits[1][recs[i].Offset-2])
			}
		}
	}
	requireNoQueues(t, &f)
}

// A failed commit fails every produce it carried; a produce that stops
// waiting gets its context's error.
func TestForwardsShareTheOutcome(t *testing.T) {
	var f forwards
	k := forwardKey{"t", 1, 0}
	boom := errors.New("leader gone")
	l := &stubLeader{hold: make(chan struct{}), err: boom}
	errs := make(chan error, 3)
	go func() { errs <- f.commit(context.Background(), k, bucket("a", 1), l.send) }()
	l.waitCommits(t, 1)
	ctx, cancel := context.WithCancel(context.Background())
	go func() { errs <- f.commit(ctx, k, bucket("b", 1), l.send) }()
	go func() { errs <- f.commit(context.Background(), k, bucket("c", 1), l.send) }()
	waitPending(t, &f, k, 2)
	cancel()
	if err := <-errs; !errors.Is(err, context.Canceled) {
		t.Fatalf("the produce that stopped waiting: %v, want its context's error", err)
	}
	close(l.hold)
	for range 2 {
		if err := <-errs; !errors.Is(err, boom) {
			t.Fatalf("a produce of a failed commit: %v, want the commit's error", err)
		}
	}
}

// A commit stops short of the bounds: what would pass them waits for the
// next one.
func TestForwardsBounds(t *testing.T) {
	var f forwards
	k := forwardKey{"t", 1, 0}
	l := &stubLeader{hold: make(chan struct{})}
	errs := make(chan error, 3)
	go func() { errs <- f.commit(context.Background(), k, bucket("a", 1), l.send) }()
	l.waitCommits(t, 1)
	go func() { errs <- f.commit(context.Background(), k, bucket("b", forwardMaxRecords-1), l.send) }()
	waitPending(t, &f, k, 1)
	go func() { errs <- f.commit(context.Background(), k, bucket("c", 2), l.send) }()
	waitPending(t, &f, k, 2)
	close(l.hold)
	for range 3 {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
	var sizes []int
	for _, c := range l.commits {
		sizes = append(sizes, len(c))
	}
	if len(sizes) != 3 || sizes[1] != forwardMaxRecords-1 || sizes[2] != 2 {
		t.Fatalf("commits of %v records: want [1 %d 2]", sizes, forwardMaxRecords-1)
	}
}

// A partition counts as stalled only while a forwarded commit of it has
// been in flight for more than stallAfter.
func TestForwardsStalled(t *testing.T) {
	var f forwards
	k, other := forwardKey{"t", 1, 0}, forwardKey{"t", 1, 1}
	l := &stubLeader{hold: make(chan struct{})}
	done := make(chan error, 1)
	go func() { done <- f.commit(context.Background(), k, bucket("a", 1), l.send) }()
	l.waitCommits(t, 1)
	now := time.Now()
	if f.stalled(k, now) {
		t.Fatal("a commit just sent counts as stalled")
	}
	if !f.stalled(k, now.Add(2*stallAfter)) {
		t.Fatalf("a commit in flight for %v does not count as stalled", 2*stallAfter)
	}
	if f.stalled(other, now.Add(2*stallAfter)) {
		t.Fatal("a partition with nothing in flight counts as stalled")
	}
	close(l.hold)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if f.stalled(k, now.Add(2*stallAfter)) {
		t.Fatal("a partition whose commit returned still counts as stalled")
	}

	// A failed commit: the partition is left alone for stallAfter, then
	// one commit may try it, and while that one is in flight it still
	// counts as stalled; a success clears it.
	bad := &stubLeader{err: errors.New("taking over")}
	if err := f.commit(context.Background(), k, bucket("b", 1), bad.send); err == nil {
		t.Fatal("the failing commit succeeded")
	}
	failedAt := time.Now()
	if !f.stalled(k, failedAt) {
		t.Fatal("a partition whose commit just failed does not count as stalled")
	}
	if f.stalled(k, failedAt.Add(2*stallAfter)) {
		t.Fatalf("a partition that failed %v ago with nothing in flight still counts as stalled", 2*stallAfter)
	}
	f.mu.Lock()
	f.failed[k] = time.Now().Add(-2 * stallAfter) // the failure is old
	f.mu.Unlock()
	slow := &stubLeader{hold: make(chan struct{})}
	go func() { done <- f.commit(context.Background(), k, bucket("c", 1), slow.send) }()
	slow.waitCommits(t, 1)
	if !f.stalled(k, time.Now()) {
		t.Fatal("a partition whose last commit failed counts as writable while another tries it")
	}
	close(slow.hold)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if f.stalled(k, time.Now()) {
		t.Fatal("a partition whose commit succeeded after a failure still counts as stalled")
	}
}

// A produce that stops waiting while its records are queued takes them
// out: they are never sent, and the partition's queue is dropped once
// nothing else waits.
func TestForwardsQueuedProduceThatLeavesIsNotSent(t *testing.T) {
	var f forwards
	k := forwardKey{"t", 1, 0}
	l := &stubLeader{hold: make(chan struct{})}
	aDone := make(chan error, 1)
	go func() { aDone <- f.commit(context.Background(), k, bucket("a", 1), l.send) }()
	l.waitCommits(t, 1)
	ctx, cancel := context.WithCancel(context.Background())
	bDone := make(chan error, 1)
	go func() { bDone <- f.commit(ctx, k, bucket("b", 1), l.send) }()
	waitPending(t, &f, k, 1)
	cancel()
	select {
	case err := <-bDone:
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("the produce that left: %v, want its context's error", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the produce that left still waits for a commit its records were never sent in")
	}
	close(l.hold)
	if err := <-aDone; err != nil {
		t.Fatal(err)
	}
	l.mu.Lock()
	commits := l.commits
	l.mu.Unlock()
	if len(commits) != 1 || commits[0][0] != "a0" {
		t.Fatalf("commits %v: want only a's; b left before it was sent", commits)
	}
	requireNoQueues(t, &f)
}

// A produce that stops waiting while its records are in a commit in
// flight returns only with that commit's outcome: the commit still reads
// its records, which are the caller's memory (the HTTP edge reuses a
// request's body buffer once the produce returns).
func TestForwardsInFlightProduceWaitsForItsCommit(t *testing.T) {
	var f forwards
	k := forwardKey{"t", 1, 0}
	holdA, holdB := make(chan struct{}), make(chan struct{})
	aSent, bSent := make(chan struct{}), make(chan struct{})
	errB := errors.New("b's commit failed")
	send := func(recs []storage.Record) error {
		switch string(recs[0].Payload) {
		case "a0":
			close(aSent)
			<-holdA
		case "b0":
			close(bSent)
			<-holdB
			return errB
		}
		return nil
	}
	aDone := make(chan error, 1)
	go func() { aDone <- f.commit(context.Background(), k, bucket("a", 1), send) }()
	<-aSent
	ctx, cancel := context.WithCancel(context.Background())
	bDone := make(chan error, 1)
	go func() { bDone <- f.commit(ctx, k, bucket("b", 1), send) }()
	waitPending(t, &f, k, 1)
	close(holdA)
	if err := <-aDone; err != nil {
		t.Fatal(err)
	}
	<-bSent
	cancel()
	select {
	case err := <-bDone:
		t.Fatalf("the produce returned (%v) while its commit was in flight", err)
	case <-time.After(200 * time.Millisecond):
	}
	close(holdB)
	if err := <-bDone; !errors.Is(err, errB) {
		t.Fatalf("the produce that stopped waiting in flight: %v, want its commit's outcome %v", err, errB)
	}
}

// A send handed a partition whose every produce stopped waiting first
// sends nothing and drops the queue.
func TestForwardsSendWithNothingLeft(t *testing.T) {
	var f forwards
	k := forwardKey{"t", 1, 0}
	q := &forwardQueue{}
	f.queues = map[forwardKey]*forwardQueue{k: q}
	f.send(k, q, func([]storage.Record) error {
		t.Fatal("sent a commit of nothing")
		return nil
	})
	requireNoQueues(t, &f)
}
