package move

import (
	"context"
	"errors"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/narad-io/narad/internal/meta"
)

// The worker's passes run on its clock: parked on it, it does nothing
// until the clock is stepped a second, then moves the partition.
func TestRunPassesOnTheClock(t *testing.T) {
	p := newPair(t)
	p.fill(30)
	p.target()
	ctx, cancel := context.WithCancel(p.ctx())
	done := make(chan struct{})
	go func() { defer close(done); p.w.Run(ctx) }()
	defer func() { cancel(); <-done }()
	if !p.clk.BlockUntil(2, 10*time.Second) { // the pass and shed tickers
		t.Fatal("the worker does not wait on its clock")
	}
	p.remote.mu.Lock()
	started := p.remote.files
	p.remote.mu.Unlock()
	if started != 0 {
		t.Fatal("a session started before the clock moved")
	}
	p.clk.Advance(passEvery)
	eventually(t, "the move", func() bool { return p.ms.Assignments("orders")[0].Owner == "dst" })
}

// A failed session's partition waits retryAfter on the worker's clock
// before the next session starts.
func TestFailedSessionRetriesAfterTwoSeconds(t *testing.T) {
	p := newPair(t)
	p.fill(10)
	p.target()
	p.remote.filesErr = errors.New("source unreachable")
	var wg sync.WaitGroup
	pass := func() int {
		p.w.pass(p.ctx(), &wg)
		wg.Wait()
		p.remote.mu.Lock()
		defer p.remote.mu.Unlock()
		return p.remote.files
	}
	if n := pass(); n != 1 {
		t.Fatalf("first pass: %d sessions, want 1", n)
	}
	p.clk.Advance(retryAfter - time.Millisecond)
	if n := pass(); n != 1 {
		t.Fatalf("a session started %v after the last failed", retryAfter-time.Millisecond)
	}
	p.clk.Advance(time.Millisecond)
	if n := pass(); n != 2 {
		t.Fatalf("no retry %v after a failure (sessions %d)", retryAfter, n)
	}
}

// flakyMeta fails ConfirmOwner a number of times first.
type flakyMeta struct {
	Meta
	mu    sync.Mutex
	fails int
}

func (f *flakyMeta) ConfirmOwner(ctx context.Context, topic string, p int) (string, string, error) {
	f.mu.Lock()
	fail := f.fails > 0
	f.fails--
	f.mu.Unlock()
	if fail {
		return "", "", meta.ErrNotConfirmed
	}
	return f.Meta.ConfirmOwner(ctx, topic, p)
}

// An unanswered flip asks the leader again once a second of the worker's
// clock, at most confirmTries times.
func TestConfirmOwnerRetriesOnTheClock(t *testing.T) {
	p := newPair(t)
	p.w.meta = &flakyMeta{Meta: p.ms, fails: 2}
	got := make(chan string, 1)
	go func() {
		owner, ok := p.w.confirmOwner(p.ctx(), "orders", 0)
		if !ok {
			owner = "no answer"
		}
		got <- owner
	}()
	for i := 0; i < 2; i++ {
		if !p.clk.BlockUntil(1, 10*time.Second) {
			t.Fatalf("retry %d does not wait on the clock", i+1)
		}
		p.clk.Advance(confirmEvery)
	}
	if owner := <-got; owner != "src" {
		t.Fatalf("confirmOwner = %q, want src", owner)
	}

	p.w.meta = &flakyMeta{Meta: p.ms, fails: confirmTries}
	go func() {
		_, ok := p.w.confirmOwner(p.ctx(), "orders", 0)
		if ok {
			got <- "answered"
		} else {
			got <- "no answer"
		}
	}()
	for i := 0; i < confirmTries; i++ {
		if !p.clk.BlockUntil(1, 10*time.Second) {
			t.Fatalf("retry %d does not wait on the clock", i+1)
		}
		p.clk.Advance(confirmEvery)
	}
	if r := <-got; r != "no answer" {
		t.Fatalf("after %d failed tries: %s", confirmTries, r)
	}
}

// The final copy keeps the source's freeze alive: renewed every third of
// the TTL on the worker's clock, for the same holder.
func TestRenewEveryThirdOfTheTTL(t *testing.T) {
	p := newPair(t)
	p.fill(10)
	stop := p.w.renew(p.ctx(), "src", "orders", 0, "H")
	if !p.clk.BlockUntil(1, 10*time.Second) {
		t.Fatal("renewal does not wait on the clock")
	}
	p.clk.Advance(freezeTTL/3 - time.Millisecond)
	if n := len(p.remote.freezeCalls()); n != 0 {
		t.Fatalf("renewed %d times before a third of the TTL", n)
	}
	p.clk.Advance(time.Millisecond)
	eventually(t, "a renewal", func() bool { return len(p.remote.freezeCalls()) == 1 })
	stop()
	if calls := p.remote.freezeCalls(); calls[0] != freezeTTL || p.remote.holders[0] != "H" {
		t.Fatalf("renewal: ttl %v holder %q", calls[0], p.remote.holders[0])
	}
	if _, ok := p.src.freezes.Admit("orders", 0); ok {
		t.Fatal("the renewal did not freeze the source")
	}
}

// After a move, the source drops its stale copy once the leader confirms
// another node owns it; the destination's copy stays.
func TestShedDropsTheMovedAwayCopy(t *testing.T) {
	p := newPair(t)
	p.fill(30)
	if err := p.w.session(p.ctx(), p.target()); err != nil {
		t.Fatal(err)
	}
	srcWorker := p.worker(p.src, p.remote)
	p.w.shed(p.ctx()) // dst owns it: keeps it
	if _, err := os.Stat(p.dst.partDir(t)); err != nil {
		t.Fatalf("the owner shed its own copy: %v", err)
	}
	srcWorker.shed(p.ctx())
	if _, err := os.Stat(p.src.partDir(t)); !os.IsNotExist(err) {
		t.Fatalf("the source kept its moved-away copy: %v", err)
	}
}

type gauge struct {
	mu sync.Mutex
	v  float64
}

func (g *gauge) Set(v float64) { g.mu.Lock(); g.v = v; g.mu.Unlock() }

// Every pass reports the moves in flight anywhere (a partition with a
// target), which InFlight lists.
func TestPassReportsMovesInFlight(t *testing.T) {
	p := newPair(t)
	g := &gauge{}
	p.w.cfg.InFlight = g
	p.remote.filesErr = errors.New("no session needed")
	var wg sync.WaitGroup
	p.w.pass(p.ctx(), &wg)
	wg.Wait()
	if g.v != 0 || len(InFlight(p.ms)) != 0 {
		t.Fatalf("no move: gauge %v, InFlight %v", g.v, InFlight(p.ms))
	}
	p.target()
	p.w.pass(p.ctx(), &wg)
	wg.Wait()
	if in := InFlight(p.ms); g.v != 1 || len(in) != 1 || in[0].Owner != "src" || in[0].Target != "dst" {
		t.Fatalf("one move: gauge %v, InFlight %v", g.v, in)
	}
}

// A replicated partition's copy on a node that does not lead it is a
// follower's log, not a move's leftover: the shed keeps it (deleting it
// would lose the acknowledged records of the next leader).
func TestShedKeepsAReplicaCopy(t *testing.T) {
	p := newPair(t)
	p.fill(30)
	reps := []string{"dst", "src", "x"}
	if err := p.ms.SetAssignments(p.ctx(), []meta.Assignment{{Topic: "orders", Partition: 0, Owner: "dst", Replicas: reps,
		InSync: reps, LeaderEpoch: 1, EpochStarts: []meta.EpochStart{{Epoch: 1, Offset: 0}}}}); err != nil {
		t.Fatal(err)
	}
	p.worker(p.src, p.remote).shed(p.ctx())
	if _, err := os.Stat(p.src.partDir(t)); err != nil {
		t.Fatalf("the shed dropped a replica's copy: %v", err)
	}
}

// A copy of a replica the placement no longer lists (a decommission, the
// factor lowered — to one copy too) goes once the leader's read index
// confirms it; a node still listed keeps its copy.
func TestShedDropsARemovedReplicasCopy(t *testing.T) {
	for _, reps := range [][]string{{"dst", "x", "y"}, {"dst"}} {
		p := newPair(t)
		p.fill(30)
		as := meta.Assignment{Topic: "orders", Partition: 0, Owner: "dst", Replicas: reps, InSync: reps, LeaderEpoch: 2,
			EpochStarts: []meta.EpochStart{{Epoch: 1, Offset: 0}}}
		if err := p.ms.SetAssignments(p.ctx(), []meta.Assignment{as}); err != nil {
			t.Fatal(err)
		}
		p.worker(p.src, p.remote).shed(p.ctx())
		if _, err := os.Stat(p.src.partDir(t)); !os.IsNotExist(err) {
			t.Fatalf("replicas %v: the copy of a replica no longer listed was kept: %v", reps, err)
		}
	}
}

// A flip whose answer was lost and that the leader cannot be asked about
// leaves the move unsure: no session while the memo is fresh, then, once
// the leader answers that the source still owns the partition, the memo
// goes and the next pass moves it. A lost answer must not end a move for
// good.
func TestUnansweredFlipThatDidNotHappenIsMovedAgain(t *testing.T) {
	p := newPair(t)
	p.fill(50)
	a := p.target()
	p.remote.flipErr = errors.New("connection reset")
	p.w.meta = &flakyMeta{Meta: p.ms, fails: confirmTries + 1}
	done := make(chan error, 1)
	go func() { done <- p.w.session(p.ctx(), a) }()
	// The session's confirmations wait on the clock (and so does its
	// freeze renewal, so waiters cannot be counted): step it until the
	// session gives up.
	var err error
	eventually(t, "the session to give up asking", func() bool {
		select {
		case err = <-done:
			return true
		default:
			p.clk.Advance(confirmEvery)
			return false
		}
	})
	if err == nil || !strings.Contains(err.Error(), "outcome unknown") {
		t.Fatalf("session = %v, want an unknown flip", err)
	}
	p.remote.mu.Lock()
	p.remote.flipErr = nil
	p.remote.mu.Unlock()
	sessions := func() int {
		p.remote.mu.Lock()
		defer p.remote.mu.Unlock()
		return p.remote.files
	}
	var wg sync.WaitGroup
	pass := func() {
		p.w.pass(p.ctx(), &wg)
		wg.Wait()
	}
	before := sessions()
	pass() // the memo is fresh: nothing
	p.clk.Advance(retryAfter)
	pass() // the leader does not answer (the last of the fails): the memo stays
	pass() // renewed by that check: nothing asked, nothing started
	if n := sessions(); n != before {
		t.Fatalf("%d sessions started while the flip was unsure", n-before)
	}
	p.clk.Advance(retryAfter)
	pass() // the leader names the source: the memo goes
	pass() // a new session moves the partition
	if owner := p.ms.Assignments("orders")[0].Owner; owner != "dst" {
		t.Fatalf("owner %q after the leader said the flip did not happen (sessions %d)", owner, sessions()-before)
	}
	l, err := p.dst.b.Partitions().Get("orders", 0)
	if err != nil || l.HWM() != 50 {
		t.Fatalf("the copy after the second session: %v %v", l, err)
	}
}
