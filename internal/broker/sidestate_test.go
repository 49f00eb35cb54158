package broker

import (
	"path/filepath"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/narad-io/narad/internal/clock"
	"github.com/narad-io/narad/internal/hosted"
	"github.com/narad-io/narad/internal/meta"
	"github.com/narad-io/narad/internal/replica"
	"github.com/narad-io/narad/internal/storage"
)

// fakeCursors stands in for the fan-out engine's cursor files.
type fakeCursors struct {
	mu     sync.Mutex
	files  []replica.CursorPosition
	writes []replica.CursorPosition
}

func (f *fakeCursors) CursorCopies(string, int) ([]replica.CursorPosition, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return slices.Clone(f.files), nil
}

func (f *fakeCursors) WriteCursorCopy(_ string, _ int, c replica.CursorPosition) (bool, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.writes = append(f.writes, c)
	return true, nil
}

// A leader snapshots its delivery counts and cursor files at most once
// per hosted.CountsEvery, with a new version only when they changed; a follower
// writes what the leader sent, nothing past its high watermark; and when
// it leads again its queue counts deliveries on from the copied counts.
func TestSideStateFollowsTheLeadership(t *testing.T) {
	eng := &fakeEngine{}
	clk := clock.NewFake(time.Now())
	cc := &fakeCursors{files: []replica.CursorPosition{{Child: "c", Epoch: "e1", NextOffset: 1}}}
	n := newTestNode(t, Config{Replication: eng, Now: clk.Now, CursorCopies: cc})
	createReplicated(t, n, "r", "n1")
	waitFor(t, "the leader role", func() bool { return eng.leader(0) != nil })
	fl := eng.leader(0)
	fl.ready.Store(true)
	go n.commit("r", 0, "a", "b", "c")
	waitFor(t, "three records", func() bool { return fl.log.End() == 3 })
	fl.commitTo(3)
	if _, err := n.consume("r", 0, 1); err != nil {
		t.Fatal(err)
	}

	st := fl.state()
	if st.Version == 0 || !slices.Equal(st.Counts, []storage.CountEntry{{Offset: 0, Count: 1}}) || !slices.Equal(st.Cursors, cc.files) {
		t.Fatalf("first snapshot %+v; want offset 0 delivered once and the cursor file", st)
	}
	cc.mu.Lock()
	cc.files = []replica.CursorPosition{{Child: "c", Epoch: "e1", NextOffset: 2}}
	cc.mu.Unlock()
	if again := fl.state(); again.Version != st.Version {
		t.Fatalf("a snapshot retaken within hosted.CountsEvery: version %d, then %d", st.Version, again.Version)
	}
	clk.Advance(hosted.CountsEvery)
	moved := fl.state()
	if moved.Version == st.Version || moved.Cursors[0].NextOffset != 2 {
		t.Fatalf("after hosted.CountsEvery the moved cursor is not in a new version: %+v (was %d)", moved, st.Version)
	}
	clk.Advance(hosted.CountsEvery)
	if same := fl.state(); same.Version != moved.Version {
		t.Fatalf("nothing changed, yet the version moved: %d -> %d", moved.Version, same.Version)
	}

	// n2 leads: this node follows and writes what the leader sends.
	reps := []string{"n1", "n2", "n3"}
	setPlacement(t, n, meta.Assignment{Topic: "r", Partition: 0, Owner: "n2", Replicas: reps, InSync: reps,
		LeaderEpoch: 2, EpochStarts: []meta.EpochStart{{Epoch: 1, Offset: 0}, {Epoch: 2, Offset: 3}}})
	waitFor(t, "the follower role", func() bool { f := eng.follower(0); return f != nil && f.running.Load() })
	ff := eng.follower(0)
	err := ff.onState(replica.SideState{Version: 9, Counts: []storage.CountEntry{{Offset: 1, Count: 4}, {Offset: 2, Count: 2}, {Offset: 7, Count: 3}},
		Cursors: []replica.CursorPosition{{Child: "c", Epoch: "e1", NextOffset: 2}, {Child: "d", Epoch: "e2", NextOffset: 50}}})
	if err != nil {
		t.Fatal(err)
	}
	es, _, err := storage.ReadDeliveryCountsFS(n.fs, filepath.Join(n.partDir("r", 0), storage.DeliveryCountsFile))
	if want := []storage.CountEntry{{Offset: 1, Count: 4}, {Offset: 2, Count: 2}}; err != nil || !slices.Equal(es, want) {
		t.Fatalf("copied counts %v, %v; want %v (none past the high watermark 3)", es, err, want)
	}
	cc.mu.Lock()
	writes := slices.Clone(cc.writes)
	cc.mu.Unlock()
	if want := []replica.CursorPosition{{Child: "c", Epoch: "e1", NextOffset: 2}, {Child: "d", Epoch: "e2", NextOffset: 3}}; !slices.Equal(writes, want) {
		t.Fatalf("cursor copies written %v, want %v (clamped to the high watermark 3)", writes, want)
	}

	// n1 leads again: its queue starts from the copied counts.
	setPlacement(t, n, meta.Assignment{Topic: "r", Partition: 0, Owner: "n1", Replicas: reps, InSync: reps,
		LeaderEpoch: 3, EpochStarts: []meta.EpochStart{{Epoch: 1, Offset: 0}, {Epoch: 2, Offset: 3}, {Epoch: 3, Offset: 3}}})
	waitFor(t, "the leader role again", func() bool { return eng.leader(1) != nil })
	eng.leader(1).ready.Store(true)
	msgs, err := n.consume("r", 0, 3)
	if err != nil || len(msgs) != 3 {
		t.Fatalf("consume on the new leadership: %d messages, %v", len(msgs), err)
	}
	for _, m := range msgs {
		if want := map[uint64]int{0: 1, 1: 5, 2: 3}[m.Offset]; m.DeliveryCount != want {
			t.Errorf("record %d: delivery %d, want %d (the copied count plus this delivery)", m.Offset, m.DeliveryCount, want)
		}
	}
}
