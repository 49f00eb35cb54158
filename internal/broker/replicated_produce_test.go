package broker

import (
	"context"
	"errors"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/narad-io/narad/internal/meta"
	"github.com/narad-io/narad/internal/refusal"
	"github.com/narad-io/narad/internal/storage"
	"github.com/narad-io/narad/internal/wal"
)

// Records a node placed by turn (no key, partition or msg_id) whose
// leader refuses them before writing anything go at once to the next
// partition that can take them, rather than wait for that leader; records
// that must go where they hash (here a key) stay and are held there.
func TestPlacedRecordsMoveOffARefusingLeader(t *testing.T) {
	var mu sync.Mutex
	var tried []int
	remote := committerFunc(func(ctx context.Context, topic string, inc uint64, p int, recs []storage.Record) error {
		mu.Lock()
		tried = append(tried, p)
		mu.Unlock()
		if p == 0 {
			return refusal.New(refusal.ErrNotReady, time.Second, "partition 0: this node has not heard from the cluster within its lease")
		}
		for i := range recs {
			recs[i].Offset = uint64(i)
		}
		return nil
	})
	b, top := remoteLed(t, remote)
	triedNow := func() []int {
		mu.Lock()
		defer mu.Unlock()
		return slices.Clone(tried)
	}

	wrecs := []wal.Record{{Topic: "r", Partition: 0, Payload: []byte("a")}, {Topic: "r", Partition: 0, Payload: []byte("b")}}
	acc, err := b.commitReplicated(testCtx(t), top, wrecs, []bool{true, true})
	if err != nil {
		t.Fatalf("placed records refused on partition 0: %v, want them committed on another", err)
	}
	if got := triedNow(); !slices.Equal(got, []int{0, 1}) {
		t.Errorf("partitions tried %v, want 0 then 1 at once", got)
	}
	for i := range acc {
		if acc[i].Partition != 1 || wrecs[i].Partition != 1 {
			t.Errorf("record %d answered on partition %d (written back %d), want 1", i, acc[i].Partition, wrecs[i].Partition)
		}
	}

	// A keyed record on partition 0 is held there (until the caller's
	// deadline here), never moved; so is a placed record of the same
	// request on the same partition, which keeps the request's order.
	for _, c := range []struct {
		name   string
		wrecs  []wal.Record
		placed []bool
	}{
		{"a keyed record", []wal.Record{{Topic: "r", Partition: 0, Key: []byte("k"), Payload: []byte("c")}}, nil},
		{"a placed record beside a keyed one", []wal.Record{{Topic: "r", Partition: 0, Payload: []byte("d")},
			{Topic: "r", Partition: 0, Key: []byte("k"), Payload: []byte("e")}}, []bool{true, false}},
	} {
		mu.Lock()
		tried = nil
		mu.Unlock()
		ctx, cancel := context.WithTimeout(testCtx(t), leaderRetry+300*time.Millisecond)
		_, err := b.commitReplicated(ctx, top, c.wrecs, c.placed)
		cancel()
		if !errors.Is(err, refusal.ErrNotReady) {
			t.Fatalf("%s refused on its partition: %v, want the refusal after the hold", c.name, err)
		}
		if got := triedNow(); len(got) < 2 || slices.ContainsFunc(got, func(p int) bool { return p != 0 }) {
			t.Errorf("%s: partitions tried %v, want 0 only, tried again", c.name, got)
		}
	}
}

// remoteLed is a broker whose topic "r" has three partitions led by
// other nodes (n2, n3, n2), reached through remote, and that topic as a
// replicated one (commitReplicated's view).
func remoteLed(tb testing.TB, remote Committer) (*Broker, meta.Topic) {
	b := newTestBroker(tb, Config{Remote: remote})
	createTestTopic(tb, b, "r", 3)
	var as []meta.Assignment
	for p, owner := range []string{"n2", "n3", "n2"} {
		as = append(as, meta.Assignment{Topic: "r", Partition: p, Owner: owner})
	}
	if err := b.meta.SetAssignments(context.Background(), as); err != nil {
		tb.Fatal(err)
	}
	top, _ := b.meta.Topic("r")
	top.ReplicationFactor = 3
	return b, top
}

// Through Produce: a keyless record is placed by turn, and moves when its
// partition's leader refuses it before writing; the answer names the
// partition it went to.
func TestKeylessProduceMovesOffARefusingLeader(t *testing.T) {
	remote := committerFunc(func(ctx context.Context, topic string, inc uint64, p int, recs []storage.Record) error {
		if p == 0 {
			return refusal.New(refusal.ErrNotReady, time.Second, "partition 0 is taking over its leadership: retry")
		}
		for i := range recs {
			recs[i].Offset = uint64(i)
		}
		return nil
	})
	n := newTestNode(t, Config{Replication: &fakeEngine{}, Remote: remote})
	reps := []string{"n1", "n2", "n3"}
	tp := meta.Topic{Name: "r", Partitions: 3, ReplicationFactor: 3, RetentionMs: 3600_000, VisibilityTimeoutMs: 30_000,
		MaxInFlight: 100, MaxAckedAhead: 100}
	var as []meta.Assignment
	for p, owner := range []string{"n2", "n3", "n2"} {
		as = append(as, meta.Assignment{Topic: "r", Partition: p, Owner: owner, Replicas: reps, InSync: reps, LeaderEpoch: 1,
			EpochStarts: []meta.EpochStart{{Epoch: 1, Offset: 0}}})
	}
	if err := n.ms.CreateTopic(testCtx(t), tp, as, nil); err != nil {
		t.Fatal(err)
	}
	// The first turn of a node alone in its membership is partition 0.
	acc, err := n.b.ProduceWithID(testCtx(t), "r", ProduceRecord{Payload: []byte("a")})
	if err != nil {
		t.Fatalf("a keyless produce whose first partition refused: %v, want it moved and accepted", err)
	}
	if acc.Partition != 1 {
		t.Errorf("accepted on partition %d, want 1", acc.Partition)
	}
}
