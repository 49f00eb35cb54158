package meta

import (
	"testing"
)

// A topic's incarnation is the log index of its create, whatever the
// command carried; it survives updates and tells a re-created topic of the
// same name from the deleted one.
func TestIncarnationIsSetAtCreateAndNewOnRecreate(t *testing.T) {
	t.Parallel()
	s := newLeader(t)
	ctx := testCtx(t)
	forged := plainTopic("orders", 1)
	forged.Incarnation = 1 // a command cannot choose it
	must(t, s.CreateTopic(ctx, forged, nil, nil))
	first, _ := s.Topic("orders")
	if first.Incarnation == 0 || first.Incarnation == 1 || first.Incarnation != first.Version {
		t.Fatalf("incarnation %d (version %d): want the create's log index", first.Incarnation, first.Version)
	}
	ret := int64(7_200_000)
	must(t, s.UpdateTopic(ctx, TopicUpdate{Name: "orders", RetentionMs: &ret}))
	if t2, _ := s.Topic("orders"); t2.Incarnation != first.Incarnation || t2.Version == first.Version {
		t.Fatalf("after an update: incarnation %d version %d, want incarnation %d kept", t2.Incarnation, t2.Version, first.Incarnation)
	}
	must(t, s.DeleteTopic(ctx, "orders"))
	must(t, s.CreateTopic(ctx, plainTopic("orders", 1), nil, nil))
	second, _ := s.Topic("orders")
	if second.Incarnation <= first.Incarnation {
		t.Fatalf("re-created topic has incarnation %d, the deleted one had %d: want a later one", second.Incarnation, first.Incarnation)
	}
	if inc, ok := s.CurrentIncarnation("orders"); !ok || inc != second.Incarnation {
		t.Fatalf("CurrentIncarnation(orders) = %d %v, want %d true", inc, ok, second.Incarnation)
	}
	if inc, ok := s.CurrentIncarnation("missing"); ok || inc != 0 {
		t.Fatalf("CurrentIncarnation(missing) = %d %v, want 0 false", inc, ok)
	}

	for _, tc := range []struct {
		name string
		inc  uint64
		gone bool
	}{
		{"orders", first.Incarnation, true},
		{"orders", second.Incarnation, false},
		{"orders", 0, false}, // unknown incarnation: only a missing topic is gone
		{"missing", first.Incarnation, true},
		{"missing", 0, true},
	} {
		gone, err := s.ConfirmIncarnationGone(ctx, tc.name, tc.inc)
		if err != nil || gone != tc.gone {
			t.Errorf("ConfirmIncarnationGone(%q, %d) = %v %v, want %v", tc.name, tc.inc, gone, err, tc.gone)
		}
	}
}
