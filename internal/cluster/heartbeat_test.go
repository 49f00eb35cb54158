package cluster

import (
	"context"
	"io"
	"path/filepath"
	"testing"
	"time"

	"github.com/narad-io/narad/internal/meta"
	"github.com/narad-io/narad/internal/testutil"
)

// TestADeposedLeaderAnswersNoHeartbeat: a metastore leader that lost its
// quorum but has not noticed yet (hashicorp/raft steps down only after
// its lease) must not answer a heartbeat: the answer would renew the
// sender's lease past a new leader's election, and FailoverAfter's margin
// over FenceAfter assumes no such answer.
func TestADeposedLeaderAnswersNoHeartbeat(t *testing.T) {
	ctx := context.Background()
	open := func(id string, boot bool) *meta.Store {
		t.Helper()
		// A lease long enough that the leader still believes it leads
		// while the test asks.
		ms, err := meta.Open(meta.Options{Dir: filepath.Join(t.TempDir(), "metastore"), NodeID: id, BindAddr: "127.0.0.1:0",
			Bootstrap: boot, Secret: []byte("heartbeat-test"), Logger: quiet(), RaftLogOutput: io.Discard,
			HeartbeatTimeout: time.Second, ElectionTimeout: time.Second, LeaderLeaseTimeout: time.Second})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = ms.Close() })
		return ms
	}
	n1 := open("n1", true)
	testutil.WaitFor(t, "n1 leads", n1.IsLeader)
	n2 := open("n2", false)
	must(t, n1.AddVoter(ctx, "n2", n2.RaftAddr()))
	testutil.WaitFor(t, "n2 follows", func() bool { _, addr := n2.Leader(); return addr != "" })

	n := &Node{Self: meta.Member{ID: "n1", RPCAddr: "127.0.0.1:1"}, Meta: n1, Transport: &fakeTransport{}, Log: quiet()}
	must(t, n.HandleHeartbeat(ctx, meta.Member{ID: "n2"})) // answered (and recorded) while the quorum stands

	must(t, n2.Close())
	hctx, cancel := context.WithTimeout(ctx, 300*time.Millisecond)
	defer cancel()
	if err := n.HandleHeartbeat(hctx, meta.Member{ID: "n2"}); err == nil {
		t.Fatal("a leader without its quorum answered a heartbeat")
	}
	if !n1.IsLeader() {
		t.Fatal("n1 stepped down before it was asked: the test showed nothing (lengthen the lease)")
	}
}

// TestHeartbeatsOfAnEarlierTermDoNotCount: what a leader heard in an
// earlier term of its own leadership is not silence counted from: another
// leader may have renewed the member's lease in between.
func TestHeartbeatsOfAnEarlierTermDoNotCount(t *testing.T) {
	n := &Node{leaderTerm: 3}
	at := time.Unix(100, 0)
	n.noteSeen("b", at, 2)
	if got := n.seen("b"); !got.IsZero() {
		t.Fatalf("a heartbeat of term 2 counts in term 3: %v", got)
	}
	n.noteSeen("b", at.Add(-time.Second), 3)
	if got := n.seen("b"); !got.Equal(at.Add(-time.Second)) {
		t.Fatalf("a heartbeat of the current term: seen %v", got)
	}
	n.noteSeen("b", at.Add(time.Second), 2) // a late one of the older term
	if got := n.seen("b"); !got.Equal(at.Add(-time.Second)) {
		t.Fatalf("a late heartbeat of an older term replaced the current one: seen %v", got)
	}
}
