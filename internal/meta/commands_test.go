package meta

import (
	"context"
	"encoding/json"
	"fmt"
	"reflect"
	"slices"
	"testing"
)

func ptr[T any](v T) *T { return &v }

// TestTopicRules runs every refusal through a real single-node Raft store
// and checks the error and that nothing changed (state and versions).
func TestTopicRules(t *testing.T) {
	t.Parallel()
	s := newLeader(t)
	ctx := testCtx(t)
	create := func(name string, att *AttachSpec) error {
		return s.CreateTopic(ctx, plainTopic(name, 2), nil, att)
	}
	mk := func(names ...string) func(t *testing.T) {
		return func(t *testing.T) {
			for _, n := range names {
				must(t, create(n, nil))
			}
		}
	}

	cases := []struct {
		name  string
		setup func(t *testing.T)
		op    func() error
		want  error
	}{
		{"duplicate create", mk("dup"), func() error { return create("dup", nil) }, ErrExists},
		{"create without name", nil, func() error { return create("", nil) }, ErrInvalid},
		{"create with zero partitions", nil, func() error {
			return s.CreateTopic(ctx, plainTopic("p0", 0), nil, nil)
		}, ErrInvalid},
		{"create with children", nil, func() error {
			tp := plainTopic("kids", 1)
			tp.Children = []string{"a"}
			return s.CreateTopic(ctx, tp, nil, nil)
		}, ErrInvalid},
		{"create with link fields but no attach", nil, func() error {
			tp := plainTopic("linked", 1)
			tp.Parent = "x"
			return s.CreateTopic(ctx, tp, nil, nil)
		}, ErrInvalid},
		{"create with assignment out of range", nil, func() error {
			return s.CreateTopic(ctx, plainTopic("oor", 2), []Assignment{{Partition: 2, Owner: "n1"}}, nil)
		}, ErrInvalid},
		{"create with a partition assigned twice", nil, func() error {
			return s.CreateTopic(ctx, plainTopic("twice", 2), []Assignment{{Partition: 1, Owner: "n1"}, {Partition: 1, Owner: "n2"}}, nil)
		}, ErrInvalid},
		{"create+attach: parent missing", nil, func() error { return create("orphan", spec("nope", "e")) }, ErrNotFound},
		{"create+attach: parent is a child", func(t *testing.T) {
			mk("cp-root")(t)
			must(t, create("cp-mid", spec("cp-root", "e1")))
		}, func() error { return create("cp-leaf", spec("cp-mid", "e2")) }, ErrConflict},
		{"create+attach: no epoch", mk("ne-p"), func() error { return create("ne-c", spec("ne-p", "")) }, ErrInvalid},
		{"create+attach: more offsets than parent partitions", mk("off-p"), func() error {
			return create("off-c", &AttachSpec{Parent: "off-p", Epoch: "e", AttachOffsets: []uint64{1, 2, 3}})
		}, ErrInvalid},

		{"update missing", nil, func() error { return s.UpdateTopic(ctx, TopicUpdate{Name: "nope", RetentionMs: ptr[int64](0)}) }, ErrNotFound},
		{"partitions shrink", mk("shrink"), func() error {
			return s.UpdateTopic(ctx, TopicUpdate{Name: "shrink", Partitions: ptr(1)})
		}, ErrConflict},
		{"grow assigns an old partition", mk("grow"), func() error {
			return s.UpdateTopic(ctx, TopicUpdate{Name: "grow", Partitions: ptr(4), Assignments: []Assignment{{Partition: 1, Owner: "n1"}}})
		}, ErrInvalid},
		{"stale compare-and-swap", mk("cas"), func() error {
			return s.UpdateTopic(ctx, TopicUpdate{Name: "cas", IfVersion: 1, RetentionMs: ptr[int64](0)})
		}, ErrConflict},
		{"negative retention", mk("neg"), func() error {
			return s.UpdateTopic(ctx, TopicUpdate{Name: "neg", RetentionMs: ptr[int64](-1)})
		}, ErrInvalid},
		{"schema not JSON", mk("badschema"), func() error {
			return s.UpdateTopic(ctx, TopicUpdate{Name: "badschema", Schema: json.RawMessage(`{`)})
		}, ErrInvalid},

		{"delete missing", nil, func() error { return s.DeleteTopic(ctx, "nope") }, ErrNotFound},

		{"attach: parent missing", mk("pm-c"), func() error { return s.Attach(ctx, "pm-c", *spec("nope", "e")) }, ErrNotFound},
		{"attach: child missing", mk("cm-p"), func() error { return s.Attach(ctx, "nope", *spec("cm-p", "e")) }, ErrNotFound},
		{"attach: to itself", mk("self"), func() error { return s.Attach(ctx, "self", *spec("self", "e")) }, ErrInvalidCombination},
		{"attach: already attached", func(t *testing.T) {
			mk("aa-p1", "aa-p2", "aa-c")(t)
			must(t, s.Attach(ctx, "aa-c", *spec("aa-p1", "e1")))
		}, func() error { return s.Attach(ctx, "aa-c", *spec("aa-p2", "e2")) }, ErrConflict},
		{"attach: same link twice", func(t *testing.T) {
			mk("tw-p", "tw-c")(t)
			must(t, s.Attach(ctx, "tw-c", *spec("tw-p", "e1")))
		}, func() error { return s.Attach(ctx, "tw-c", *spec("tw-p", "e2")) }, ErrConflict},
		{"attach: parent is a child (no chains)", func(t *testing.T) {
			mk("pc-root", "pc-mid", "pc-leaf")(t)
			must(t, s.Attach(ctx, "pc-mid", *spec("pc-root", "e1")))
		}, func() error { return s.Attach(ctx, "pc-leaf", *spec("pc-mid", "e2")) }, ErrConflict},
		{"attach: child has children (no chains)", func(t *testing.T) {
			mk("ch-top", "ch-mid", "ch-leaf")(t)
			must(t, s.Attach(ctx, "ch-leaf", *spec("ch-mid", "e1")))
		}, func() error { return s.Attach(ctx, "ch-mid", *spec("ch-top", "e2")) }, ErrConflict},
		{"attach: 108 children cap", func(t *testing.T) {
			mk("cap-p")(t)
			createMany(t, s, "cap-c", MaxChildren+1)
			for i := range MaxChildren {
				must(t, s.Attach(ctx, fmt.Sprintf("cap-c-%04d", i), *spec("cap-p", "e")))
			}
		}, func() error { return s.Attach(ctx, fmt.Sprintf("cap-c-%04d", MaxChildren), *spec("cap-p", "e")) }, ErrConflict},
		{"attach: delay above parent retention floor", func(t *testing.T) {
			tp := plainTopic("dl-p", 1)
			tp.RetentionMs = 2 * 3_600_000
			must(t, s.CreateTopic(ctx, tp, nil, nil))
			mk("dl-c")(t)
		}, func() error {
			return s.Attach(ctx, "dl-c", AttachSpec{Parent: "dl-p", Epoch: "e", DelayMs: 2 * 3_600_000})
		}, ErrInvalidCombination},
		{"retention below a delay child's floor", func(t *testing.T) {
			mk("rf-p", "rf-c")(t)
			must(t, s.Attach(ctx, "rf-c", AttachSpec{Parent: "rf-p", Epoch: "e", DelayMs: 3_600_000}))
		}, func() error {
			return s.UpdateTopic(ctx, TopicUpdate{Name: "rf-p", RetentionMs: ptr[int64](2*3_600_000 - 1)})
		}, ErrInvalidCombination},

		{"detach: not attached", mk("dn-p", "dn-c"), func() error { return s.Detach(ctx, "dn-p", "dn-c", "") }, ErrNotFound},
		{"detach: parent missing", mk("dpm-c"), func() error { return s.Detach(ctx, "nope", "dpm-c", "") }, ErrNotFound},
		{"detach: stale epoch", func(t *testing.T) {
			mk("de-p", "de-c")(t)
			must(t, s.Attach(ctx, "de-c", *spec("de-p", "new")))
		}, func() error { return s.Detach(ctx, "de-p", "de-c", "old") }, ErrConflict},

		{"assignments: topic missing", nil, func() error {
			return s.SetAssignments(ctx, []Assignment{{Topic: "nope", Partition: 0, Owner: "n1"}})
		}, ErrNotFound},
		{"assignments: partition out of range", mk("as-oor"), func() error {
			return s.SetAssignments(ctx, []Assignment{{Topic: "as-oor", Partition: 2, Owner: "n1"}})
		}, ErrInvalid},
		{"member without id", nil, func() error { return s.UpsertMember(ctx, Member{RaftAddr: "x"}) }, ErrInvalid},
		{"member with unknown state", nil, func() error { return s.UpsertMember(ctx, Member{ID: "m", State: "zombie"}) }, ErrInvalid},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if tc.setup != nil {
				tc.setup(t)
			}
			before, v := dump(t, s.fsm), s.Versions()
			wantErr(t, tc.op(), tc.want)
			if after := dump(t, s.fsm); !reflect.DeepEqual(after, before) {
				t.Fatalf("a refused command changed the state")
			}
			if s.Versions() != v {
				t.Fatalf("a refused command moved versions: %+v → %+v", v, s.Versions())
			}
		})
	}
}

func TestTopicLifecycle(t *testing.T) {
	t.Parallel()
	s := newLeader(t)
	ctx := testCtx(t)
	must(t, s.CreateTopic(ctx, plainTopic("orders", 2), []Assignment{{Partition: 0, Owner: "n1"}, {Partition: 1, Owner: "n2"}}, nil))
	// One-step create + attach.
	must(t, s.CreateTopic(ctx, plainTopic("replica", 2), nil,
		&AttachSpec{Parent: "orders", Epoch: "67953471cc57a32a", AttachOffsets: []uint64{7, 9}, DelayMs: 0}))
	must(t, s.CreateTopic(ctx, plainTopic("audit", 1), nil, nil))
	must(t, s.Attach(ctx, "audit", AttachSpec{Parent: "orders", Epoch: "e2", DelayMs: 60_000}))

	p, _ := s.Topic("orders")
	if !slices.Equal(p.Children, []string{"audit", "replica"}) {
		t.Fatalf("children = %v", p.Children)
	}
	r, _ := s.Topic("replica")
	if r.Parent != "orders" || r.AttachEpoch != "67953471cc57a32a" || !slices.Equal(r.AttachOffsets, []uint64{7, 9}) {
		t.Fatalf("replica link = %+v", r)
	}
	if a, _ := s.Topic("audit"); a.FanoutDelayMs != 60_000 || a.AttachEpoch != "e2" {
		t.Fatalf("audit link = %+v", a)
	}
	if o, ok := s.Owner("orders", 1); !ok || o != "n2" {
		t.Fatalf("owner = %q %v", o, ok)
	}
	if _, ok := s.Owner("replica", 0); ok {
		t.Fatal("unplaced partition has an owner")
	}

	// Grow with placements for the new partitions; settings change.
	must(t, s.UpdateTopic(ctx, TopicUpdate{Name: "orders", Partitions: ptr(3), RetentionMs: ptr[int64](0),
		Schema: json.RawMessage(`{"type":"object"}`), Assignments: []Assignment{{Partition: 2, Owner: "n3"}}}))
	p, _ = s.Topic("orders")
	if p.Partitions != 3 || p.RetentionMs != 0 || string(p.Schema) != `{"type":"object"}` {
		t.Fatalf("after update: %+v", p)
	}
	if as := s.Assignments("orders"); len(as) != 3 || as[2].Owner != "n3" || as[0].Owner != "n1" {
		t.Fatalf("assignments = %+v", as)
	}
	// Compare-and-swap with the current version succeeds.
	must(t, s.UpdateTopic(ctx, TopicUpdate{Name: "orders", IfVersion: p.Version, ClearSchema: true}))
	if p, _ = s.Topic("orders"); p.Schema != nil {
		t.Fatalf("schema not cleared: %s", p.Schema)
	}

	// Detach with the right epoch; the child stays a plain topic.
	must(t, s.Detach(ctx, "orders", "audit", "e2"))
	if a, _ := s.Topic("audit"); a.Parent != "" || a.AttachEpoch != "" || a.FanoutDelayMs != 0 {
		t.Fatalf("audit after detach = %+v", a)
	}
	// Re-attach is a fresh link with a new epoch.
	must(t, s.Attach(ctx, "audit", *spec("orders", "e3")))

	// Deleting a child removes it from its parent.
	must(t, s.DeleteTopic(ctx, "audit"))
	if p, _ = s.Topic("orders"); !slices.Equal(p.Children, []string{"replica"}) {
		t.Fatalf("children after child delete = %v", p.Children)
	}
	// Deleting the parent detaches its children and drops its assignments.
	must(t, s.DeleteTopic(ctx, "orders"))
	if _, ok := s.Topic("orders"); ok {
		t.Fatal("orders still exists")
	}
	if as := s.Assignments("orders"); as != nil {
		t.Fatalf("assignments survived: %+v", as)
	}
	r, _ = s.Topic("replica")
	if r.Parent != "" || r.AttachEpoch != "" || r.AttachOffsets != nil {
		t.Fatalf("replica after parent delete = %+v", r)
	}
	// A name is free again after delete.
	must(t, s.CreateTopic(ctx, plainTopic("orders", 1), nil, nil))
}

// TestRacingCreatesOneWins: validation inside Apply decides races.
func TestRacingCreatesOneWins(t *testing.T) {
	t.Parallel()
	s := newLeader(t)
	ctx := testCtx(t)
	const n = 16
	errs := make(chan error, n)
	for i := range n {
		go func() {
			tp := plainTopic("contended", 1)
			tp.Owner = fmt.Sprint("user", i)
			errs <- s.CreateTopic(ctx, tp, nil, nil)
		}()
	}
	wins := 0
	for range n {
		switch err := <-errs; {
		case err == nil:
			wins++
		case !isOutcome(err):
			t.Fatalf("unexpected error: %v", err)
		default:
			wantErr(t, err, ErrExists)
		}
	}
	if wins != 1 {
		t.Fatalf("%d creates won", wins)
	}
}

func TestVersionsBumpOnlyTheirDomain(t *testing.T) {
	t.Parallel()
	s := newLeader(t)
	ctx := testCtx(t)
	apply := func(op Op, payload any) uint64 {
		t.Helper()
		cmd, err := NewCommand(op, payload)
		must(t, err)
		res, err := s.Apply(ctx, cmd)
		must(t, err)
		return res.Index
	}
	type field = func(v *Versions) *uint64
	var (
		topics      field = func(v *Versions) *uint64 { return &v.Topics }
		assignments field = func(v *Versions) *uint64 { return &v.Assignments }
		members     field = func(v *Versions) *uint64 { return &v.Members }
		heartbeats  field = func(v *Versions) *uint64 { return &v.Heartbeats }
	)
	// expect checks that exactly the listed counters moved, to idx.
	expect := func(step string, before Versions, idx uint64, moved ...field) {
		t.Helper()
		want := before
		for _, f := range moved {
			*f(&want) = idx
		}
		if got := s.Versions(); got != want {
			t.Fatalf("%s: versions = %+v, want %+v", step, got, want)
		}
	}

	v := s.Versions()
	idx := apply(OpCreateTopic, CreateTopicCmd{Topic: plainTopic("t", 2), Assignments: []Assignment{{Partition: 0, Owner: "n1"}}})
	expect("create with placements", v, idx, topics, assignments)

	v = s.Versions()
	idx = apply(OpCreateTopic, CreateTopicCmd{Topic: plainTopic("u", 2)})
	expect("create without placements", v, idx, topics, assignments)

	v = s.Versions()
	idx = apply(OpUpdateTopic, TopicUpdate{Name: "t", RetentionMs: ptr[int64](0)})
	expect("retention change", v, idx, topics)
	if tp, _ := s.Topic("t"); tp.Version != idx {
		t.Fatalf("topic version %d, want %d", tp.Version, idx)
	}

	v = s.Versions()
	idx = apply(OpSetAssignments, SetAssignmentsCmd{Assignments: []Assignment{{Topic: "t", Partition: 1, Owner: "n2"}}})
	expect("set assignments", v, idx, assignments)

	v = s.Versions()
	idx = apply(OpUpsertMember, UpsertMemberCmd{Member: Member{ID: "n1", RaftAddr: "a", LastHeartbeatMs: 1}})
	expect("new member", v, idx, members)
	if s.LatestDomainVersion() != idx {
		t.Fatalf("latest domain version %d, want %d", s.LatestDomainVersion(), idx)
	}

	latest := s.LatestDomainVersion()
	v = s.Versions()
	idx = apply(OpUpsertMember, UpsertMemberCmd{Member: Member{ID: "n1", RaftAddr: "a", LastHeartbeatMs: 2}})
	expect("heartbeat", v, idx, heartbeats)
	v = s.Versions()
	idx = apply(OpUpsertMember, UpsertMemberCmd{Member: Member{ID: "n1", RaftAddr: "a", LastHeartbeatMs: 2, Draining: true}})
	expect("drain flag", v, idx, heartbeats)
	if s.LatestDomainVersion() != latest {
		t.Fatalf("heartbeat/drain moved LatestDomainVersion %d → %d", latest, s.LatestDomainVersion())
	}

	v = s.Versions()
	apply(OpUpsertMember, UpsertMemberCmd{Member: Member{ID: "n1", RaftAddr: "a", LastHeartbeatMs: 2, Draining: true}})
	expect("identical upsert", v, 0)

	v = s.Versions()
	idx = apply(OpUpsertMember, UpsertMemberCmd{Member: Member{ID: "n1", RaftAddr: "a", LastHeartbeatMs: 2, Draining: true, State: MemberDead}})
	expect("marked dead", v, idx, members)

	v = s.Versions()
	idx = apply(OpAttach, AttachCmd{Child: "u", AttachSpec: *spec("t", "e")})
	expect("attach", v, idx, topics)

	v = s.Versions()
	idx = apply(OpDeleteTopic, DeleteTopicCmd{Name: "t"})
	expect("delete", v, idx, topics, assignments)
	if s.LatestDomainVersion() != idx {
		t.Fatalf("latest domain version %d, want %d", s.LatestDomainVersion(), idx)
	}
}

func TestApplyRespectsContext(t *testing.T) {
	t.Parallel()
	s := newLeader(t)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	err := s.CreateTopic(ctx, plainTopic("late", 1), nil, nil)
	if err == nil || isOutcome(err) {
		t.Fatalf("cancelled apply: %v", err)
	}
}
