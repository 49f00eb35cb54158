package meta

import (
	"fmt"
	"testing"

	bolt "go.etcd.io/bbolt"
)

func TestTopicCacheFollowsVersions(t *testing.T) {
	t.Parallel()
	s := newLeader(t)
	ctx := testCtx(t)
	must(t, s.CreateTopic(ctx, plainTopic("orders", 2), nil, nil))

	got, ok := s.Topic("orders")
	if !ok || got.RetentionMs != plainTopic("", 0).RetentionMs {
		t.Fatalf("topic = %+v %v", got, ok)
	}
	c1 := s.fsm.cache()
	if s.fsm.cache() != c1 {
		t.Fatal("cache rebuilt although nothing changed")
	}

	must(t, s.UpdateTopic(ctx, TopicUpdate{Name: "orders", RetentionMs: ptr[int64](3_600_000)}))
	if got, _ = s.Topic("orders"); got.RetentionMs != 3_600_000 {
		t.Fatalf("stale topic after update: retention %d", got.RetentionMs)
	}
	if all := s.Topics(); len(all) != 1 || all[0].RetentionMs != 3_600_000 {
		t.Fatalf("stale Topics(): %+v", all)
	}
	c2 := s.fsm.cache()
	if c2 == c1 {
		t.Fatal("cache not replaced after a topics change")
	}

	must(t, s.SetAssignments(ctx, []Assignment{{Topic: "orders", Partition: 1, Owner: "n7"}}))
	if o, ok := s.Owner("orders", 1); !ok || o != "n7" {
		t.Fatalf("stale owner after SetAssignments: %q %v", o, ok)
	}
	c3 := s.fsm.cache()

	// A heartbeat moves no cached domain: the cache survives it.
	must(t, s.UpsertMember(ctx, Member{ID: "n1", LastHeartbeatMs: 1}))
	must(t, s.UpsertMember(ctx, Member{ID: "n1", LastHeartbeatMs: 2}))
	if s.fsm.cache() != c3 {
		t.Fatal("member changes invalidated the topic cache")
	}

	must(t, s.DeleteTopic(ctx, "orders"))
	if _, ok := s.Topic("orders"); ok {
		t.Fatal("deleted topic still cached")
	}
	if _, ok := s.Owner("orders", 1); ok {
		t.Fatal("deleted topic's owner still cached")
	}
}

// BenchmarkTopicLookup is the produce hot path: the topic record when no
// version moved (one atomic load and a map lookup, no bbolt read).
func BenchmarkTopicLookup(b *testing.B) {
	s := openLeader(b, testOptions(b.TempDir(), "127.0.0.1:0"))
	const n = 1000
	createMany(b, s, "bench", n)
	names := make([]string, n)
	for i := range names {
		names[i] = fmt.Sprintf("bench-%04d", i)
	}
	if _, ok := s.Topic(names[0]); !ok {
		b.Fatal("missing topic")
	}
	b.ReportAllocs()
	b.ResetTimer()
	i := 0
	for b.Loop() {
		if _, ok := s.Topic(names[i%n]); !ok {
			b.Fatal("missing topic")
		}
		i++
	}
}

// BenchmarkTopicLookupUncached is the same read straight from bbolt, for
// comparison: what the cache saves per produce.
func BenchmarkTopicLookupUncached(b *testing.B) {
	s := openLeader(b, testOptions(b.TempDir(), "127.0.0.1:0"))
	createMany(b, s, "bench", 1000)
	b.ReportAllocs()
	b.ResetTimer()
	i := 0
	for b.Loop() {
		name := fmt.Sprintf("bench-%04d", i%1000)
		_ = s.fsm.view(func(tx *bolt.Tx) error {
			_, _, err := readTopic(tx, name)
			return err
		})
		i++
	}
}
