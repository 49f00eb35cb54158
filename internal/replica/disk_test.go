package replica

import (
	"context"
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/narad-io/narad/internal/clock"
)

func (r *leaderRig) fetchFrom(node, disk string, off uint64) (FetchResponse, error) {
	v := r.md.view()
	return r.l.HandleFetch(context.Background(), FetchRequest{Topic: v.Topic, Incarnation: v.Incarnation, Partition: v.Partition,
		Epoch: v.Epoch, Follower: node, DiskID: disk, Offset: off})
}

// A follower whose disk was replaced (out of the in-sync set by
// replaceDisk) is not re-added on what its old disk acknowledged: the
// leader names the disk its fetches came from, and only fetches from the
// new disk, caught up, bring it back.
func TestLeaderReadmitsAReplacedDiskOnlyForItsOwnFetches(t *testing.T) {
	ctx := context.Background()
	r := newLeaderRig(t, 2)
	for _, n := range []string{"b", "c"} {
		if _, err := r.fetchFrom(n, diskOf(n, 0), 2); err != nil {
			t.Fatal(err)
		}
	}
	if c := r.l.Committed(); c != 2 {
		t.Fatalf("committed %d, want 2", c)
	}
	r.md.replaceDisk("c", diskOf("c", 1))
	r.l.Update(r.md.view())
	r.l.tick(ctx)
	if got := r.md.view().InSync; !slices.Equal(got, []string{"a", "b"}) {
		t.Fatalf("in sync %v on c's old disk's acknowledgement, want [a b]", got)
	}
	// The new disk's first fetch: from nothing. Not caught up.
	if _, err := r.fetchFrom("c", diskOf("c", 1), 0); err != nil {
		t.Fatal(err)
	}
	r.l.Update(r.md.view())
	r.l.tick(ctx)
	if got := r.md.view().InSync; !slices.Equal(got, []string{"a", "b"}) {
		t.Fatalf("in sync %v with c's new disk at 0", got)
	}
	if _, err := r.fetchFrom("c", diskOf("c", 1), 2); err != nil {
		t.Fatal(err)
	}
	r.l.Update(r.md.view())
	r.l.tick(ctx)
	if got := r.md.view().InSync; !slices.Equal(got, []string{"a", "b", "c"}) {
		t.Fatalf("in sync %v once c's new disk caught up, want [a b c]", got)
	}
}

// A disk change forgets what the old disk acknowledged: the follower is
// out of date at once, even at an offset that did not go back, and the
// leader names the new disk.
func TestLeaderForgetsTheOldDisksAcknowledgement(t *testing.T) {
	r := newLeaderRig(t, 2)
	if _, err := r.fetchFrom("b", diskOf("b", 0), 1); err != nil {
		t.Fatal(err)
	}
	r.clk.Advance(time.Second)
	if _, err := r.fetchFrom("b", diskOf("b", 1), 1); err != nil {
		t.Fatal(err)
	}
	r.l.mu.Lock()
	p := *r.l.peers["b"]
	disks := r.l.proposalLocked([]string{"a", "b", "c"}).Disks
	r.l.mu.Unlock()
	if !p.known || p.disk != diskOf("b", 1) || p.acked != 1 {
		t.Fatalf("b after its new disk's fetch: %+v", p)
	}
	if lag := r.clk.Now().Sub(p.caughtUpAt); lag <= DefaultLagMax {
		t.Fatalf("b on a new disk, behind the end, counts as caught up %v ago", lag)
	}
	if len(disks) != 1 || disks["b"] != diskOf("b", 1) {
		t.Fatalf("disks named %v, want b's new one only", disks)
	}
}

// A leader outside its own in-sync set (its disk was replaced after its
// election) serves nothing: no commit, no fetch, no in-sync proposal.
func TestLeaderOutsideItsInSyncSetServesNothing(t *testing.T) {
	r := newLeaderRig(t, 2)
	r.md.replaceDisk("a", diskOf("a", 1))
	r.l.Update(r.md.view())
	if err := r.l.Writable(); !errors.Is(err, ErrStateLost) {
		t.Fatalf("writable: %v, want ErrStateLost", err)
	}
	if _, err := r.fetchFrom("b", diskOf("b", 0), 2); !errors.Is(err, ErrStateLost) {
		t.Fatalf("fetch: %v, want ErrStateLost", err)
	}
	before := r.md.view()
	r.l.tick(context.Background())
	if got := r.md.view(); !slices.Equal(got.InSync, before.InSync) {
		t.Fatalf("in sync changed to %v by a leader outside it", got.InSync)
	}
	// Built from such a view, it refuses to begin.
	l, err := NewLeader(LeaderConfig{Self: "a", View: r.md.view(), Log: newMemLog(), Proposer: r.md, Clock: clock.NewFake(r.clk.Now())})
	if err != nil {
		t.Fatal(err)
	}
	if err := l.begin(context.Background()); !errors.Is(err, ErrStateLost) {
		t.Fatalf("begin: %v, want ErrStateLost", err)
	}
}

// A follower names its disk in every fetch.
func TestFollowerFetchesNameItsDisk(t *testing.T) {
	r := newLeaderRig(t, 0)
	f, err := NewFollower(FollowerConfig{Self: "b", DiskID: "b.diskX", View: r.md.view(), Log: newMemLog(), Transport: noTransport{}, Clock: r.clk})
	if err != nil {
		t.Fatal(err)
	}
	if _, req, _, err := f.prepare(); err != nil || req.DiskID != "b.diskX" {
		t.Fatalf("fetch %+v %v, want disk b.diskX", req, err)
	}
}
