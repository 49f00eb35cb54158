package hosted

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/narad-io/narad/internal/replica"
)

// stuckFollower is a follower whose Unreachable answers what it holds.
type stuckFollower struct {
	u  replica.Unreachable
	ok bool
}

func (f stuckFollower) Run(ctx context.Context) error { <-ctx.Done(); return ctx.Err() }
func (f stuckFollower) Update(replica.View)           {}
func (f stuckFollower) Close() error                  { return nil }
func (f stuckFollower) Unreachable() (replica.Unreachable, bool) {
	return f.u, f.ok
}

// TestRolesListUnreachableLeaders: the list a heartbeat carries names
// every follower here whose leader it has not reached — and no follower
// that reaches its leader, nor a leader role.
func TestRolesListUnreachableLeaders(t *testing.T) {
	since := time.Unix(100, 0)
	r := &Roles{running: map[Key]*Role{
		{Topic: "b", Partition: 1}: {follower: stuckFollower{u: replica.Unreachable{Leader: "n1", Epoch: 3, Since: since}, ok: true}},
		{Topic: "a", Partition: 0}: {follower: stuckFollower{u: replica.Unreachable{Leader: "n2", Epoch: 1, Since: since}, ok: true}},
		{Topic: "a", Partition: 2}: {follower: stuckFollower{}},
		{Topic: "c", Partition: 0}: {},
	}}
	want := []UnreachableLeader{{Topic: "a", Partition: 0, Leader: "n2", Epoch: 1, Since: since}, {Topic: "b", Partition: 1, Leader: "n1", Epoch: 3, Since: since}}
	if got := r.Unreachable(); !slices.Equal(got, want) {
		t.Fatalf("Unreachable() = %+v, want %+v", got, want)
	}
}
