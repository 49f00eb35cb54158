package fanout

import (
	"bytes"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/narad-io/narad/internal/topic"
)

// The attach answer is the parent's record, as the reference answers it
// ("role": "parent", "children" with the new child), plus the new link's
// child, attach_epoch and attach_offsets at the top level (docs/http-api.md).
func TestAttachAnswerIsTheParentsRecord(t *testing.T) {
	n := newNode(t, Config{})
	n.createTopic("src", 3, 0)
	n.createTopic("dst", 2, 0)
	n.commit("src", 0, "a", "b")
	n.commit("src", 2, "c")
	v, err := n.e.Attach(n.ctx(), "src", AttachRequest{Child: "dst", DelayMs: 1000})
	if err != nil {
		t.Fatal(err)
	}
	child, _ := n.meta.Topic("dst")
	if v.Name != "src" || v.Role != topic.RoleParent || !slices.Equal(v.Children, []string{"dst"}) || v.Partitions != 3 ||
		v.Child != "dst" || v.AttachEpoch != child.AttachEpoch || !slices.Equal(v.AttachOffsets, []uint64{2, 0, 1}) || v.DelayMs != 1000 {
		t.Fatalf("attach answer: %+v", v)
	}
	js, _ := json.Marshal(v)
	var top map[string]json.RawMessage
	if err := json.Unmarshal(js, &top); err != nil {
		t.Fatal(err)
	}
	for k, want := range map[string]string{"name": `"src"`, "role": `"parent"`, "children": `["dst"]`, "child": `"dst"`,
		"attach_epoch": `"` + child.AttachEpoch + `"`, "attach_offsets": `[2,0,1]`} {
		if string(top[k]) != want {
			t.Errorf("attach answer %s = %s, want %s (%s)", k, top[k], want, js)
		}
	}
	if _, ok := top["parent"]; ok {
		t.Errorf("the parent's record names a parent: %s", js)
	}
}

// A remote child's attach answer describes the link — its target without
// credentials and its state — not a topic full of zeros; a plaintext
// http:// target with credentials gets a warning in the answer and in the
// node's log (issue 11 defect 15).
func TestRemoteAttachAnswerDescribesTheLink(t *testing.T) {
	logs := &logLines{}
	n := newNode(t, Config{Logger: slog.New(logs)})
	n.createTopic("orders", 2, 0)
	for _, tc := range []struct {
		child, url, creds string
		warn              bool
	}{
		{"dr-http", "http://dr.example:7942", `,"username":"replicator","password":"s3cret-pass"`, true},
		{"dr-HTTP", "HTTP://dr.example:7942", `,"username":"replicator","password":"s3cret-pass"`, true},
		{"dr-https", "https://dr.example:7942", `,"username":"replicator","password":"s3cret-pass"`, false},
		{"dr-open", "http://dr.example:7942", ``, false},
	} {
		remote := fmt.Sprintf(`{"url":%q,"topic":"mirror"%s}`, tc.url, tc.creds)
		v, err := n.e.Attach(n.ctx(), "orders", AttachRequest{Child: tc.child, Remote: json.RawMessage(remote)})
		if err != nil {
			t.Fatalf("%s: %v", tc.child, err)
		}
		js, _ := json.Marshal(v)
		if bytes.Contains(js, []byte("s3cret")) || bytes.Contains(js, []byte("replicator")) {
			t.Fatalf("%s: the answer shows credentials: %s", tc.child, js)
		}
		if v.Name != "orders" || v.Role != topic.RoleParent || !slices.Contains(v.Children, tc.child) || v.Child != tc.child ||
			v.Remote == nil || v.Remote.URL != strings.ToLower(tc.url) || v.Remote.Topic != "mirror" || v.State != StateRunning ||
			len(v.AttachOffsets) != 2 || v.AttachEpoch == "" {
			t.Fatalf("%s: attach answer %s", tc.child, js)
		}
		if got := len(v.Warnings) == 1 && strings.Contains(v.Warnings[0], "plaintext"); got != tc.warn {
			t.Errorf("%s: warnings %q, want a plaintext warning: %v", tc.child, v.Warnings, tc.warn)
		}
		if got := len(logs.matching("child="+tc.child)) > 0; got != tc.warn {
			t.Errorf("%s: logged a warning %v, want %v (%q)", tc.child, got, tc.warn, logs.matching("plaintext"))
		}
	}
	if w := logs.matching("plaintext"); len(w) == 0 || strings.Contains(strings.Join(w, "\n"), "s3cret") {
		t.Fatalf("the log's warning: %q", w)
	}
}

// rule refusal stops the link: a rejected link says why in the listing —
// the refused record's parent offset, as a sentence (state_reason) and on
// its partition's recovery point (rejected_offset) — and says nothing once
// it runs again.
func TestListingShowsWhyALinkIsRejected(t *testing.T) {
	tg := newTarget(t)
	n := newNode(t, Config{Linger: time.Millisecond, Backoff: 10 * time.Millisecond})
	n.createTopic("orders", 1, 0)
	n.attachRemote("orders", "orders-dr", tg.srv.URL, "")
	n.e.Start()
	n.commit("orders", 0, "a", "b")
	waitFor(t, 10*time.Second, "the first 2 sent", func() bool { return len(tg.records()) == 2 })
	tg.set(http.StatusBadRequest, `{"error":"record 0: payload is not valid against the schema","index":0}`)
	n.commit("orders", 0, "c") // parent offset 2
	var c ChildView
	waitFor(t, 10*time.Second, "state rejected", func() bool {
		v, _ := n.e.Children("orders")
		c = v.Children[0]
		return c.State == StateRejected
	})
	rp := c.RecoveryPoint[0]
	if !strings.Contains(c.StateReason, "partition 0:") || !strings.Contains(c.StateReason, "parent offset 2") ||
		!strings.Contains(c.StateReason, "not valid against the schema") ||
		rp.State != StateRejected || rp.RejectedOffset == nil || *rp.RejectedOffset != 2 {
		t.Fatalf("rejected link: reason %q, recovery point %+v", c.StateReason, rp)
	}
	tg.set(http.StatusServiceUnavailable, `{"error":"not ready"}`)
	waitFor(t, 10*time.Second, "state retrying", func() bool {
		v, _ := n.e.Children("orders")
		c = v.Children[0]
		return c.State == StateRetrying
	})
	if c.RecoveryPoint[0].RejectedOffset != nil || !strings.Contains(c.StateReason, "not ready") {
		t.Fatalf("retrying link: reason %q, recovery point %+v", c.StateReason, c.RecoveryPoint[0])
	}
	tg.set(0, "")
	waitFor(t, 10*time.Second, "state running", func() bool {
		v, _ := n.e.Children("orders")
		c = v.Children[0]
		return c.State == StateRunning && c.RecoveryPoint[0].NextOffset == 3
	})
	if c.StateReason != "" || c.RecoveryPoint[0].RejectedOffset != nil {
		t.Fatalf("running link still gives a reason: %+v", c)
	}
}

// The reason of a partition owned by another node arrives through its
// Stats answer (the stats RPC's cursor entry carries it), so the listing
// names the refused record wherever the link's cursor runs.
func TestListingShowsARemoteOwnersReason(t *testing.T) {
	n := newNode(t, Config{})
	n.createTopic("orders", 2, 0)
	child := n.attachRemote("orders", "orders-dr", "https://dr.example:7942", "")
	n.ms.set(func(s *seamMeta) {
		s.owner = func(name string, p int) (string, bool) {
			if name == "orders" && p == 1 {
				return "n2", true
			}
			return "n1", true
		}
	})
	off := uint64(7)
	n.stats.mu.Lock()
	n.stats.remote = func(owner, name string, parts []int) ([]topic.PartitionReport, error) {
		if owner != "n2" || name != "orders" || !slices.Equal(parts, []int{1}) {
			return nil, fmt.Errorf("unexpected stats call %s %s %v", owner, name, parts)
		}
		r := topic.PartitionReport{Partition: 1, Available: true}
		r.Stats.HighWatermark, r.Stats.Exact = 10, true
		r.Cursors = []topic.CursorPosition{{Child: "orders-dr", Epoch: child.AttachEpoch, NextOffset: 7, State: StateRejected,
			StateReason: "the target refuses the record at parent offset 7: 400 too big", RejectedOffset: &off}}
		return []topic.PartitionReport{r}, nil
	}
	n.stats.mu.Unlock()
	v, err := n.e.Children("orders")
	if err != nil {
		t.Fatal(err)
	}
	c := v.Children[0]
	var rp RecoveryPoint
	for _, p := range c.RecoveryPoint {
		if p.Partition == 1 {
			rp = p
		}
	}
	if c.State != StateRejected || c.StateReason != "partition 1: the target refuses the record at parent offset 7: 400 too big" ||
		rp.RejectedOffset == nil || *rp.RejectedOffset != 7 || rp.NextOffset != 7 || c.LagMessages != 3 {
		t.Fatalf("listing: %+v (partition 1: %+v)", c, rp)
	}
}
