package broker

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/narad-io/narad/internal/apierr"
	"github.com/narad-io/narad/internal/meta"
	"github.com/narad-io/narad/internal/refusal"
	"github.com/narad-io/narad/internal/storage"
)

// leaderView is a partition's leader as a node's metastore replica names
// it, changed by the test.
type leaderView struct {
	mu    sync.Mutex
	owner string
}

func (v *leaderView) get() (string, bool) {
	v.mu.Lock()
	defer v.mu.Unlock()
	return v.owner, v.owner != ""
}

func (v *leaderView) set(owner string) {
	v.mu.Lock()
	v.owner = owner
	v.mu.Unlock()
}

// undeliveredErr is what node RPC returns for a call no connection could
// be made for.
type undeliveredErr struct{}

func (undeliveredErr) Error() string { return "node n1 unreachable: Error while dialing" }
func (undeliveredErr) Is(target error) bool {
	return target == refusal.ErrUndelivered
}

// A produce whose leader could not be reached, or said it does not lead
// or may not take writes for now, waits for the next leader and goes
// there; one whose leader may have
// stored it is answered at once; a leader that never changes is waited
// for no longer than the hold.
func TestHoldForLeader(t *testing.T) {
	ctx := context.Background()
	for _, first := range []error{
		undeliveredErr{},
		refusal.New(refusal.ErrNotOwner, time.Second, "not owned here"),
		refusal.New(refusal.ErrFrozen, time.Second, "frozen for a move"),
		// A leader whose node's lease lapsed, or that is taking the
		// leadership over, refuses before it writes.
		refusal.New(refusal.ErrNotReady, time.Second, "has not heard from the cluster within its lease"),
	} {
		view := &leaderView{owner: "n1"}
		var tried []string
		err := holdForLeader(ctx, 10*time.Second, view.get, func() error {
			owner, _ := view.get()
			tried = append(tried, owner)
			if owner == "n1" {
				// The failover happens while the produce waits.
				time.AfterFunc(2*leaderPoll, func() { view.set("n2") })
				return first
			}
			return nil
		})
		if err != nil || len(tried) != 2 || tried[1] != "n2" {
			t.Errorf("after %v: err %v, leaders tried %v; want n1 then n2, then success", first, err, tried)
		}
	}

	// Possibly stored: never sent again.
	for _, maybe := range []error{
		// What a leader answers when its copies did not confirm in time
		// (hosted.Roles.AwaitQuorum).
		refusal.New(refusal.ErrUnavailable, time.Second, "not on a majority of replicas yet; they may be stored"),
		// What a leader deposed while it waited for its copies answers,
		// after writing (hosted.Roles.AwaitQuorum).
		fmt.Errorf("%w; the records may be stored", refusal.New(refusal.ErrNotLeader, time.Second, "no longer led by this node")),
		fmt.Errorf("%w; the records may be stored", refusal.New(refusal.ErrStaleEpoch, time.Second, "stale epoch")),
		errors.New("node n1 unreachable: error reading from server: EOF"),
		context.DeadlineExceeded,
	} {
		view := &leaderView{owner: "n1"}
		calls := 0
		err := holdForLeader(ctx, 10*time.Second, view.get, func() error {
			calls++
			view.set("n2")
			return maybe
		})
		if err != maybe || calls != 1 {
			t.Errorf("%v: %d calls, err %v; want one call and its error", maybe, calls, err)
		}
	}

	// A leader whose name stays is tried again, every leaderRetry: its
	// view and this node's may agree by then.
	view := &leaderView{owner: "n1"}
	calls := 0
	err := holdForLeader(ctx, 10*time.Second, view.get, func() error {
		calls++
		if calls < 3 {
			return refusal.New(refusal.ErrNotOwner, time.Second, "not owned here yet")
		}
		return nil
	})
	if err != nil || calls != 3 {
		t.Errorf("a leader whose name stays: %d calls, err %v; want success at the third", calls, err)
	}

	// Within the hold only: then the last error.
	calls = 0
	start := time.Now()
	err = holdForLeader(ctx, 1200*time.Millisecond, view.get, func() error {
		calls++
		return undeliveredErr{}
	})
	// Tries at 0, 0.5 and 1 s (the last may fall past the hold on a busy
	// machine), never one before leaderRetry.
	if took := time.Since(start); !errors.Is(err, refusal.ErrUndelivered) || calls < 2 || calls > 3 || took < 1200*time.Millisecond {
		t.Errorf("a leader never reached: %d calls in %v, err %v; want two or three tries, then the error after the hold",
			calls, took, err)
	}

	// Nor does a caller that stops waiting wait on.
	cctx, cancel := context.WithCancel(ctx)
	time.AfterFunc(2*leaderPoll, cancel)
	if err := holdForLeader(cctx, time.Hour, view.get, func() error { return undeliveredErr{} }); !errors.Is(err, refusal.ErrUndelivered) {
		t.Errorf("a cancelled wait: %v", err)
	}
}

// A produce to a partition whose leader's node has missed the cluster's
// heartbeats for a moment (its lease lapsed: a flapping link to the
// metastore leader) is held, and goes in once the node hears again,
// rather than a 503: the leader refused before it wrote.
func TestProduceHeldWhileTheLeaseLapsed(t *testing.T) {
	var fenced atomic.Bool
	fenced.Store(true)
	n, _, fl := readyLeader(t, Config{Fenced: fenced.Load})
	done := make(chan error, 1)
	go func() { done <- n.b.Produce(testCtx(t), "r", ProduceRecord{Payload: []byte("a")}) }()
	// Past the first refusal and one try again.
	select {
	case err := <-done:
		t.Fatalf("a produce answered while the lease lapsed: %v", err)
	case <-time.After(leaderRetry + 200*time.Millisecond):
	}
	if end := fl.log.End(); end != 0 {
		t.Fatalf("%d records written while the lease lapsed", end)
	}
	fenced.Store(false)
	waitFor(t, "the held produce to be written", func() bool { return fl.log.End() == 1 })
	fl.commitTo(1)
	if err := <-done; err != nil {
		t.Fatalf("the held produce: %v", err)
	}
}

// A leader that never answers a forwarded produce is a 503 that says the
// records may be stored, once the leader's wait and the hop have passed:
// not the context's deadline, which the edge answers as a 500.
func TestUnansweredLeaderIsA503(t *testing.T) {
	remote := committerFunc(func(ctx context.Context, topic string, inc uint64, p int, recs []storage.Record) error {
		<-ctx.Done() // a leader cut off without a reset: the call hangs
		return ctx.Err()
	})
	b := newTestBroker(t, Config{Remote: remote, ReplicaCommitWait: 50 * time.Millisecond})
	_, _, produce := ledElsewhere(t, b)
	err := <-produce("x")
	if ae, ok := apierr.From(err); !ok || ae.Status != http.StatusServiceUnavailable || !strings.Contains(ae.Message, "may be stored") {
		t.Fatalf("an unanswered leader: %v (%T), want a 503 saying the records may be stored", err, err)
	}
}

// ledElsewhere creates on b a one-partition topic "r" of three copies led
// by n2: assign names another leader, and produce commits one record to
// it as a produce through b does (commitBucket), answering on the
// channel.
func ledElsewhere(t *testing.T, b *Broker) (top meta.Topic, assign func(owner string), produce func(payload string) chan error) {
	t.Helper()
	createTestTopic(t, b, "r", 1)
	assign = func(owner string) {
		if err := b.meta.SetAssignments(testCtx(t), []meta.Assignment{{Topic: "r", Partition: 0, Owner: owner}}); err != nil {
			t.Fatal(err)
		}
	}
	assign("n2")
	top, _ = b.meta.Topic("r")
	top.ReplicationFactor = 3
	produce = func(payload string) chan error {
		done := make(chan error, 1)
		go func() {
			done <- b.commitBucket(testCtx(t), top, 0, []storage.Record{{Payload: []byte(payload), Offset: storage.NoOffset}})
		}()
		return done
	}
	return top, assign, produce
}

// A forwarded produce whose leader never answers is given up as soon as
// this node's metastore replica names the next leader: a 503 saying the
// records may be stored, not a wait for the leader's whole budget; and the
// produce waiting behind it goes to the new leader at once.
func TestForwardGivenUpWhenLeaderChanges(t *testing.T) {
	var b *Broker
	sentTo := make(chan string, 4)
	remote := committerFunc(func(ctx context.Context, topic string, inc uint64, p int, recs []storage.Record) error {
		owner, _ := b.meta.Owner(topic, p)
		sentTo <- owner
		if owner == "n2" {
			<-ctx.Done() // cut off without a reset: the call hangs
			return ctx.Err()
		}
		return nil
	})
	b = newTestBroker(t, Config{Remote: remote, ReplicaCommitWait: 20 * time.Second})
	top, assign, produce := ledElsewhere(t, b)
	first := produce("a")
	if got := <-sentTo; got != "n2" {
		t.Fatalf("the first commit went to %q, want n2", got)
	}
	second := produce("b")
	waitPending(t, &b.fwd, forwardKey{"r", top.Incarnation, 0}, 1)

	assign("n3")
	err := <-first
	if ae, ok := apierr.From(err); !ok || ae.Status != http.StatusServiceUnavailable ||
		!strings.Contains(ae.Message, `changed from "n2" to "n3"`) || !strings.Contains(ae.Message, "may be stored") {
		t.Fatalf("the commit to the old leader: %v, want a 503 saying the leader changed and the records may be stored", err)
	}
	if err := <-second; err != nil {
		t.Fatalf("the produce behind it: %v", err)
	}
	if got := <-sentTo; got != "n3" {
		t.Fatalf("the produce behind it went to %q, want n3", got)
	}
}

// A forwarded commit whose leader is moved to another live node while
// it is on its way still takes the old leader's answer, within
// Config.LeaderChangeGrace: a leader that committed the records before
// the election answers 202, not a 503 saying they may be stored. Past
// the grace the commit is given up (TestForwardGivenUpWhenLeaderChanges).
func TestForwardAnsweredByTheOldLeaderWithinTheGrace(t *testing.T) {
	answer := make(chan struct{})
	var sent atomic.Int32
	remote := committerFunc(func(ctx context.Context, topic string, inc uint64, p int, recs []storage.Record) error {
		sent.Add(1)
		select {
		case <-answer: // the old leader's 202
			return nil
		case <-ctx.Done():
			return ctx.Err()
		}
	})
	b := newTestBroker(t, Config{Remote: remote, ReplicaCommitWait: 20 * time.Second, LeaderChangeGrace: time.Minute})
	_, assign, produce := ledElsewhere(t, b)
	done := produce("a")
	waitFor(t, "the forward to n2", func() bool { return sent.Load() == 1 })
	assign("n3")
	select {
	case err := <-done:
		t.Fatalf("the forward was answered when the leader changed, before the old leader answered: %v", err)
	case <-time.After(100 * time.Millisecond):
	}
	close(answer)
	if err := <-done; err != nil {
		t.Fatalf("the old leader's answer within the grace: %v", err)
	}
	if n := sent.Load(); n != 1 {
		t.Fatalf("the records were sent %d times, want once", n)
	}
}
