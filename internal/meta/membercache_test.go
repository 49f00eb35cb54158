package meta

import "testing"

// Member answers from a cache that follows both member counters: a
// routing change (Members) and a heartbeat or drain flag alone
// (Heartbeats) are each seen at once, and nothing else rebuilds it.
func TestMemberCacheFollowsVersions(t *testing.T) {
	t.Parallel()
	s := newLeader(t)
	ctx := testCtx(t)
	must(t, s.UpsertMember(ctx, Member{ID: "n1", RPCAddr: "a:1", LastHeartbeatMs: 1}))
	if m, ok := s.Member("n1"); !ok || m.RPCAddr != "a:1" {
		t.Fatalf("member = %+v %v", m, ok)
	}
	c1 := s.fsm.memberCache.Load()
	if _, ok := s.Member("n2"); ok || s.fsm.memberCache.Load() != c1 {
		t.Fatal("a lookup rebuilt the cache although nothing changed")
	}
	must(t, s.CreateTopic(ctx, plainTopic("orders", 1), nil, nil))
	s.Member("n1")
	if s.fsm.memberCache.Load() != c1 {
		t.Fatal("a topic change rebuilt the member cache")
	}

	must(t, s.UpsertMember(ctx, Member{ID: "n1", RPCAddr: "a:1", LastHeartbeatMs: 2})) // Heartbeats only
	if m, _ := s.Member("n1"); m.LastHeartbeatMs != 2 {
		t.Fatalf("stale heartbeat: %+v", m)
	}
	must(t, s.UpsertMember(ctx, Member{ID: "n1", RPCAddr: "b:2", LastHeartbeatMs: 2, State: MemberDead})) // Members
	if m, _ := s.Member("n1"); m.RPCAddr != "b:2" || m.State != MemberDead {
		t.Fatalf("stale routing fields: %+v", m)
	}
	must(t, s.UpsertMember(ctx, Member{ID: "n2", RPCAddr: "c:3"}))
	if m, ok := s.Member("n2"); !ok || m.RPCAddr != "c:3" {
		t.Fatalf("new member not seen: %+v %v", m, ok)
	}
}

// BenchmarkMemberLookup is produce dispatch's per-destination question
// (is the owner alive, where is it): a map lookup while nothing changes,
// instead of a bbolt read transaction and a JSON decode.
func BenchmarkMemberLookup(b *testing.B) {
	s := newLeader(b)
	must(b, s.UpsertMember(testCtx(b), Member{ID: "n1", RaftAddr: "127.0.0.1:1", RPCAddr: "127.0.0.1:2", HTTPAddr: "127.0.0.1:3"}))
	b.ReportAllocs()
	for b.Loop() {
		if _, ok := s.Member("n1"); !ok {
			b.Fatal("member missing")
		}
	}
}
