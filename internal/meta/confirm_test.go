package meta

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/hashicorp/raft"
)

func TestConfirmTopicSelfLeader(t *testing.T) {
	t.Parallel()
	s := newLeader(t)
	ctx := testCtx(t)
	must(t, s.CreateTopic(ctx, plainTopic("parent", 1), nil, nil))
	must(t, s.CreateTopic(ctx, plainTopic("child", 1), nil, spec("parent", "epoch-1")))

	for _, tc := range []struct {
		name, epoch    string
		exists, curent bool
	}{
		{"parent", "", true, false},
		{"child", "epoch-1", true, true},
		{"child", "epoch-0", true, false},
		{"child", "", true, false},
		{"missing", "epoch-1", false, false},
	} {
		ex, cur, err := s.ConfirmTopic(ctx, tc.name, tc.epoch)
		if err != nil || ex != tc.exists || cur != tc.curent {
			t.Errorf("ConfirmTopic(%q, %q) = %v %v %v, want %v %v", tc.name, tc.epoch, ex, cur, err, tc.exists, tc.curent)
		}
	}
	must(t, s.Detach(ctx, "parent", "child", ""))
	if ex, cur, err := s.ConfirmTopic(ctx, "child", "epoch-1"); err != nil || !ex || cur {
		t.Fatalf("after detach: %v %v %v", ex, cur, err)
	}
}

// The barrier rule (a stale-replica defense: a freshly
// elected leader has the log, not yet the applied state): a delete
// committed but not yet applied on the leader
// must be seen by a confirmation. The FSM goroutine is held inside Apply of
// the delete; a confirmation that read without a barrier would answer
// "exists" (from the old state) while it is held.
func TestConfirmTopicWaitsForTheBarrier(t *testing.T) {
	t.Parallel()
	s := newLeader(t)
	ctx := testCtx(t)
	must(t, s.CreateTopic(ctx, plainTopic("doomed", 1), nil, nil))

	entered, release := make(chan struct{}), make(chan struct{})
	hook := func(l *raft.Log) {
		if l.Type == raft.LogCommand {
			close(entered)
			<-release
		}
	}
	s.fsm.applyHook.Store(&hook)
	cmd, err := NewCommand(OpDeleteTopic, DeleteTopicCmd{Name: "doomed"})
	must(t, err)
	del := s.raft.Apply(cmd.Encode(), time.Second) // not awaited
	select {
	case <-entered:
	case <-time.After(waitLimit):
		t.Fatal("delete never reached the FSM")
	}

	type answer struct {
		exists bool
		err    error
	}
	got := make(chan answer, 1)
	go func() {
		ex, _, err := s.ConfirmTopic(ctx, "doomed", "")
		got <- answer{ex, err}
	}()
	// While the FSM is held, a correct confirmation cannot answer: it waits
	// on the barrier behind the delete.
	select {
	case a := <-got:
		close(release)
		t.Fatalf("confirmation answered (%+v) while the delete was unapplied", a)
	case <-time.After(300 * time.Millisecond):
	}
	s.fsm.applyHook.Store(nil)
	close(release)
	must(t, del.Error())
	a := <-got
	if a.err != nil || a.exists {
		t.Fatalf("after the barrier: exists=%v err=%v, want gone", a.exists, a.err)
	}
}

func TestConfirmTopicBarrierTimeoutIsNotAnAnswer(t *testing.T) {
	t.Parallel()
	s := newLeader(t)
	ctx := testCtx(t)
	must(t, s.CreateTopic(ctx, plainTopic("t", 1), nil, nil))
	release := make(chan struct{})
	hook := func(l *raft.Log) {
		if l.Type == raft.LogCommand {
			<-release
		}
	}
	s.fsm.applyHook.Store(&hook)
	cmd, err := NewCommand(OpDeleteTopic, DeleteTopicCmd{Name: "t"})
	must(t, err)
	del := s.raft.Apply(cmd.Encode(), time.Second)
	short, cancel := context.WithTimeout(ctx, 200*time.Millisecond)
	defer cancel()
	ex, cur, err := s.ConfirmTopic(short, "t", "")
	s.fsm.applyHook.Store(nil)
	close(release)
	must(t, del.Error())
	if !errors.Is(err, ErrNotConfirmed) || ex || cur {
		t.Fatalf("confirmation without a barrier = %v %v %v, want ErrNotConfirmed", ex, cur, err)
	}
}
