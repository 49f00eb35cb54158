package server

import (
	"testing"

	"github.com/narad-io/narad/internal/meta"
	"github.com/narad-io/narad/internal/metrics"
)

// fakePlacements hands replicationCounts the records a metastore replica
// would hold.
type fakePlacements struct {
	topics  []meta.Topic
	assign  map[string][]meta.Assignment
	members []meta.Member
}

func (f fakePlacements) Topics() []meta.Topic                       { return f.topics }
func (f fakePlacements) Assignments(topic string) []meta.Assignment { return f.assign[topic] }
func (f fakePlacements) Members() []meta.Member                     { return f.members }

// Each replicated partition lands in exactly one state, by the rule of
// that state; single-copy partitions and remote topics are not counted.
func TestReplicationCountsByState(t *testing.T) {
	three := []string{"n1", "n2", "n3"}
	members := []meta.Member{{ID: "n1", State: meta.MemberAlive}, {ID: "n2", State: meta.MemberAlive},
		{ID: "n3", State: meta.MemberAlive}, {ID: "n4", State: meta.MemberDead}}
	inSync := metrics.ReplicationCounts{InSync: 1}
	under := metrics.ReplicationCounts{UnderReplicated: 1}
	leaderless := metrics.ReplicationCounts{WithoutLeader: 1}
	for _, c := range []struct {
		name string
		a    meta.Assignment
		want metrics.ReplicationCounts
	}{
		{"every replica in sync", meta.Assignment{Owner: "n1", Replicas: three, InSync: three}, inSync},
		{"a follower out of sync", meta.Assignment{Owner: "n1", Replicas: three, InSync: []string{"n1", "n2"}}, under},
		{"a follower in sync on a dead member", meta.Assignment{Owner: "n1", Replicas: []string{"n1", "n4"}, InSync: []string{"n1", "n4"}}, under},
		{"a copy re-created: one more replica, catching up", meta.Assignment{Owner: "n1", Replicas: []string{"n1", "n2", "n4", "n3"},
			InSync: []string{"n1", "n2"}, Leaving: "n4"}, under},
		{"no leader named", meta.Assignment{Replicas: three, InSync: three}, leaderless},
		{"leader dead", meta.Assignment{Owner: "n4", Replicas: []string{"n4", "n1", "n2"}, InSync: []string{"n4", "n1", "n2"}}, leaderless},
		{"leader's disk replaced", meta.Assignment{Owner: "n2", Replicas: three, InSync: []string{"n1", "n3"}}, leaderless},
		{"single copy", meta.Assignment{Owner: "n1", Replicas: []string{"n1"}, InSync: []string{"n1"}}, metrics.ReplicationCounts{}},
	} {
		f := fakePlacements{topics: []meta.Topic{{Name: "orders"}}, assign: map[string][]meta.Assignment{"orders": {c.a}}, members: members}
		if got := replicationCounts(f)(); got != c.want {
			t.Errorf("%s: counts %+v, want %+v", c.name, got, c.want)
		}
	}

	// A remote topic's record is a link, not partitions of this cluster.
	remote := fakePlacements{topics: []meta.Topic{{Name: "linked", Remote: &meta.RemoteTarget{URL: "https://other.example", Topic: "t"}}},
		assign:  map[string][]meta.Assignment{"linked": {{Replicas: three, InSync: []string{"n1"}}}},
		members: members}
	if got := replicationCounts(remote)(); got != (metrics.ReplicationCounts{}) {
		t.Errorf("a remote topic counted: %+v", got)
	}
}
