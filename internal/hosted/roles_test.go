package hosted

import (
	"context"
	"errors"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/narad-io/narad/internal/meta"
	"github.com/narad-io/narad/internal/meta/metatest"
	"github.com/narad-io/narad/internal/metrics"
	"github.com/narad-io/narad/internal/refusal"
	"github.com/narad-io/narad/internal/replica"
)

// Every field of a replica.View either starts a new role (roleChanged)
// or is passed to the running one (sameView false): a field added to the
// View and left out of both would never reach a running role — as
// InSyncVersion once did not, and a leader proposed on a stale version
// forever. The partition's key (topic, partition) picks the role itself.
func TestEveryViewFieldReachesTheRole(t *testing.T) {
	base := replica.View{Topic: "t", Incarnation: 1, Partition: 0, Leader: "n1", Epoch: 2, Replicas: []string{"n1", "n2"},
		InSync: []string{"n1", "n2"}, EpochStarts: []meta.EpochStart{{Epoch: 2, Offset: 5}}, InSyncVersion: 3}
	typ := reflect.TypeOf(base)
	for i := range typ.NumField() {
		f := typ.Field(i)
		if f.Name == "Topic" || f.Name == "Partition" {
			continue
		}
		v := base
		v.Replicas, v.InSync, v.EpochStarts = slices.Clone(base.Replicas), slices.Clone(base.InSync), slices.Clone(base.EpochStarts)
		fv := reflect.ValueOf(&v).Elem().Field(i)
		switch fv.Kind() {
		case reflect.String:
			fv.SetString(fv.String() + "x")
		case reflect.Uint64:
			fv.SetUint(fv.Uint() + 1)
		case reflect.Int:
			fv.SetInt(fv.Int() + 1)
		case reflect.Slice:
			fv.Set(reflect.Append(fv, reflect.New(fv.Type().Elem()).Elem()))
		default:
			t.Fatalf("field %s of kind %s: teach this test to change it", f.Name, fv.Kind())
		}
		h := &Role{view: base, leader: nil}
		if !roleChanged(h, v, "n2") && sameView(base, v) {
			t.Errorf("a change of View.%s reaches neither a new role nor the running one", f.Name)
		}
	}
}

// endedLeader is a role's Leader whose leadership ended: a
// replica.Leader after Close, or after a view of a later epoch.
type endedLeader struct{ ReplicaLeader }

func (endedLeader) Writable() error { return replica.ErrDeposed }

// A commit that meets a role whose Leader ended is refused not_ready,
// before anything is written (a forwarding node holds it for the next
// leader), and waits for the takeover (AwaitLeaderRole) only while the
// metastore names this node the partition's leader: the reconcile is
// replacing the Leader by the next epoch's (a restarted node renews its
// epoch). Deposed for another node, it is refused at once. The role is
// left as it is, with no reconcile running, so each answer is
// leaderRole's own.
func TestEndedLeaderWaitsOnlyWhileThisNodeLeads(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	ms := metatest.Leader(t, t.TempDir(), "n1")
	reps := []string{"n1", "n2", "n3"}
	tp := meta.Topic{Name: "r", Partitions: 1, ReplicationFactor: 3, RetentionMs: 3600_000, VisibilityTimeoutMs: 30_000,
		MaxInFlight: 100, MaxAckedAhead: 100}
	placed := func(owner string, epoch uint64, inSync []string) meta.Assignment {
		return meta.Assignment{Topic: tp.Name, Partition: 0, Owner: owner, Replicas: reps, InSync: inSync, LeaderEpoch: epoch,
			EpochStarts: []meta.EpochStart{{Epoch: epoch, Offset: 0}}}
	}
	if err := ms.CreateTopic(ctx, tp, []meta.Assignment{placed("n1", 2, reps)}, nil); err != nil {
		t.Fatal(err)
	}
	r := NewRoles(RolesConfig{NodeID: "n1"}, ms, metrics.New(), nil, ctx, func(string) {})
	r.running = map[Key]*Role{{Topic: tp.Name, Partition: 0}: {leader: endedLeader{}}}

	if _, takingOver, err := r.leaderRole(tp, 0); !takingOver || !errors.Is(err, refusal.ErrNotReady) {
		t.Fatalf("ended Leader, this node named the leader: taking over %v, %v; want a takeover to wait for", takingOver, err)
	}
	if err := ms.SetAssignments(ctx, []meta.Assignment{placed("n2", 3, []string{"n2", "n3"})}); err != nil {
		t.Fatal(err)
	}
	if _, takingOver, err := r.leaderRole(tp, 0); takingOver || !errors.Is(err, refusal.ErrNotReady) {
		t.Fatalf("ended Leader, another node named the leader: taking over %v, %v; want refused at once", takingOver, err)
	}
}

// quorumLeader is a role's Leader whose wait for its quorum ends in err.
type quorumLeader struct {
	ReplicaLeader
	err error
}

func (q quorumLeader) WaitCommitted(context.Context, uint64) error { return q.err }

// A commit written under a leadership that ended, or was not ready,
// before its copies confirmed it is refused in words that say the
// records may be stored — the words the client is shown, which are the
// refusal's own (package apierr), not a wrapping error's — and never as
// not_ready, which a forwarding node would send again.
func TestQuorumRefusalSaysTheRecordsMayBeStored(t *testing.T) {
	r := NewRoles(RolesConfig{NodeID: "n1", ReplicaCommitWait: time.Minute}, nil, metrics.New(), nil, context.Background(), func(string) {})
	for _, c := range []struct {
		err  error
		kind refusal.Kind
	}{
		{replica.ErrDeposed, refusal.ErrNotLeader},
		{replica.ErrStaleEpoch, refusal.ErrStaleEpoch},
		{replica.ErrNotReady, refusal.ErrUnavailable},
	} {
		err := r.AwaitQuorum(context.Background(), "r", 0, &Role{leader: quorumLeader{err: c.err}}, 1)
		ref, ok := refusal.As(err)
		if !ok || ref.Kind != c.kind || !strings.Contains(ref.Message, "may be stored") {
			t.Errorf("quorum wait ended by %v: %v (%T); want a %s refusal whose sentence says the records may be stored", c.err, err, err, c.kind)
		}
	}
}
