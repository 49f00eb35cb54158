package meta

import (
	"fmt"
	"reflect"
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
	if a, ok := s.Placement("orders", 1); !ok || a.Owner != "n7" || a.Partition != 1 {
		t.Fatalf("stale placement after SetAssignments: %+v %v", a, ok)
	}
	if _, ok := s.Placement("orders", 9); ok {
		t.Fatal("a placement of a partition the topic does not have")
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
	if _, ok := s.Placement("orders", 1); ok {
		t.Fatal("deleted topic's placement still cached")
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

// The cache a change patches (only the touched topics re-read) must equal
// a cache built from scratch, after every kind of command.
func TestPatchedCacheEqualsRebuilt(t *testing.T) {
	t.Parallel()
	s := newLeader(t)
	ctx := testCtx(t)
	check := func(what string) {
		t.Helper()
		s.Topics() // make sure a cache is installed, so the next change patches it
		got := s.fsm.cache()
		want, err := s.fsm.buildCache()
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(got.sorted, want.sorted) || !reflect.DeepEqual(got.assign, want.assign) ||
			!reflect.DeepEqual(got.index, want.index) || got.vTop != want.vTop || got.vAsg != want.vAsg {
			t.Fatalf("after %s the patched cache differs from a rebuilt one:\n%+v\n%+v", what, got, want)
		}
	}
	check("nothing")
	for _, name := range []string{"m", "c", "x", "a", "q"} {
		must(t, s.CreateTopic(ctx, plainTopic(name, 2), []Assignment{{Topic: name, Partition: 0, Owner: "n1"}}, nil))
		check("create " + name)
	}
	must(t, s.CreateTopic(ctx, plainTopic("c2", 1), nil, spec("c", "e1")))
	check("create attached")
	r := int64(7200000)
	must(t, s.UpdateTopic(ctx, TopicUpdate{Name: "x", RetentionMs: &r}))
	check("update")
	must(t, s.SetAssignments(ctx, []Assignment{{Topic: "a", Partition: 1, Owner: "n2"}}))
	check("assignments")
	must(t, s.SetTarget(ctx, "a", 1, "n2", "n3"))
	check("target")
	must(t, s.Detach(ctx, "c", "c2", ""))
	check("detach")
	must(t, s.DeleteTopic(ctx, "m"))
	check("delete")
	must(t, s.DeleteTopic(ctx, "a"))
	must(t, s.CreateTopic(ctx, plainTopic("b", 3), nil, nil))
	check("delete and create")
	must(t, s.UpsertMember(ctx, Member{ID: "n9", RaftAddr: "h:1"}))
	check("a member change")
}

// BenchmarkCreateTopics creates topics one after another, each followed by
// a lookup (as the broker's create path does): the cost of one create with
// b.N topics already present. With the cache rebuilt on every change this
// grew linearly with the topic count; patched, it stays flat.
func BenchmarkCreateTopics(b *testing.B) {
	s := newLeader(b)
	ctx := testCtx(b)
	b.ResetTimer()
	for i := range b.N {
		name := fmt.Sprintf("t-%06d", i)
		if err := s.CreateTopic(ctx, plainTopic(name, 12), nil, nil); err != nil {
			b.Fatal(err)
		}
		if _, ok := s.Topic(name); !ok {
			b.Fatal("not found")
		}
	}
}
