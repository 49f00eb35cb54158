package replica

import (
	"context"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/narad-io/narad/internal/meta"
)

// recordingProposer passes proposals on to a memMeta and keeps each
// in-sync command, so a test sees what the leader asked for even when
// the metastore's own checks refuse it.
type recordingProposer struct {
	*memMeta
	mu   sync.Mutex
	sets []meta.SetInSyncCmd
}

func (p *recordingProposer) SetInSync(ctx context.Context, c meta.SetInSyncCmd) error {
	p.mu.Lock()
	p.sets = append(p.sets, c)
	p.mu.Unlock()
	return p.memMeta.SetInSync(ctx, c)
}

func (p *recordingProposer) proposed() []meta.SetInSyncCmd {
	p.mu.Lock()
	defer p.mu.Unlock()
	return slices.Clone(p.sets)
}

// outOfSyncB is a leader of 3 records at epoch 1 whose in-sync set is
// [a c] with everything committed: b lagged and was dropped.
func outOfSyncB(t *testing.T) (*leaderRig, *recordingProposer) {
	t.Helper()
	r := newLeaderRig(t, 3)
	rec := &recordingProposer{memMeta: r.md}
	r.l.cfg.Proposer = rec
	mustFetch(t, r, "c", 3)
	r.clk.Advance(DefaultLagMax + time.Second)
	mustFetch(t, r, "c", 3)
	r.l.tick(context.Background())
	r.l.Update(r.md.view())
	if got, c := r.md.view().InSync, r.l.Committed(); !slices.Equal(got, []string{"a", "c"}) || c != 3 {
		t.Fatalf("rig: in sync %v, committed %d; want [a c] and 3", got, c)
	}
	return r, rec
}

func mustFetch(t *testing.T, r *leaderRig, node string, off uint64) {
	t.Helper()
	if _, err := r.fetch(node, off); err != nil {
		t.Fatalf("fetch by %s from %d: %v", node, off, err)
	}
}

// A follower that is not lagging in time but whose acknowledged end is
// below the committed point is not proposed for the in-sync set: it
// would be counted (and could be elected) without records that were
// acknowledged. Once it acknowledges the committed point it joins,
// with that evidence in the proposal.
func TestLeaderProposesAFollowerOnlyAtTheCommittedPoint(t *testing.T) {
	r, rec := outOfSyncB(t)
	mustFetch(t, r, "b", 3) // caught up with the end as it was
	for range 2 {
		if _, err := r.log.commit([]byte("more")); err != nil {
			t.Fatal(err)
		}
	}
	mustFetch(t, r, "c", 5)
	if c := r.l.Committed(); c != 5 {
		t.Fatalf("committed %d, want 5", c)
	}
	before := len(rec.proposed())
	r.l.tick(context.Background())
	for _, c := range rec.proposed()[before:] {
		if slices.Contains(c.InSync, "b") {
			t.Fatalf("proposed %v with b acknowledged to 3, below the committed point 5", c.InSync)
		}
	}
	mustFetch(t, r, "b", 5)
	r.l.tick(context.Background())
	got := rec.proposed()
	last := got[len(got)-1]
	if !slices.Equal(last.InSync, []string{"a", "b", "c"}) || last.Acked["b"] != 5 || last.Committed != 5 ||
		last.Disks["b"] != diskOf("b", 0) || !slices.Equal(last.From, []string{"a", "c"}) {
		t.Fatalf("proposal once b acknowledged 5: %+v", last)
	}
	if in := r.md.view().InSync; !slices.Equal(in, []string{"a", "b", "c"}) {
		t.Fatalf("in sync %v, want b back", in)
	}
}

// The bug the model found: c's disk was replaced (the metastore took it
// out of the set) while the leader's view still showed it in sync, and a
// proposal adding b "kept" c — for the metastore an addition of a copy
// holding nothing. The proposal names the view it was decided on, and
// the metastore refuses it; once the leader sees the set as it is, c is
// not proposed until its new disk holds the committed records.
func TestLeaderOnAStaleViewReadmitsNoWipedCopy(t *testing.T) {
	r, rec := outOfSyncB(t)
	mustFetch(t, r, "b", 3)
	r.md.replaceDisk("c", diskOf("c", 1)) // the leader has not seen it
	if _, err := r.l.HandleFetch(context.Background(), FetchRequest{Topic: "t", Incarnation: 1, Epoch: 1, Follower: "c",
		DiskID: diskOf("c", 1), Offset: 0}); err != nil {
		t.Fatal(err)
	}
	r.l.tick(context.Background())
	if in := r.md.view().InSync; slices.Contains(in, "c") {
		t.Fatalf("in sync %v: c re-admitted with none of the 3 committed records", in)
	}
	r.l.Update(r.md.view())
	r.l.tick(context.Background())
	if in := r.md.view().InSync; !slices.Equal(in, []string{"a", "b"}) {
		t.Fatalf("in sync %v on a fresh view, want [a b]", in)
	}
	for _, c := range rec.proposed() {
		if slices.Contains(c.InSync, "c") && !slices.Contains(c.From, "c") && c.Acked["c"] < c.Committed {
			t.Fatalf("proposed adding c acknowledged to %d below the committed point %d", c.Acked["c"], c.Committed)
		}
	}
}

// A leader's process that restarts may have left an in-sync proposal on
// its way to the metastore, decided on evidence that held then. The new
// process renews its epoch before it writes anything, so the proposal,
// of the old epoch, can no longer apply, and the new epoch's leader
// commits on its own in-sync set at once.
func TestARestartedLeadersOldProposalNeverApplies(t *testing.T) {
	r, _ := outOfSyncB(t)
	mustFetch(t, r, "b", 3)
	r.l.mu.Lock()
	held := r.l.proposalLocked([]string{"a", "b", "c"}) // b acknowledged the committed 3
	r.l.mu.Unlock()
	r.restart() // the process dies, its proposal still in flight
	for range 2 {
		if _, err := r.log.commit([]byte("after")); err != nil {
			t.Fatal(err)
		}
	}
	mustFetch(t, r, "c", 5)
	if c := r.l.Committed(); c != 5 {
		t.Fatalf("committed %d once c holds 5 in the renewed epoch, want 5", c)
	}
	if err := r.md.SetInSync(context.Background(), held); err == nil {
		t.Fatalf("the old epoch's proposal applied after the renewal: in sync %v", r.md.view().InSync)
	}
	if in := r.md.view().InSync; !slices.Equal(in, []string{"a", "c"}) {
		t.Fatalf("in sync %v after the renewal, want [a c]", in)
	}
}

// A leader whose process restarted knows its committed point only from
// the last checkpoint, which may be behind what the process before it
// committed. Its renewed epoch starts at its end, and a follower joins
// only holding that start: a copy on an empty new disk is neither
// proposed nor admitted, though it holds the committed point as far as
// the new process knows it.
func TestARestartedLeaderAdmitsOnlyAtItsEpochStart(t *testing.T) {
	r := newLeaderRig(t, 3) // 3 records, no checkpoint: committed 0 as far as it knows
	r.restart()
	rec := &recordingProposer{memMeta: r.md}
	r.l.cfg.Proposer = rec
	r.md.replaceDisk("b", diskOf("b", 1))
	r.l.Update(r.md.view())
	v := r.md.view()
	if _, err := r.l.HandleFetch(context.Background(), FetchRequest{Topic: v.Topic, Incarnation: v.Incarnation, Epoch: v.Epoch, Follower: "b",
		DiskID: diskOf("b", 1), Offset: 0}); err != nil {
		t.Fatal(err)
	}
	for range 2 {
		r.l.tick(context.Background())
		r.l.Update(r.md.view())
	}
	if in := r.md.view().InSync; slices.Contains(in, "b") {
		t.Fatalf("in sync %v: b's empty new disk admitted in an epoch that starts at 3", in)
	}
	for _, c := range rec.proposed() {
		if slices.Contains(c.InSync, "b") {
			t.Fatalf("proposed adding b, which acknowledged %d, below the epoch's start 3: %+v", c.Acked["b"], c)
		}
	}
}

// lostAnswerProposer applies an in-sync proposal and then reports it
// failed, as a proposal whose answer timed out after the metastore took it.
type lostAnswerProposer struct{ *memMeta }

func (p lostAnswerProposer) SetInSync(ctx context.Context, c meta.SetInSyncCmd) error {
	if err := p.memMeta.SetInSync(ctx, c); err != nil {
		return err
	}
	return errAnswerLost
}

// A proposal the leader was told failed may have applied: until a later
// proposal of its own succeeds, the committed point counts the members
// it would add, or a record could be acknowledged without a member the
// metastore already counts (and could elect).
func TestLeaderCountsAFailedProposalThatMayHaveApplied(t *testing.T) {
	r, _ := outOfSyncB(t)
	mustFetch(t, r, "b", 3)
	r.l.cfg.Proposer = lostAnswerProposer{r.md}
	r.l.tick(context.Background()) // proposes [a b c]: applied, answered as failed
	if in := r.md.view().InSync; !slices.Equal(in, []string{"a", "b", "c"}) {
		t.Fatalf("rig: the metastore holds %v, want b added", in)
	}
	if _, err := r.log.commit([]byte("x")); err != nil {
		t.Fatal(err)
	}
	mustFetch(t, r, "c", 4) // the leader's view still says [a c]
	if c := r.l.Committed(); c != 3 {
		t.Fatalf("committed %d counting [a c] only, while the metastore counts b, which holds 3", c)
	}
	mustFetch(t, r, "b", 4)
	if c := r.l.Committed(); c != 4 {
		t.Fatalf("committed %d once b holds 4 too, want 4", c)
	}
}

// A follower that keeps up stays in the set: fetching again from the
// same offset with nothing new is not "going back", and one that reached
// the leader's end as it was at its previous fetch counts as caught up
// at that fetch (Kafka's lastCaughtUpTime), though the end has moved on
// since.
func TestLeaderKeepsAFollowerThatKeepsUp(t *testing.T) {
	r := newLeaderRig(t, 2)
	steps := 0
	step := func(d time.Duration, fetches ...any) {
		t.Helper()
		steps++
		r.clk.Advance(d)
		for i := 0; i < len(fetches); i += 2 {
			mustFetch(t, r, fetches[i].(string), uint64(fetches[i+1].(int)))
		}
		r.l.tick(context.Background())
		r.l.Update(r.md.view())
		if in := r.md.view().InSync; !slices.Equal(in, []string{"a", "b", "c"}) {
			t.Fatalf("in sync %v at step %d; want b and c kept", in, steps)
		}
	}
	step(time.Second, "b", 2, "c", 2)
	step(time.Second, "b", 2, "c", 2) // the same offset again, nothing new
	step(DefaultLagMax-time.Millisecond, "b", 2, "c", 2)
	// b reaches the end as it was at each previous fetch, never the end
	// now: caught up as of its previous fetch, each time.
	for i := range 3 {
		if _, err := r.log.commit([]byte("more")); err != nil {
			t.Fatal(err)
		}
		step(DefaultLagMax/2+time.Millisecond, "b", 2+i, "c", 3+i)
	}
}
