package e2e

import (
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/narad-io/narad/client"
)

// TestFilteredFanoutSIGKILLLosesNoMatchingRecord: a filtered link (here a
// remote one, whose sends can be held) killed by SIGKILL while a slab's
// send is in flight copies every record its filter matches after the
// restart, and never one it does not match (docs/concepts.md, "Fan-out
// children": filters).
func TestFilteredFanoutSIGKILLLosesNoMatchingRecord(t *testing.T) {
	tg, n, ctx := heldSource(t)
	if _, err := n.c.Attach(ctx, "src", client.AttachRequest{Child: "src-dr", Remote: &client.RemoteTarget{URL: tg.srv.URL, Topic: "mirror"},
		Filter: json.RawMessage(`{"kind": ["keep"]}`)}); err != nil {
		t.Fatal(err)
	}
	// Every third record is filtered out.
	batch := func(from, to int) {
		recs := make([]client.BatchRecord, 0, to-from)
		for i := from; i < to; i++ {
			r := client.RecordFromBytes([]byte(fmt.Sprintf("id-%d", i)))
			r.Headers = map[string]string{"kind": "keep"}
			if i%3 == 0 {
				r.Headers["kind"] = "drop"
			}
			recs = append(recs, r)
		}
		if _, err := n.c.ProduceBatch(ctx, "src", recs); err != nil {
			t.Fatal(err)
		}
	}
	matching := func(from, to int) bool {
		tg.mu.Lock()
		defer tg.mu.Unlock()
		for i := from; i < to; i++ {
			got := tg.got[fmt.Sprintf("id-%d", i)]
			if i%3 == 0 && got != 0 {
				t.Fatalf("id-%d, which the filter does not match, reached the target", i)
			}
			if i%3 != 0 && got == 0 {
				return false
			}
		}
		return true
	}
	batch(0, 10)
	eventually(t, 20*time.Second, "the first matching records at the target", func() bool { return matching(0, 10) })

	tg.setHold()
	batch(10, 20) // one slab, one held send
	eventually(t, 20*time.Second, "the second slab's send in flight", func() bool { return tg.heldCount() > 0 })
	eventually(t, 20*time.Second, "every parent record dispatched for good", func() bool { return walCheckpoint(n) >= 21 })
	n.kill()
	tg.unhold()
	n.restart()
	eventually(t, 30*time.Second, "every matching record at the target after the restart", func() bool { return matching(0, 20) })
	kids, err := n.c.Children(ctx, "src")
	if err != nil || len(kids) != 1 || string(kids[0].Filter) != `{"kind":["keep"]}` {
		t.Fatalf("listing after the restart: %+v %v", kids, err)
	}
}
