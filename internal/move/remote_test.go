package move

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/narad-io/narad/internal/refusal"
	"github.com/narad-io/narad/internal/storage"
)

type fakePool struct {
	addr  string
	n     int64
	flips []string
}

func (f *fakePool) MoveFreeze(_ context.Context, addr, _ string, _ int, _ time.Duration, _ string) (uint64, error) {
	f.addr = addr
	return 7, nil
}

func (f *fakePool) MoveFiles(_ context.Context, addr, _ string, _ int) ([]storage.PartitionFile, uint64, error) {
	f.addr = addr
	return nil, 7, nil
}

func (f *fakePool) MoveRead(_ context.Context, addr, _ string, _ int, _ string, _, n int64) ([]byte, error) {
	f.addr, f.n = addr, n
	return make([]byte, n), nil
}

func (f *fakePool) Flip(_ context.Context, addr, _ string, _ int, _, _ string) error {
	f.flips = append(f.flips, addr)
	return nil
}

type fakeAddrs map[string]string

func (a fakeAddrs) RPCAddrOf(id string) (string, bool) { s, ok := a[id]; return s, ok }
func (a fakeAddrs) LeaderRPC() string                  { return a["leader"] }

type notLeader struct{ Meta }

func (notLeader) IsLeader() bool { return false }

// NodeRemote calls the node by its RPC address, asks no more than node
// RPC answers in one read, and sends the flip to the leader.
func TestNodeRemote(t *testing.T) {
	p := newPair(t)
	pool := &fakePool{}
	addrs := fakeAddrs{"src": "10.0.0.1:7944", "leader": "10.0.0.9:7944"}
	r := NewNodeRemote(notLeader{p.ms}, pool, addrs, 1024)
	ctx := p.ctx()
	if _, err := r.MoveRead(ctx, "src", "orders", 0, "hwm", 0, 4096); err != nil || pool.n != 1024 || pool.addr != "10.0.0.1:7944" {
		t.Fatalf("MoveRead asked %d bytes of %s (%v), want 1024 of the source", pool.n, pool.addr, err)
	}
	if _, err := r.MoveFreeze(ctx, "gone", "orders", 0, time.Second, "A"); !errors.Is(err, refusal.ErrUnavailable) {
		t.Fatalf("a node with no known address: %v, want %s", err, refusal.ErrUnavailable)
	}
	if err := r.Flip(ctx, "orders", 0, "src", "dst"); err != nil || len(pool.flips) != 1 || pool.flips[0] != "10.0.0.9:7944" {
		t.Fatalf("Flip went to %v (%v), want the leader", pool.flips, err)
	}
	// On the leader, the flip is proposed here.
	p.target()
	leader := NewNodeRemote(p.ms, pool, addrs, 1024)
	if err := leader.Flip(ctx, "orders", 0, "src", "dst"); err != nil || len(pool.flips) != 1 {
		t.Fatalf("Flip on the leader: %v (rpc flips %v)", err, pool.flips)
	}
	if a := p.ms.Assignments("orders")[0]; a.Owner != "dst" {
		t.Fatalf("after the leader's flip: %+v", a)
	}
}
