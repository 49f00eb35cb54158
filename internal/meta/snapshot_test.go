package meta

import (
	"bytes"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/hashicorp/raft"

	"github.com/narad-io/narad/internal/testutil"
)

// memSink is a raft.SnapshotSink into memory.
type memSink struct {
	bytes.Buffer
	closed, cancelled bool
}

func (s *memSink) ID() string    { return "mem" }
func (s *memSink) Cancel() error { s.cancelled = true; return nil }
func (s *memSink) Close() error  { s.closed = true; return nil }

var _ raft.SnapshotSink = (*memSink)(nil)

// populate gives a store topics, links, placements and members.
func populate(t testing.TB, s *Store, prefix string) {
	t.Helper()
	ctx := testCtx(t)
	p := prefix + "-parent"
	must(t, s.CreateTopic(ctx, plainTopic(p, 3), []Assignment{{Partition: 0, Owner: "n1"}, {Partition: 2, Owner: "n2"}}, nil))
	must(t, s.CreateTopic(ctx, plainTopic(prefix+"-child", 3), nil, &AttachSpec{Parent: p, Epoch: prefix, AttachOffsets: []uint64{1, 2, 3}}))
	must(t, s.CreateTopic(ctx, plainTopic(prefix+"-plain", 1), nil, nil))
	must(t, s.UpsertMember(ctx, Member{ID: prefix + "-node", RaftAddr: "127.0.0.1:1", LastHeartbeatMs: 42}))
}

func TestSnapshotThenMoreCommandsSurvivesReopen(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	opts := testOptions(dir, "127.0.0.1:0")
	opts.TrailingLogs = 1 // compact the log at the snapshot, for real
	s := openLeader(t, opts)
	ctx := testCtx(t)
	populate(t, s, "a")
	must(t, s.Snapshot())
	if first, err := s.logStore.FirstIndex(); err != nil || first <= 1 {
		t.Fatalf("log not compacted by the snapshot: first index %d, %v", first, err)
	}
	snaps, err := os.ReadDir(filepath.Join(dir, "snapshots"))
	must(t, err)
	if len(snaps) != 1 {
		t.Fatalf("%d snapshots on disk", len(snaps))
	}
	// More commands after the snapshot, touching snapshotted records too.
	populate(t, s, "b")
	must(t, s.DeleteTopic(ctx, "a-parent"))
	must(t, s.Attach(ctx, "a-plain", *spec("b-parent", "e")))
	want := dump(t, s.fsm)
	opts.BindAddr = s.RaftAddr()
	must(t, s.Close())

	// 1. Plain reopen: fsm.db is kept and equal at once.
	s2, err := Open(opts)
	must(t, err)
	if got := dump(t, s2.fsm); !reflect.DeepEqual(got, want) {
		t.Fatalf("reopen: state differs\n got %+v\nwant %+v", got, want)
	}
	testutil.WaitFor(t, "leader", s2.IsLeader)
	must(t, s2.Barrier(ctx))
	if got := dump(t, s2.fsm); !reflect.DeepEqual(got, want) {
		t.Fatalf("reopen after replay: state differs\n got %+v\nwant %+v", got, want)
	}
	must(t, s2.Close())

	// 2. Without fsm.db: restored from the snapshot, then the log after it
	// replays (the entries before it may be compacted away).
	must(t, os.Remove(filepath.Join(dir, fsmDBFile)))
	s3, err := Open(opts)
	must(t, err)
	t.Cleanup(func() { _ = s3.Close() })
	if _, ok := s3.Topic("a-parent"); !ok {
		t.Fatal("snapshot state not restored before replay")
	}
	testutil.WaitFor(t, "leader", s3.IsLeader)
	must(t, s3.Barrier(ctx))
	got := dump(t, s3.fsm)
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("snapshot + replay: state differs\n got %+v\nwant %+v", got, want)
	}
	if s3.Versions() != want.V {
		t.Fatalf("versions %+v, want %+v", s3.Versions(), want.V)
	}
}

func TestFSMRestoreIntoFreshFSM(t *testing.T) {
	t.Parallel()
	s := newLeader(t)
	populate(t, s, "a")
	populate(t, s, "b")
	want := dump(t, s.fsm)

	snap, err := s.fsm.Snapshot()
	must(t, err)
	// Writes after Snapshot() must not leak into the image.
	must(t, s.DeleteTopic(testCtx(t), "b-plain"))
	var sink memSink
	must(t, snap.Persist(&sink))
	snap.Release()
	if !sink.closed || sink.cancelled {
		t.Fatalf("sink closed=%v cancelled=%v", sink.closed, sink.cancelled)
	}

	f := newBareFSM(t)
	// Give the fresh FSM state of its own: a restore replaces, not merges.
	must(t, applyRaw(t, f, 1, OpCreateTopic, CreateTopicCmd{Topic: plainTopic("stale", 1)}))
	w := *f.watch.Load()
	must(t, f.Restore(io.NopCloser(bytes.NewReader(sink.Bytes()))))
	if got := dump(t, f); !reflect.DeepEqual(got, want) {
		t.Fatalf("restored state differs\n got %+v\nwant %+v", got, want)
	}
	if f.state.Load().v != want.V || f.state.Load().applied != want.Applied {
		t.Fatalf("restored versions/applied not published: %+v", f.state.Load())
	}
	select {
	case <-w:
	default:
		t.Fatal("restore did not notify watchers")
	}
	// The restored FSM keeps applying after the snapshot's index.
	must(t, applyRaw(t, f, want.Applied+1, OpDeleteTopic, DeleteTopicCmd{Name: "b-plain"}))
	if got := f.state.Load().v.Topics; got != want.Applied+1 {
		t.Fatalf("topics version %d after post-restore apply", got)
	}
	if _, err := os.Stat(f.path + ".restore"); !os.IsNotExist(err) {
		t.Fatalf("temporary restore file left behind: %v", err)
	}
}

func TestFSMRestoreRejectsGarbage(t *testing.T) {
	t.Parallel()
	f := newBareFSM(t)
	must(t, applyRaw(t, f, 1, OpCreateTopic, CreateTopicCmd{Topic: plainTopic("keep", 1)}))
	before := dump(t, f)
	err := f.Restore(io.NopCloser(strings.NewReader(strings.Repeat("not a bbolt file ", 1000))))
	if err == nil {
		t.Fatal("garbage snapshot restored")
	}
	if got := dump(t, f); !reflect.DeepEqual(got, before) {
		t.Fatal("a failed restore changed the state")
	}
}
