package server

import (
	"context"
	"encoding/json"
	"strconv"
	"strings"
	"testing"

	"github.com/narad-io/narad/internal/cluster"
	"github.com/narad-io/narad/internal/meta"
	"github.com/narad-io/narad/internal/meta/metatest"
)

// The members answer shows a draining member's blocked partitions with
// the reason, and nothing of the kind on the others.
func TestMembersShowABlockedDecommission(t *testing.T) {
	ctx := context.Background()
	ms := metatest.Leader(t, t.TempDir(), "n1")
	for _, m := range []meta.Member{{ID: "n1", State: meta.MemberAlive}, {ID: "b", State: meta.MemberDead, Draining: true}} {
		if err := ms.UpsertMember(ctx, m); err != nil {
			t.Fatal(err)
		}
	}
	if err := ms.CreateTopic(ctx, meta.Topic{Name: "s", Partitions: 2},
		[]meta.Assignment{{Topic: "s", Partition: 0, Owner: "b"}, {Topic: "s", Partition: 1, Owner: "n1"}}, nil); err != nil {
		t.Fatal(err)
	}
	body, err := json.Marshal((&clusterOps{self: "n1", ms: ms}).Members())
	if err != nil {
		t.Fatal(err)
	}
	want := `"id":"b",`
	blocked := `"decommission_blocked":[{"topic":"s","partition":0,"why":` + strconv.Quote(cluster.WhyDeadOnlyCopy) + `}]`
	got := string(body)
	if i := strings.Index(got, want); i < 0 || !strings.Contains(got[i:], blocked) || strings.Count(got, "decommission_blocked") != 1 {
		t.Fatalf("members %s; want b alone with %s", got, blocked)
	}
}
