package broker

import (
	"syscall"
	"testing"

	"github.com/narad-io/narad/internal/journal"
	"github.com/narad-io/narad/internal/storage"
	"github.com/narad-io/narad/internal/vfs/errorfs"
)

// A replicated leader's held log publishes a commit to its followers
// before its fdatasync ends; when that sync fails and the pages are lost,
// the log cannot vouch for records followers may hold. The produce fails,
// the leader role stops, the log is reopened from what the disk holds
// (the lost record is not there), and a new leader role takes over — the
// real engine's renews the epoch, so followers cut what the old one
// published. Produce works again with no restart of the node.
func TestLeaderLogThatLostPublishedRecordsReopensUnderANewRole(t *testing.T) {
	n, eng, old := readyLeader(t, Config{})
	produceCommitted(t, n, old, "kept", 1)

	n.fs.Inject(errorfs.Rule{Ops: errorfs.OpSync, Path: ".log", Times: 1, Err: syscall.EIO, LoseUnsynced: true})
	_, err := n.b.ProduceBatchWithIDs(testCtx(t), "r", []ProduceRecord{{Payload: []byte("lost")}})
	if err == nil {
		t.Fatal("a produce whose fdatasync failed answered nil")
	}
	if w, e := old.log.Written(), old.log.End(); w != 2 || e != 1 {
		t.Fatalf("after the failed sync: written %d, end %d; want 2 and 1", w, e)
	}
	waitFor(t, "a new leader role over the reopened log", func() bool { return eng.leader(1) != nil })
	if !old.closed.Load() {
		t.Fatal("the old leader role was not closed")
	}
	nl := eng.leader(1)
	if nl.log == old.log {
		t.Fatal("the new leader role runs over the same (fenced) log")
	}
	if w, e := nl.log.Written(), nl.log.End(); w != 1 || e != 1 {
		t.Fatalf("reopened log: written %d, end %d; want 1 and 1 (the lost page gone)", w, e)
	}
	nl.ready.Store(true)
	produceCommitted(t, n, nl, "after", 2)
	msgs, err := n.replay("r", 0, 0, 10)
	if err != nil || len(msgs) != 2 || string(msgs[0].Payload) != "kept" || string(msgs[1].Payload) != "after" {
		t.Fatalf("replay after the reopen: %d records, %v", len(msgs), err)
	}
}

// produceCommitted produces one record to partition 0 of "r" and, once
// fl's log holds end records durably, lets the quorum hold them.
func produceCommitted(t *testing.T, n *testNode, fl *fakeLeader, payload string, end uint64) {
	t.Helper()
	produced := make(chan error, 1)
	go func() {
		_, err := n.b.ProduceBatchWithIDs(testCtx(t), "r", []ProduceRecord{{Payload: []byte(payload)}})
		produced <- err
	}()
	waitFor(t, "the record on the leader's disk", func() bool { return fl.log.End() == end })
	fl.commitTo(end)
	if err := <-produced; err != nil {
		t.Fatalf("produce %q: %v", payload, err)
	}
}

// A follower's held log over the node's journal whose segment fdatasync
// fails (and loses its unsynced pages) is reopened by its role, and the
// Appends the journal made durable come back: the follower goes on from
// where it was acknowledged to be, with no restart of the node.
func TestJournaledFollowerThatLostItsSegmentPagesReopensWhole(t *testing.T) {
	eng := &fakeEngine{}
	n := newTestNode(t, Config{Replication: eng})
	j, err := journal.Open(n.dir, journal.Options{FS: n.fs})
	if err != nil {
		t.Fatal(err)
	}
	n.restart(func(c *Config) { c.Journal = j })
	createReplicated(t, n, "r", "n2")
	waitFor(t, "the follower role", func() bool { return eng.follower(0) != nil })
	old := eng.follower(0)
	recs := []storage.Record{{Offset: 0, CommittedAt: 1, Payload: []byte("a")}, {Offset: 1, CommittedAt: 1, Payload: []byte("b")}}
	if err := old.log.Append(recs); err != nil {
		t.Fatal(err)
	}
	n.fs.Inject(errorfs.Rule{Ops: errorfs.OpSync, Path: ".log", Times: 1, Err: syscall.EIO, LoseUnsynced: true})
	if err := old.log.(*storage.Log).SyncJournaled(); err == nil {
		t.Fatal("a segment sync over a failing fdatasync answered nil")
	}
	waitFor(t, "a new follower role over the reopened log", func() bool { return eng.follower(1) != nil })
	nf := eng.follower(1)
	if nf.log == old.log {
		t.Fatal("the new follower role runs over the same (fenced) log")
	}
	if e := nf.log.End(); e != 2 {
		t.Fatalf("reopened follower log ends at %d, want 2 (the journaled Appends back)", e)
	}
	got, err := nf.log.ReadTo(0, 10, 1<<20)
	if err != nil || len(got) != 2 || string(got[0].Payload) != "a" || string(got[1].Payload) != "b" {
		t.Fatalf("reopened follower log holds %d records (%v)", len(got), err)
	}
}
