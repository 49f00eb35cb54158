package meta

import (
	"bytes"
	"errors"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/raft"

	"github.com/narad-io/narad/internal/testutil"
)

func TestBootstrapElectsItself(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	start := time.Now()
	s := openLeader(t, testOptions(dir, "127.0.0.1:0"))
	t.Logf("single node became leader in %v", time.Since(start))

	id, addr := s.Leader()
	if id != "n1" || addr != s.RaftAddr() {
		t.Fatalf("Leader() = %q %q, want n1 %q", id, addr, s.RaftAddr())
	}
	if strings.HasSuffix(s.RaftAddr(), ":0") {
		t.Fatalf("RaftAddr %q is not the bound port", s.RaftAddr())
	}
	testutil.WaitFor(t, "caught up", s.AppliedCaughtUp)
	for _, name := range []string{"raft.db", "fsm.db", "snapshots"} {
		if _, err := os.Stat(filepath.Join(dir, name)); err != nil {
			t.Errorf("layout: %v", err)
		}
	}
	// A real Raft cluster of exactly this node.
	cf := s.raft.GetConfiguration()
	must(t, cf.Error())
	srv := cf.Configuration().Servers
	if len(srv) != 1 || srv[0].ID != "n1" || string(srv[0].Address) != s.RaftAddr() || srv[0].Suffrage != raft.Voter {
		t.Fatalf("configuration = %+v", srv)
	}
	must(t, s.Barrier(testCtx(t)))
}

func TestOpenRejectsMissingOptions(t *testing.T) {
	t.Parallel()
	for _, o := range []Options{
		{NodeID: "n1", BindAddr: "127.0.0.1:0"},
		{Dir: t.TempDir(), BindAddr: "127.0.0.1:0"},
		{Dir: t.TempDir(), NodeID: "n1"},
	} {
		if s, err := Open(o); err == nil {
			_ = s.Close()
			t.Fatalf("Open(%+v) succeeded", o)
		}
	}
}

func TestRestartKeepsStateWithoutRebootstrap(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	opts := testOptions(dir, "127.0.0.1:0")
	s := openLeader(t, opts)
	ctx := testCtx(t)
	must(t, s.CreateTopic(ctx, plainTopic("orders", 3), []Assignment{{Partition: 0, Owner: "n1"}}, nil))
	must(t, s.CreateTopic(ctx, plainTopic("audit", 3), nil, spec("orders", "e1")))
	must(t, s.UpsertMember(ctx, Member{ID: "n1", RaftAddr: s.RaftAddr(), LastHeartbeatMs: 5}))
	wantTopics, wantV := s.Topics(), s.Versions()
	opts.BindAddr = s.RaftAddr() // come back on the same address
	must(t, s.Close())

	// Bootstrap stays requested: Open must see the existing state and not
	// bootstrap again (raft would refuse, failing Open).
	s2, err := Open(opts)
	must(t, err)
	t.Cleanup(func() { _ = s2.Close() })
	// fsm.db is kept, so the state is served before any election.
	if got := s2.Topics(); !reflect.DeepEqual(got, wantTopics) {
		t.Fatalf("before election: topics = %+v, want %+v", got, wantTopics)
	}
	if got := s2.Versions(); got != wantV {
		t.Fatalf("versions = %+v, want %+v", got, wantV)
	}
	testutil.WaitFor(t, "leadership after restart", s2.IsLeader)
	must(t, s2.Barrier(ctx))
	if got := s2.Topics(); !reflect.DeepEqual(got, wantTopics) {
		t.Fatalf("after replay: topics = %+v, want %+v", got, wantTopics)
	}
	if got := s2.Versions(); got != wantV {
		t.Fatalf("after replay: versions = %+v, want %+v", got, wantV)
	}
	if m, ok := s2.Member("n1"); !ok || m.LastHeartbeatMs != 5 {
		t.Fatalf("member = %+v %v", m, ok)
	}
	cf := s2.raft.GetConfiguration()
	must(t, cf.Error())
	if n := len(cf.Configuration().Servers); n != 1 {
		t.Fatalf("configuration has %d servers", n)
	}
	// Writes keep working and versions keep growing.
	must(t, s2.DeleteTopic(ctx, "audit"))
	if v := s2.Versions(); v.Topics <= wantV.Topics {
		t.Fatalf("topics version %d did not pass %d", v.Topics, wantV.Topics)
	}
}

func TestRestartWithoutBootstrapFlagUsesStoredConfiguration(t *testing.T) {
	t.Parallel()
	opts := testOptions(t.TempDir(), "127.0.0.1:0")
	s := openLeader(t, opts)
	must(t, s.CreateTopic(testCtx(t), plainTopic("orders", 1), nil, nil))
	opts.BindAddr = s.RaftAddr()
	must(t, s.Close())

	opts.Bootstrap = false
	s2 := openLeader(t, opts)
	if _, ok := s2.Topic("orders"); !ok {
		t.Fatal("orders lost")
	}
}

func TestFSMRebuiltFromLogWhenDeleted(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	opts := testOptions(dir, "127.0.0.1:0")
	s := openLeader(t, opts)
	ctx := testCtx(t)
	must(t, s.CreateTopic(ctx, plainTopic("orders", 2), []Assignment{{Partition: 1, Owner: "n1"}}, nil))
	must(t, s.CreateTopic(ctx, plainTopic("audit", 2), nil, spec("orders", "e1")))
	want := dump(t, s.fsm)
	opts.BindAddr = s.RaftAddr()
	must(t, s.Close())
	must(t, os.Remove(filepath.Join(dir, fsmDBFile)))

	s2 := openLeader(t, opts)
	must(t, s2.Barrier(ctx))
	if got := dump(t, s2.fsm); !reflect.DeepEqual(got, want) {
		t.Fatalf("rebuilt state\n got %+v\nwant %+v", got, want)
	}
}

func TestStaleFSMWithoutRaftStateIsDiscarded(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	opts := testOptions(dir, "127.0.0.1:0")
	s := openLeader(t, opts)
	must(t, s.CreateTopic(testCtx(t), plainTopic("ghost", 1), nil, nil))
	must(t, s.Close())
	// The Raft state goes, fsm.db stays: a new cluster must not inherit it.
	must(t, os.Remove(filepath.Join(dir, raftDBFile)))
	must(t, os.RemoveAll(filepath.Join(dir, "snapshots")))

	s2 := openLeader(t, opts)
	if _, ok := s2.Topic("ghost"); ok {
		t.Fatal("topic from a discarded Raft state survived")
	}
	if v := s2.Versions(); v != (Versions{}) {
		t.Fatalf("versions = %+v", v)
	}
}

func TestWatchClosesOnApply(t *testing.T) {
	t.Parallel()
	s := newLeader(t)
	w := s.Watch()
	select {
	case <-w:
		t.Fatal("watch closed before any change")
	default:
	}
	must(t, s.CreateTopic(testCtx(t), plainTopic("orders", 1), nil, nil))
	select {
	case <-w:
	default:
		t.Fatal("watch not closed by an applied command")
	}
	if s.Watch() == w {
		t.Fatal("watch channel not replaced")
	}
}

func TestClosedStore(t *testing.T) {
	t.Parallel()
	s := newLeader(t)
	must(t, s.Close())
	must(t, s.Close()) // idempotent
	wantErr(t, s.CreateTopic(testCtx(t), plainTopic("x", 1), nil, nil), ErrClosed)
	wantErr(t, s.Barrier(testCtx(t)), ErrClosed)
	if s.AppliedCaughtUp() {
		t.Fatal("closed store claims to be caught up")
	}
}

func TestSecondOpenOfSameDirFails(t *testing.T) {
	t.Parallel()
	opts := testOptions(t.TempDir(), "127.0.0.1:0")
	_ = openLeader(t, opts)
	s2, err := Open(opts)
	if err == nil {
		_ = s2.Close()
		t.Fatal("a second Open of a directory in use succeeded")
	}
}

func TestRaftLogsRoutedToSlog(t *testing.T) {
	t.Parallel()
	var lines bytes.Buffer
	l := newRaftLogger(nil, "warn", slogTo(&lines))
	l.Info("info is filtered")
	l.Warn("heartbeat missed", "peer", "n2")
	l.Error("boom")
	out := lines.String()
	if strings.Contains(out, "info is filtered") {
		t.Fatalf("info line passed the warn filter: %s", out)
	}
	if !strings.Contains(out, "level=WARN") || !strings.Contains(out, "heartbeat missed") ||
		!strings.Contains(out, "level=ERROR") || !strings.Contains(out, "component=raft") {
		t.Fatalf("raft lines not routed to slog with their levels: %s", out)
	}
}

func slogTo(w io.Writer) *slog.Logger {
	return slog.New(slog.NewTextHandler(w, &slog.HandlerOptions{Level: slog.LevelDebug}))
}

func TestNotLeaderErrorMatches(t *testing.T) {
	t.Parallel()
	var err error = &NotLeaderError{LeaderID: "n2", LeaderAddr: "127.0.0.1:1"}
	if !errors.Is(err, ErrNotLeader) {
		t.Fatal("errors.Is(NotLeaderError, ErrNotLeader) is false")
	}
	if !strings.Contains(err.Error(), "127.0.0.1:1") {
		t.Fatalf("message lacks the leader address: %v", err)
	}
}

func TestHasState(t *testing.T) {
	dir := t.TempDir()
	if has, err := HasState(dir); err != nil || has {
		t.Fatalf("empty dir: %v %v", has, err)
	}
	if has, err := HasState(filepath.Join(dir, "missing")); err != nil || has {
		t.Fatalf("missing dir: %v %v", has, err)
	}
	s := openLeader(t, testOptions(dir, "127.0.0.1:0"))
	must(t, s.Close())
	if has, err := HasState(dir); err != nil || !has {
		t.Fatalf("after a bootstrap: %v %v", has, err)
	}
}

// The first election of a node that has never seen a leader is how Raft
// starts (a single node's bootstrap logs it every time): INFO, not WARN.
// An election after a leader was lost stays a warning. The hclog level tag
// is not repeated in the message.
func TestFirstElectionIsNotAWarning(t *testing.T) {
	t.Parallel()
	var lines bytes.Buffer
	l := newRaftLogger(nil, "info", slogTo(&lines))
	// As raft logs it: typed values, which hclog prints bare.
	l.Warn("heartbeat timeout reached, starting election", "last-leader-addr", raft.ServerAddress(""), "last-leader-id", raft.ServerID(""))
	first := lines.String()
	lines.Reset()
	l.Warn("heartbeat timeout reached, starting election", "last-leader-addr", "", "last-leader-id", "")
	first += lines.String()
	lines.Reset()
	l.Warn("heartbeat timeout reached, starting election", "last-leader-addr", "10.0.0.2:7943", "last-leader-id", "n2")
	lost := lines.String()
	if strings.Count(first, "level=INFO") != 2 || strings.Contains(first, "WARN") {
		t.Errorf("first election logged as %q, want INFO without the hclog tag", first)
	}
	if !strings.Contains(lost, "level=WARN") {
		t.Errorf("election after a lost leader logged as %q, want WARN", lost)
	}
}
