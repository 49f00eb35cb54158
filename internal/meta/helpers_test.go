package meta

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/hashicorp/raft"
	bolt "go.etcd.io/bbolt"
	"go.uber.org/goleak"

	"github.com/narad-io/narad/internal/testutil"
)

// Tests bind Raft on 127.0.0.1:0 and read the real port back from
// Store.RaftAddr; a restart reuses that address, as a real node would.

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

const waitLimit = 10 * time.Second

func quietLogger() *slog.Logger { return slog.New(slog.DiscardHandler) }

func testOptions(dir, addr string) Options {
	return Options{
		Dir:           dir,
		NodeID:        "n1",
		BindAddr:      addr,
		Bootstrap:     true,
		Secret:        []byte("meta-test-secret"), // the Raft stream layer admits only nodes that share it
		Logger:        quietLogger(),
		RaftLogOutput: io.Discard,
	}
}

// openLeader opens a bootstrapping single node and waits until it leads.
func openLeader(t testing.TB, opts Options) *Store {
	t.Helper()
	s, err := Open(opts)
	if err != nil {
		t.Fatalf("open: %v", err)
	}
	t.Cleanup(func() { _ = s.Close() })
	testutil.WaitFor(t, "leadership", s.IsLeader)
	return s
}

func newLeader(t testing.TB) *Store {
	t.Helper()
	return openLeader(t, testOptions(t.TempDir(), "127.0.0.1:0"))
}

func testCtx(t testing.TB) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), waitLimit)
	t.Cleanup(cancel)
	return ctx
}

func must(t testing.TB, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

func plainTopic(name string, partitions int) Topic {
	return Topic{Name: name, Partitions: partitions, RetentionMs: 7 * 24 * 3_600_000,
		VisibilityTimeoutMs: 30_000, MaxInFlight: 1024, MaxAckedAhead: 1024, CreatedAt: 1}
}

// createMany creates topics name-0000.. concurrently, so Raft batches them.
func createMany(t testing.TB, s *Store, prefix string, n int) {
	t.Helper()
	ctx := testCtx(t)
	var wg sync.WaitGroup
	errs := make(chan error, n)
	sem := make(chan struct{}, 32)
	for i := range n {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			name := fmt.Sprintf("%s-%04d", prefix, i)
			errs <- s.CreateTopic(ctx, plainTopic(name, 2), []Assignment{{Partition: 0, Owner: "n1"}}, nil)
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		must(t, err)
	}
}

func spec(parent, epoch string) *AttachSpec {
	return &AttachSpec{Parent: parent, Epoch: epoch}
}

// fsmDump is the whole content of an FSM database, for equality checks.
type fsmDump struct {
	Topics  []Topic
	Assign  map[string][]Assignment
	Members []Member
	V       Versions
	Applied uint64
}

func dump(t testing.TB, f *fsm) fsmDump {
	t.Helper()
	d := fsmDump{Assign: map[string][]Assignment{}}
	err := f.view(func(tx *bolt.Tx) error {
		d.V = loadVersions(tx)
		d.Applied = appliedIndex(tx)
		if err := tx.Bucket(bucketTopics).ForEach(func(k, v []byte) error {
			top, err := decodeTopic(k, v)
			d.Topics = append(d.Topics, top)
			return err
		}); err != nil {
			return err
		}
		if err := tx.Bucket(bucketAssignments).ForEach(func(k, _ []byte) error {
			as, err := readAssignments(tx, string(k))
			d.Assign[string(k)] = as
			return err
		}); err != nil {
			return err
		}
		return tx.Bucket(bucketMembers).ForEach(func(k, _ []byte) error {
			m, _, err := readMember(tx, string(k))
			d.Members = append(d.Members, m)
			return err
		})
	})
	must(t, err)
	return d
}

// newBareFSM opens an FSM outside Raft, fed by applyRaw.
func newBareFSM(t testing.TB) *fsm {
	t.Helper()
	f, err := openFSM(filepath.Join(t.TempDir(), "fsm.db"), quietLogger())
	must(t, err)
	f.db.NoSync = true // durability is not under test here; speed is welcome
	t.Cleanup(func() { _ = f.close() })
	return f
}

// applyRaw applies a command at index as Raft would and returns its outcome.
func applyRaw(t testing.TB, f *fsm, index uint64, op Op, payload any) error {
	t.Helper()
	cmd, err := NewCommand(op, payload)
	must(t, err)
	resp := f.Apply(&raft.Log{Index: index, Term: 1, Type: raft.LogCommand, Data: cmd.Encode()})
	if resp == nil {
		return nil
	}
	err, ok := resp.(error)
	if !ok {
		t.Fatalf("apply returned %T", resp)
	}
	return err
}

func wantErr(t testing.TB, got, want error) {
	t.Helper()
	if want == nil {
		if got != nil {
			t.Fatalf("unexpected error: %v", got)
		}
		return
	}
	if !errors.Is(got, want) {
		t.Fatalf("got error %v, want %v", got, want)
	}
}
