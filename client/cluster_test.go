package client

import (
	"errors"
	"reflect"
	"testing"
)

const memberN3 = `{"id":"n3","raft_addr":"10.0.0.3:7943","rpc_addr":"10.0.0.3:7944","http_addr":"10.0.0.3:7942","state":"alive","draining":true,"voter":true,"leader":false,"partitions":4,"last_heartbeat_ms":1796004226123}`

var wantN3 = Member{ID: "n3", RaftAddr: "10.0.0.3:7943", RPCAddr: "10.0.0.3:7944", HTTPAddr: "10.0.0.3:7942",
	State: MemberAlive, Draining: true, Voter: true, Partitions: 4, LastHeartbeatMs: 1796004226123}

func TestMembers(t *testing.T) {
	c, f := newFake(t, reply{status: 200, body: `{"members":[` +
		`{"id":"n1","raft_addr":"10.0.0.1:7943","rpc_addr":"10.0.0.1:7944","http_addr":"10.0.0.1:7942","state":"alive","draining":false,"voter":true,"leader":true,"partitions":12,"last_heartbeat_ms":1796004226123},` +
		`{"id":"n2","raft_addr":"","rpc_addr":"","http_addr":"","state":"dead","draining":false,"voter":false,"leader":false,"partitions":0,"last_heartbeat_ms":0}]}`})
	got, err := c.Members(ctx)
	if err != nil {
		t.Fatal(err)
	}
	f.expect(seen{Method: "GET", Path: "/v1/cluster/members"})
	want := []Member{
		{ID: "n1", RaftAddr: "10.0.0.1:7943", RPCAddr: "10.0.0.1:7944", HTTPAddr: "10.0.0.1:7942",
			State: MemberAlive, Voter: true, Leader: true, Partitions: 12, LastHeartbeatMs: 1796004226123},
		{ID: "n2", State: MemberDead},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("decoded %+v, want %+v", got, want)
	}
}

func TestMoves(t *testing.T) {
	c, f := newFake(t,
		reply{status: 200, body: `{"moves":[{"topic":"orders","partition":3,"from":"n1","to":"n4"}]}`},
		reply{status: 200, body: `{"moves":[]}`},
	)
	got, err := c.Moves(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if want := []Move{{Topic: "orders", Partition: 3, From: "n1", To: "n4"}}; !reflect.DeepEqual(got, want) {
		t.Errorf("decoded %+v, want %+v", got, want)
	}
	if got, err := c.Moves(ctx); err != nil || len(got) != 0 {
		t.Errorf("no moves: %+v %v", got, err)
	}
	f.expect(seen{Method: "GET", Path: "/v1/cluster/moves"}, seen{Method: "GET", Path: "/v1/cluster/moves"})
}

func TestDecommissionAndCancel(t *testing.T) {
	c, f := newFake(t, reply{status: 200, body: memberN3})
	m, err := c.Decommission(ctx, "n3")
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(m, wantN3) {
		t.Errorf("decommission decoded %+v, want %+v", m, wantN3)
	}
	m, err = c.CancelDecommission(ctx, "a/b c")
	if err != nil || !reflect.DeepEqual(m, wantN3) {
		t.Errorf("cancel: %+v %v", m, err)
	}
	f.expect(
		seen{Method: "POST", Path: "/v1/cluster/members/n3/decommission"},
		seen{Method: "DELETE", Path: "/v1/cluster/members/a%2Fb%20c/decommission"},
	)
}

func TestClusterErrorsAreAPIErrors(t *testing.T) {
	c, _ := newFake(t, reply{status: 409, body: `{"error":"only 3 voters"}`})
	calls := map[string]func() error{
		"Members":            func() error { _, err := c.Members(ctx); return err },
		"Moves":              func() error { _, err := c.Moves(ctx); return err },
		"Decommission":       func() error { _, err := c.Decommission(ctx, "n3"); return err },
		"CancelDecommission": func() error { _, err := c.CancelDecommission(ctx, "n3"); return err },
	}
	for name, call := range calls {
		var apiErr *APIError
		if err := call(); !errors.As(err, &apiErr) || apiErr.Status != 409 || apiErr.Message != "only 3 voters" {
			t.Errorf("%s: got %#v", name, err)
		}
	}
}

func TestEmptyMemberIDsNeverReachTheServer(t *testing.T) {
	c, f := newFake(t)
	if _, err := c.Decommission(ctx, ""); !errors.Is(err, errEmptyMember) {
		t.Errorf("Decommission: %v", err)
	}
	if _, err := c.CancelDecommission(ctx, ""); !errors.Is(err, errEmptyMember) {
		t.Errorf("CancelDecommission: %v", err)
	}
	f.expect()
}
