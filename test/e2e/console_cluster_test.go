package e2e

import (
	"encoding/json"
	"fmt"
	"slices"
	"testing"
	"time"
)

// The console's cluster page against a real 3-node cluster: one browser,
// one page. It lists the three nodes with their Raft roles (one leader,
// the one the API names) and the partitions each node owns, as
// GET /v1/cluster/members counts them. A replicated topic's page then
// shows its partition's copies in sync, and under-replicated once a
// follower's node is killed.
func TestConsoleClusterPageInABrowser(t *testing.T) {
	nodes := startCluster(t, 3)
	n := nodes[0]
	if a := asUser(t, n, "", "", "POST", "/v1/topics", map[string]any{"name": "spread", "partitions": 6}); a.status != 201 {
		t.Fatalf("create: %d %s", a.status, a.body)
	}
	type member struct {
		ID         string `json:"id"`
		Leader     bool   `json:"leader"`
		Partitions int    `json:"partitions"`
	}
	var members []member
	readMembers := func() bool {
		var d struct {
			Members []member `json:"members"`
		}
		a := asUser(t, n, "", "", "GET", "/v1/cluster/members", nil)
		if a.status != 200 || json.Unmarshal(a.body, &d) != nil {
			return false
		}
		sum, leaders := 0, 0
		for _, m := range d.Members {
			sum += m.Partitions
			if m.Leader {
				leaders++
			}
		}
		members = d.Members
		return len(d.Members) == 3 && sum == 6 && leaders == 1
	}
	eventually(t, 20*time.Second, "the six partitions placed", readMembers)

	// Describe on one node shows every partition's in-flight count and
	// oldest unconsumed record, its owner's figures crossing by the Stats
	// RPC for the four partitions other nodes own.
	for p := 0; p < 6; p++ {
		if a := asUser(t, n, "", "", "POST", fmt.Sprintf("/v1/topics/spread/produce?partition=%d", p), []byte("one")); a.status != 202 {
			t.Fatalf("produce to %d: %d %s", p, a.status, a.body)
		}
	}
	// (A 202 is durable in the ingress WAL; the record reaches its
	// partition a moment later, hence the wait.)
	type stats struct {
		Index    int    `json:"index"`
		Owner    string `json:"owner_node"`
		HWM      uint64 `json:"high_watermark"`
		InFlight *int   `json:"in_flight"`
		OldestAt int64  `json:"oldest_unconsumed_at_ms"`
	}
	var last []stats
	t.Cleanup(func() {
		if t.Failed() && last != nil {
			t.Logf("the last describe of spread on %s: %+v", n.id, last)
		}
	})
	eventually(t, 20*time.Second, "every partition's oldest unconsumed record described on "+n.id, func() bool {
		var d struct {
			Stats []stats `json:"partition_stats"`
		}
		if a := asUser(t, n, "", "", "GET", "/v1/topics/spread", nil); a.status != 200 || json.Unmarshal(a.body, &d) != nil {
			return false
		}
		last = d.Stats
		for _, p := range d.Stats {
			if p.HWM != 1 || p.InFlight == nil || *p.InFlight != 0 || p.OldestAt == 0 {
				return false
			}
		}
		return len(d.Stats) == 6
	})

	b := newBrowser(t, "http://"+n.http)
	b.open("#/cluster")
	b.until("three nodes listed", `document.querySelectorAll('table[data-table=members] tbody tr[data-row]').length === 3`)
	b.until("one leader", `((roles) => roles.filter((r) => r === 'leader').length === 1 && roles.filter((r) => r === 'follower').length === 2)([...document.querySelectorAll('table[data-table=members] tbody td:nth-child(2)')].map((td) => td.textContent))`)
	// The page shows each member as the API names it. The API is read
	// again for each try: on a loaded machine a metastore election may
	// move the leadership between the API's answer and the page's.
	eventually(t, 60*time.Second, "each member's role and partitions as the API names them", func() bool {
		if !readMembers() {
			return false
		}
		for _, m := range members {
			row := fmt.Sprintf(`document.querySelector('table[data-table=members] tr[data-row="%s"]')`, m.ID)
			role := "follower"
			if m.Leader {
				role = "leader"
				if !b.holds(fmt.Sprintf(`document.querySelector('[data-stat=leader]').textContent === %q`, m.ID), 10*time.Second) {
					return false
				}
			}
			if !b.holds(fmt.Sprintf(`%s.querySelector('td:nth-child(2)').textContent === %q && %s.querySelector('td:nth-child(4)').textContent.trim() === "%d" && %s.querySelector('meter').value === %d`,
				row, role, row, m.Partitions, row, m.Partitions), 10*time.Second) {
				t.Logf("%s is not shown as %s with %d partitions; reading the members again", m.ID, role, m.Partitions)
				return false
			}
		}
		return true
	})
	b.until("the node count", `document.querySelector('[data-stat=nodes]').textContent === "3"`)
	b.shot("cluster-3")

	// A replicated topic's page shows each partition's copies in sync, and
	// marks one with a follower gone as under-replicated.
	createReplicatedN(t, n, "copies", 1, 3)
	b.open("#/topics/copies")
	inSync := `document.querySelector('table[data-table=partitions] tbody tr:first-child [data-in-sync]').dataset.inSync`
	b.until("three copies of three in sync", inSync+` === "3/3"`)
	ps, _ := allPartitionStats(n, "copies")
	// The node to stop follows the partition and does not lead the
	// metastore; the browsed node only when it is the one such node, and
	// the page is then read through the partition's leader.
	readMembers()
	stoppable := func(x *node) bool {
		return x.id != ps[0].OwnerNode && !slices.ContainsFunc(members, func(m member) bool { return m.Leader && m.ID == x.id })
	}
	i := slices.IndexFunc(nodes, func(x *node) bool { return x != n && stoppable(x) })
	if i < 0 && stoppable(n) {
		i = slices.Index(nodes, n)
		leader := nodes[slices.IndexFunc(nodes, func(x *node) bool { return x.id == ps[0].OwnerNode })]
		b = newBrowser(t, "http://"+leader.http)
		b.open("#/topics/copies")
		b.until("three copies of three in sync, through the partition's leader", inSync+` === "3/3"`)
	}
	if i < 0 {
		t.Fatalf("no node to stop but the partition's leader and the metastore leader: %+v, members %+v", ps, members)
	}
	nodes[i].kill()
	b.until("two of three in sync, marked under-replicated", inSync+` === "2/3" && document.querySelector('[data-in-sync]').textContent.includes('under-replicated')`)
}
