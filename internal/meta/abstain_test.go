package meta

import (
	"errors"
	"io"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/hashicorp/raft"

	"github.com/narad-io/narad/internal/peerauth"
	"github.com/narad-io/narad/internal/testutil"
)

// voter is a Raft transport of a would-be candidate: it asks a node for
// its vote the way hashicorp/raft does.
type voter struct {
	t  *testing.T
	tr *raft.NetworkTransport
	id string
}

func newVoter(t *testing.T, secret []byte, id string) *voter {
	t.Helper()
	stream, err := peerauth.ListenRaft("127.0.0.1:0", nil, peerauth.Config{Plane: "raft", Secret: secret})
	if err != nil {
		t.Fatal(err)
	}
	tr := raft.NewNetworkTransport(stream, 1, 5*time.Second, io.Discard)
	t.Cleanup(func() { tr.CloseStreams(); _ = tr.Close() })
	return &voter{t: t, tr: tr, id: id}
}

// ask asks s for its vote in the next term as a candidate whose log is
// far ahead of s's (so Raft itself would grant it), marked as a
// leadership transfer (so a known leader does not stop s from voting).
func (v *voter) ask(s *Store, preVote bool) bool {
	v.t.Helper()
	hdr := raft.RPCHeader{ProtocolVersion: raft.ProtocolVersionMax, ID: []byte(v.id),
		Addr: v.tr.EncodePeer(raft.ServerID(v.id), v.tr.LocalAddr())}
	target, addr := raft.ServerID(s.NodeID()), raft.ServerAddress(s.RaftAddr())
	const ahead = 1 << 40
	if preVote {
		var resp raft.RequestPreVoteResponse
		req := raft.RequestPreVoteRequest{RPCHeader: hdr, Term: s.Term() + 1, LastLogIndex: ahead, LastLogTerm: ahead}
		if err := v.tr.RequestPreVote(target, addr, &req, &resp); err != nil {
			v.t.Fatalf("pre-vote: %v", err)
		}
		return resp.Granted
	}
	var resp raft.RequestVoteResponse
	req := raft.RequestVoteRequest{RPCHeader: hdr, Term: s.Term() + 1, LastLogIndex: ahead, LastLogTerm: ahead, LeadershipTransfer: true}
	if err := v.tr.RequestVote(target, addr, &req, &resp); err != nil {
		v.t.Fatalf("vote: %v", err)
	}
	return resp.Granted
}

// joinAbstaining opens a leader n1 (with some history) and an empty n2
// (disk "d2") that n1 adds as a voter, and waits until n2 holds the
// history.
func joinAbstaining(t *testing.T) (leader, n2 *Store, o2 Options) {
	t.Helper()
	ctx := testCtx(t)
	o1 := testOptions(t.TempDir(), "127.0.0.1:0")
	o1.DiskID = "d1"
	leader = openLeader(t, o1)
	must(t, leader.CreateTopic(ctx, plainTopic("history", 1), nil, nil))
	o2 = testOptions(t.TempDir(), "127.0.0.1:0")
	o2.NodeID, o2.Bootstrap, o2.DiskID = "n2", false, "d2"
	n2, err := Open(o2)
	must(t, err)
	t.Cleanup(func() { _ = n2.Close() })
	must(t, leader.AddVoter(ctx, "n2", n2.RaftAddr()))
	testutil.WaitFor(t, "n2 to hold the topic", func() bool { _, ok := n2.Topic("history"); return ok })
	return leader, n2, o2
}

// TestANodeWithoutRaftStateAbstains: a node that opened with no Raft
// state refuses every vote and pre-vote for a candidate with a history
// (asked when it knows no leader, so that Raft itself would grant them),
// and its own campaigns get no vote from anyone.
func TestANodeWithoutRaftStateAbstains(t *testing.T) {
	leader, n2, o2 := joinAbstaining(t)
	v := newVoter(t, o2.Secret, "n1") // a member of the configuration
	must(t, leader.Close())
	testutil.WaitFor(t, "n2 to lose its leader", func() bool { _, addr := n2.Leader(); return addr == "" })
	if v.ask(n2, true) {
		t.Fatal("a node without Raft state granted a pre-vote before its disk was recorded")
	}
	if v.ask(n2, false) {
		t.Fatal("a node without Raft state granted a vote before its disk was recorded")
	}
	if !n2.abstains(2) || n2.abstains(bootstrapIndex) {
		t.Fatal("abstention: a candidate past the bootstrap configuration must be refused, a brand-new cluster's judged by Raft")
	}
	var resp raft.RequestVoteResponse
	err := n2.votes.RequestVote("n1", raft.ServerAddress(leader.RaftAddr()), &raft.RequestVoteRequest{Term: 9, LastLogIndex: 5}, &resp)
	if !errors.Is(err, errAbstaining) {
		t.Fatalf("an abstaining node's own campaign asked for a vote: %v", err)
	}
	var pre raft.RequestPreVoteResponse
	err = n2.votes.RequestPreVote("n1", raft.ServerAddress(leader.RaftAddr()), &raft.RequestPreVoteRequest{Term: 9, LastLogIndex: 5}, &pre)
	if !errors.Is(err, errAbstaining) {
		t.Fatalf("an abstaining node's own campaign asked for a pre-vote: %v", err)
	}
}

// TestAbstentionLastsUntilTheDiskIsRecorded: the abstention survives a
// restart (Raft has state of its own by then, from its leader), and ends
// — for good, its file removed — once the replica records the node's
// disk; then Raft decides votes again (and grants this test's candidate).
func TestAbstentionLastsUntilTheDiskIsRecorded(t *testing.T) {
	ctx := testCtx(t)
	leader, n2, o2 := joinAbstaining(t)
	must(t, n2.Close())
	o2.BindAddr = n2.RaftAddr()
	n2, err := Open(o2)
	must(t, err)
	t.Cleanup(func() { _ = n2.Close() })
	if !n2.abstains(1 << 40) {
		t.Fatal("a node restarted before its disk was recorded no longer abstains")
	}

	must(t, leader.UpsertMember(ctx, Member{ID: "n2", RaftAddr: n2.RaftAddr(), State: MemberAlive, DiskID: "d2"}))
	testutil.WaitFor(t, "n2 to record its disk", func() bool { m, ok := n2.Member("n2"); return ok && m.DiskID == "d2" })
	v := newVoter(t, o2.Secret, "n1")
	if !v.ask(n2, false) {
		t.Fatal("a node whose disk is recorded still refuses a vote Raft would grant")
	}
	if _, err := os.Stat(filepath.Join(o2.Dir, AbstainFile)); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("the abstention's file is still there once it ended: %v", err)
	}
	must(t, n2.Close())
	n2, err = Open(o2)
	must(t, err)
	t.Cleanup(func() { _ = n2.Close() })
	if n2.abstaining.on.Load() {
		t.Fatal("a node abstains again after its abstention ended")
	}
}

// TestANodeWithRaftStateNeverAbstains: reopened on its own state (or with
// no disk id to recognise), a node votes as Raft says.
func TestANodeWithRaftStateNeverAbstains(t *testing.T) {
	o := testOptions(t.TempDir(), "127.0.0.1:0")
	o.DiskID = "d1"
	s := openLeader(t, o)
	if !s.abstaining.on.Load() {
		t.Fatal("a node that bootstrapped on an empty disk does not abstain")
	}
	must(t, s.UpsertMember(testCtx(t), Member{ID: "n1", RaftAddr: s.RaftAddr(), State: MemberAlive, DiskID: "d1"}))
	if s.abstains(1 << 40) {
		t.Fatal("a node whose disk is recorded abstains")
	}
	must(t, s.Close())
	o.BindAddr = s.RaftAddr()
	s = openLeader(t, o)
	if s.abstaining.on.Load() || s.abstains(1<<40) {
		t.Fatal("a node reopened on its Raft state abstains")
	}
	o2 := testOptions(t.TempDir(), "127.0.0.1:0")
	if s2 := openLeader(t, o2); s2.abstains(1 << 40) {
		t.Fatal("a node without a disk id abstains")
	}
}

// TestAnAbstentionThatCannotBeCheckedFailsOpen: the abstention's file is
// what keeps a node that lost its Raft state from voting once Raft has
// state again. A file that cannot be checked (here a symlink loop: the
// stat fails with ELOOP, not "no such file") must fail the Open, not
// count as no abstention.
func TestAnAbstentionThatCannotBeCheckedFailsOpen(t *testing.T) {
	o := testOptions(t.TempDir(), "127.0.0.1:0")
	o.DiskID = "d1"
	s := openLeader(t, o)
	if !s.abstaining.on.Load() {
		t.Fatal("a node that bootstrapped on an empty disk does not abstain")
	}
	must(t, s.Close())
	marker := filepath.Join(o.Dir, AbstainFile)
	must(t, os.Remove(marker))
	must(t, os.Symlink(AbstainFile, marker)) // points at itself
	o.BindAddr = s.RaftAddr()
	if s2, err := Open(o); err == nil {
		_ = s2.Close()
		t.Fatalf("Open succeeded with an abstention file that cannot be checked (abstaining: %v)", s2.abstaining.on.Load())
	}
}
