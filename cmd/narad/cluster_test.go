package main

import (
	"strings"
	"testing"
	"time"
)

// clusterNow is what the clock reads in these tests; heartbeats are given
// relative to it.
var clusterNow = time.UnixMilli(1796004229023)

const membersBody = `{"members":[
{"id":"n3","raft_addr":"10.0.0.3:7943","rpc_addr":"10.0.0.3:7944","http_addr":"10.0.0.3:7942","state":"alive","draining":true,"voter":true,"leader":false,"partitions":4,"last_heartbeat_ms":1796004044023},
{"id":"n1","raft_addr":"10.0.0.1:7943","rpc_addr":"10.0.0.1:7944","http_addr":"10.0.0.1:7942","state":"alive","draining":false,"voter":true,"leader":true,"partitions":12,"last_heartbeat_ms":1796004226123},
{"id":"n2","raft_addr":"10.0.0.2:7943","rpc_addr":"10.0.0.2:7944","http_addr":"10.0.0.2:7942","state":"alive","draining":false,"voter":false,"leader":false,"partitions":1,"last_heartbeat_ms":1796004230000},
{"id":"n10","raft_addr":"","rpc_addr":"","http_addr":"","state":"dead","draining":true,"voter":false,"leader":false,"partitions":0,"last_heartbeat_ms":0}]}`

func TestClusterMembersTable(t *testing.T) {
	b := newBroker(t, func(r req) (int, string) { return 200, membersBody })
	c := against(b)
	c.now = clusterNow
	r := c.run(t, "cluster", "members")
	mustOK(t, r)
	// By id as text; 2.9s is 2s; a heartbeat ahead of the local clock is 0s.
	want := "ID   STATE           ROLE    PARTITIONS  HEARTBEAT  HTTP\n" +
		"n1   alive           leader  12          2s ago     10.0.0.1:7942\n" +
		"n10  dead,draining   -       0           -          -\n" +
		"n2   alive           -       1           0s ago     10.0.0.2:7942\n" +
		"n3   alive,draining  voter   4           3m5s ago   10.0.0.3:7942\n"
	if r.stdout != want || r.stderr != "" {
		t.Errorf("stdout\n%s\nwant\n%s\nstderr %q", r.stdout, want, r.stderr)
	}
	expectRequests(t, b, req{Method: "GET", Path: "/v1/cluster/members"})
}

// A member whose decommission cannot complete is named under the table,
// with each partition that blocks it and why.
func TestClusterMembersSayWhatBlocksADecommission(t *testing.T) {
	body := `{"members":[{"id":"n1","state":"alive","voter":true,"leader":true,"partitions":1,"last_heartbeat_ms":0},
{"id":"n2","state":"dead","draining":true,"partitions":1,"last_heartbeat_ms":0,
 "decommission_blocked":[{"topic":"orders","partition":3,"why":"a single copy on a dead node: no source to copy from"}]}]}`
	b := newBroker(t, func(r req) (int, string) { return 200, body })
	r := against(b).run(t, "cluster", "members")
	mustOK(t, r)
	if want := "n2: decommission blocked by orders/3: a single copy on a dead node: no source to copy from\n"; !strings.HasSuffix(r.stdout, want) {
		t.Fatalf("stdout\n%s\nwant it to end with\n%s", r.stdout, want)
	}
}

func TestClusterMembersJSON(t *testing.T) {
	b := newBroker(t, func(r req) (int, string) {
		return 200, `{"members":[
{"id":"n2","raft_addr":"r2","rpc_addr":"p2","http_addr":"h2","state":"dead","draining":true,"voter":false,"leader":false,"partitions":0,"last_heartbeat_ms":0},
{"id":"n1","raft_addr":"r1","rpc_addr":"p1","http_addr":"h1","state":"alive","draining":false,"voter":true,"leader":true,"partitions":12,"last_heartbeat_ms":1796004226123}]}`
	})
	r := against(b).run(t, "cluster", "members", "--json")
	mustOK(t, r)
	want := `{
  "members": [
    {
      "id": "n1",
      "raft_addr": "r1",
      "rpc_addr": "p1",
      "http_addr": "h1",
      "state": "alive",
      "draining": false,
      "voter": true,
      "leader": true,
      "partitions": 12,
      "last_heartbeat_ms": 1796004226123
    },
    {
      "id": "n2",
      "raft_addr": "r2",
      "rpc_addr": "p2",
      "http_addr": "h2",
      "state": "dead",
      "draining": true,
      "voter": false,
      "leader": false,
      "partitions": 0,
      "last_heartbeat_ms": 0
    }
  ]
}
`
	if r.stdout != want {
		t.Errorf("json\n%s\nwant\n%s", r.stdout, want)
	}
	expectRequests(t, b, req{Method: "GET", Path: "/v1/cluster/members"})
}

func TestClusterMovesSortedTable(t *testing.T) {
	b := newBroker(t, func(r req) (int, string) {
		return 200, `{"moves":[{"topic":"orders","partition":10,"from":"n2","to":"n4"},{"topic":"audit","partition":7,"from":"n3","to":"n1"},{"topic":"orders","partition":3,"from":"n1","to":"n4"}]}`
	})
	r := against(b).run(t, "cluster", "moves")
	mustOK(t, r)
	want := "TOPIC   PARTITION  FROM  TO\n" +
		"audit   7          n3    n1\n" +
		"orders  3          n1    n4\n" +
		"orders  10         n2    n4\n"
	if r.stdout != want {
		t.Errorf("stdout\n%s\nwant\n%s", r.stdout, want)
	}
	r = against(b).run(t, "cluster", "moves", "--json")
	mustOK(t, r)
	wantJSON := `{
  "moves": [
    {
      "topic": "audit",
      "partition": 7,
      "from": "n3",
      "to": "n1"
    },
    {
      "topic": "orders",
      "partition": 3,
      "from": "n1",
      "to": "n4"
    },
    {
      "topic": "orders",
      "partition": 10,
      "from": "n2",
      "to": "n4"
    }
  ]
}
`
	if r.stdout != wantJSON {
		t.Errorf("json\n%s\nwant\n%s", r.stdout, wantJSON)
	}
	expectRequests(t, b, req{Method: "GET", Path: "/v1/cluster/moves"}, req{Method: "GET", Path: "/v1/cluster/moves"})
}

func TestClusterNoMoves(t *testing.T) {
	for _, body := range []string{`{"moves":[]}`, `{"moves":null}`} {
		b := newBroker(t, func(r req) (int, string) { return 200, body })
		r := against(b).run(t, "cluster", "moves")
		mustOK(t, r)
		if r.stdout != "no moves in flight\n" {
			t.Errorf("%s: stdout %q", body, r.stdout)
		}
		r = against(b).run(t, "cluster", "moves", "--json")
		mustOK(t, r)
		if r.stdout != "{\n  \"moves\": []\n}\n" {
			t.Errorf("%s: json %q", body, r.stdout)
		}
	}
}

func TestClusterDecommissionAndCancel(t *testing.T) {
	b := newBroker(t, func(r req) (int, string) {
		return 200, `{"id":"n3","state":"alive","draining":true,"voter":true,"partitions":4}`
	})
	c := against(b)
	r := c.run(t, "cluster", "decommission", "n3")
	mustOK(t, r)
	if r.stdout != "draining n3: its partitions move to the other nodes; it leaves the Raft voters once empty\n" || r.stderr != "" {
		t.Errorf("stdout %q stderr %q", r.stdout, r.stderr)
	}
	r = c.run(t, "cluster", "decommission", "--cancel", "n3")
	mustOK(t, r)
	if r.stdout != "cancelled decommission of n3\n" || r.stderr != "" {
		t.Errorf("stdout %q stderr %q", r.stdout, r.stderr)
	}
	mustOK(t, c.run(t, "cluster", "decommission", "a/b"))
	expectRequests(t, b,
		req{Method: "POST", Path: "/v1/cluster/members/n3/decommission"},
		req{Method: "DELETE", Path: "/v1/cluster/members/n3/decommission"},
		req{Method: "POST", Path: "/v1/cluster/members/a%2Fb/decommission"},
	)
}

func TestClusterDecommissionNeedsOneID(t *testing.T) {
	b := newBroker(t, func(r req) (int, string) { return 200, `{}` })
	for _, args := range [][]string{{}, {"n1", "n2"}, {"--cancel"}, {""}} {
		r := against(b).run(t, append([]string{"cluster", "decommission"}, args...)...)
		if r.code != 1 || !strings.HasPrefix(r.stderr, "narad: ") || r.stdout != "" {
			t.Errorf("%q: exit %d stdout %q stderr %q", args, r.code, r.stdout, r.stderr)
		}
	}
	if n := len(b.requests()); n != 0 {
		t.Errorf("%d requests sent without one member id", n)
	}
}

func TestClusterAPIErrorIsReported(t *testing.T) {
	b := newBroker(t, func(r req) (int, string) { return 403, `{"error":"admin grant required"}` })
	for _, args := range [][]string{{"members"}, {"moves"}, {"decommission", "n3"}, {"decommission", "n3", "--cancel"}} {
		r := against(b).run(t, append([]string{"cluster"}, args...)...)
		if r.code != exitAuth || r.stderr != "narad: admin grant required (HTTP 403)\n" || r.stdout != "" {
			t.Errorf("%v: exit %d stdout %q stderr %q", args, r.code, r.stdout, r.stderr)
		}
	}
}

func TestClusterDecommissionHelpExplainsIt(t *testing.T) {
	r := cli{}.run(t, "cluster", "decommission", "--help")
	mustOK(t, r)
	for _, s := range []string{"receives no\nnew partitions", "move to the other nodes", "removed from the Raft\nvoters",
		"fewer than 3", "--cancel stops a decommission while ID is still a member"} {
		if !strings.Contains(r.stdout, s) {
			t.Errorf("help lacks %q:\n%s", s, r.stdout)
		}
	}
}
