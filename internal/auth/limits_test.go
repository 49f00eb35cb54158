package auth

import (
	"context"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/narad-io/narad/internal/apierr"
	"github.com/narad-io/narad/internal/meta"
)

// limitStore is the fake users domain as user management writes it.
type limitStore struct{ *fakeUsers }

func (s limitStore) Users() []meta.User { return nil }
func (s limitStore) CreateUser(context.Context, meta.User) error {
	return nil
}
func (s limitStore) SetGrants(context.Context, string, []meta.Grant) error { return nil }
func (s limitStore) SetPassword(context.Context, string, []byte) error     { return nil }
func (s limitStore) DeleteUser(context.Context, string) error              { return nil }
func (s limitStore) SetLimits(_ context.Context, name string, l *meta.Limits) error {
	s.change(name, func(u *meta.User) { u.Limits = l })
	return nil
}

func n64(v int64) *int64 { return &v }

// A patch merges field by field over the user's own limits; a view shows
// what is in force, naming the limits that are the node's defaults; the
// authenticated principal carries the new limits at its next request
// (no restart); a bad value is 400 naming the field and changes nothing.
func TestPatchLimits(t *testing.T) {
	users := &fakeUsers{byName: map[string]meta.User{}}
	users.put(t, "root", "root-password", RootGrants...)
	users.put(t, "alice", "alice-password")
	m := NewManager(limitStore{users}, func(err error) error { return err },
		meta.Rates{ProduceRecordsPerS: 100, ConsumeRequestsPerS: 10})
	a := NewAuthenticator(users, nil)
	a.sleep = func(time.Duration) {}
	root, _ := a.Authenticate("root", "root-password", "src")
	ctx := context.Background()

	if p, _ := a.Authenticate("alice", "alice-password", "src"); p.Limits != nil {
		t.Fatalf("alice starts with limits %+v", p.Limits)
	}
	v, err := m.PatchLimits(ctx, root, "alice", LimitsPatch{Set: map[string]*int64{meta.LimitProduceRecords: n64(5)}})
	if err != nil {
		t.Fatal(err)
	}
	want := meta.Rates{ProduceRecordsPerS: 5, ConsumeRequestsPerS: 10}
	if v.Limits != want || !slices.Equal(v.LimitsFromDefaults, []string{meta.LimitProduceBytes, meta.LimitConsumeRequests}) {
		t.Fatalf("view %+v %v", v.Limits, v.LimitsFromDefaults)
	}
	if p, _ := a.Authenticate("alice", "alice-password", "src"); p.Limits == nil || *p.Limits.ProduceRecordsPerS != 5 {
		t.Fatalf("the next request's principal has limits %+v", p.Limits)
	}
	// Another field joins it; 0 exempts from the default.
	v, _ = m.PatchLimits(ctx, root, "alice", LimitsPatch{Set: map[string]*int64{meta.LimitConsumeRequests: n64(0)}})
	if want := (meta.Rates{ProduceRecordsPerS: 5}); v.Limits != want {
		t.Fatalf("after a second patch %+v", v.Limits)
	}
	// nil drops one back to the default; Reset drops them all.
	v, _ = m.PatchLimits(ctx, root, "alice", LimitsPatch{Set: map[string]*int64{meta.LimitProduceRecords: nil}})
	if want := (meta.Rates{ProduceRecordsPerS: 100}); v.Limits != want {
		t.Fatalf("after dropping one %+v", v.Limits)
	}
	v, _ = m.PatchLimits(ctx, root, "alice", LimitsPatch{Reset: true})
	if want := (meta.Rates{ProduceRecordsPerS: 100, ConsumeRequestsPerS: 10}); v.Limits != want || len(v.LimitsFromDefaults) != 3 {
		t.Fatalf("after a reset %+v %v", v.Limits, v.LimitsFromDefaults)
	}
	if u, _ := users.User("alice"); u.Limits != nil {
		t.Fatalf("a reset stored %+v, want no limits of its own", u.Limits)
	}

	before, _ := users.User("alice")
	for _, bad := range []struct {
		patch LimitsPatch
		field string
	}{
		{LimitsPatch{Set: map[string]*int64{meta.LimitProduceBytes: n64(-1)}}, "limits.produce_bytes_per_s"},
		{LimitsPatch{Set: map[string]*int64{meta.LimitConsumeRequests: n64(1 << 40)}}, "limits.consume_requests_per_s"},
		{LimitsPatch{Set: map[string]*int64{"produce_per_s": n64(1)}}, "limits.produce_per_s"},
	} {
		_, err := m.PatchLimits(ctx, root, "alice", bad.patch)
		if apierr.Status(err) != http.StatusBadRequest || !strings.Contains(err.Error(), bad.field) {
			t.Errorf("%+v: %v, want 400 naming %s", bad.patch, err, bad.field)
		}
	}
	if after, _ := users.User("alice"); after.Version != before.Version {
		t.Fatal("a refused patch changed the record")
	}
	// Nobody raises its own limits without managing itself.
	alice, _ := a.Authenticate("alice", "alice-password", "src")
	if _, err := m.PatchLimits(ctx, alice, "alice", LimitsPatch{Reset: true}); apierr.Status(err) != http.StatusForbidden {
		t.Fatalf("alice patching her own limits: %v, want 403", err)
	}
}

func TestCreateRefusesBadLimits(t *testing.T) {
	users := &fakeUsers{byName: map[string]meta.User{}}
	m := NewManager(limitStore{users}, func(err error) error { return err }, meta.Rates{})
	_, err := m.Create(context.Background(), Principal{Name: "root", Grants: RootGrants}, "bob", "bob-password", nil,
		&meta.Limits{ProduceRecordsPerS: n64(-5)})
	if apierr.Status(err) != http.StatusBadRequest || !strings.Contains(err.Error(), "limits.produce_records_per_s") {
		t.Fatalf("create with a negative limit: %v", err)
	}
}
