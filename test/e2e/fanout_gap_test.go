package e2e

import (
	"context"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/narad-io/narad/client"
)

// heldTarget is a remote child's target in the test process: it accepts
// batch produces, or holds them unanswered until released, so a test can
// SIGKILL the source while a child commit is in flight.
type heldTarget struct {
	srv     *httptest.Server
	mu      sync.Mutex
	hold    bool
	held    int
	release chan struct{}
	got     map[string]int // payload -> times accepted
}

func newHeldTarget(t *testing.T) *heldTarget {
	tg := &heldTarget{release: make(chan struct{}), got: map[string]int{}}
	tg.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var in struct {
			Records []struct {
				PayloadBase64 string `json:"payload_base64"`
			} `json:"records"`
		}
		if r.URL.Path != "/v1/topics/mirror/produce/batch" || json.NewDecoder(r.Body).Decode(&in) != nil {
			http.Error(w, `{"error":"unexpected request"}`, http.StatusBadRequest)
			return
		}
		tg.mu.Lock()
		if tg.hold {
			tg.held++
			release := tg.release
			tg.mu.Unlock()
			<-release // never answered while the source lives
			http.Error(w, `{"error":"released"}`, http.StatusServiceUnavailable)
			return
		}
		for _, rec := range in.Records {
			b, _ := base64.StdEncoding.DecodeString(rec.PayloadBase64)
			tg.got[string(b)]++
		}
		tg.mu.Unlock()
		w.WriteHeader(http.StatusAccepted)
		fmt.Fprintf(w, `{"accepted":%d}`, len(in.Records))
	}))
	t.Cleanup(func() { tg.unhold(); tg.srv.Close() })
	return tg
}

func (tg *heldTarget) setHold() {
	tg.mu.Lock()
	tg.hold = true
	tg.mu.Unlock()
}

// unhold answers every held request (503) and accepts from now on.
func (tg *heldTarget) unhold() {
	tg.mu.Lock()
	defer tg.mu.Unlock()
	if tg.hold {
		tg.hold = false
		close(tg.release)
	}
}

func (tg *heldTarget) heldCount() int {
	tg.mu.Lock()
	defer tg.mu.Unlock()
	return tg.held
}

func (tg *heldTarget) has(from, to int) bool {
	tg.mu.Lock()
	defer tg.mu.Unlock()
	for i := from; i < to; i++ {
		if tg.got[fmt.Sprintf("id-%d", i)] == 0 {
			return false
		}
	}
	return true
}

// walCheckpoint reads the node's ingress WAL checkpoint (the next WAL seq
// to dispatch) from its file: 8 bytes of magic, the seq big-endian, a crc.
func walCheckpoint(n *node) uint64 {
	b, err := os.ReadFile(filepath.Join(n.dir, "data", "ingress", "checkpoint"))
	if err != nil || len(b) != 20 {
		return 0
	}
	return binary.BigEndian.Uint64(b[8:16])
}

// TestFanoutSIGKILLMidCommitLeavesNoGap: a node is SIGKILLed while a
// cursor's commit to its child is in flight (the target holds the batch
// unanswered), after the parent's records are all dispatched (so no
// re-dispatch after the restart can hide a gap with duplicates). After the
// restart the cursor sends that slab again: the child gets every record.
// A cursor file advanced before the commit would have skipped the slab
// for good; this test sees that gap.
func TestFanoutSIGKILLMidCommitLeavesNoGap(t *testing.T) {
	tg, n, ctx := heldSource(t)
	attach := fmt.Sprintf(`{"child":"src-dr","remote":{"url":%q,"topic":"mirror"}}`, tg.srv.URL)
	if status, body, _ := n.do("POST", "/v1/topics/src/children", "application/json", []byte(attach)); status != http.StatusOK {
		t.Fatalf("attach: %d %s", status, body)
	}
	batch := func(from, to int) {
		recs := make([]client.BatchRecord, 0, to-from)
		for i := from; i < to; i++ {
			recs = append(recs, client.RecordFromBytes([]byte(fmt.Sprintf("id-%d", i))))
		}
		if _, err := n.c.ProduceBatch(ctx, "src", recs); err != nil {
			t.Fatal(err)
		}
	}
	batch(0, 10)
	eventually(t, 20*time.Second, "the first 10 at the target", func() bool { return tg.has(0, 10) })

	tg.setHold()
	batch(10, 20) // WAL seqs 11..20: one slab, one held send
	eventually(t, 20*time.Second, "the second slab's send in flight", func() bool { return tg.heldCount() > 0 })
	eventually(t, 20*time.Second, "every parent record dispatched for good", func() bool { return walCheckpoint(n) >= 21 })
	n.kill()
	tg.unhold()
	n.restart()
	eventually(t, 30*time.Second, "every record at the target after the restart", func() bool { return tg.has(0, 20) })
}

// heldSource starts a node with a one-partition topic src, for a test
// that links it to the held target it returns and kills the node while a
// send is held; it skips in -short runs.
func heldSource(t *testing.T) (*heldTarget, *node, context.Context) {
	t.Helper()
	if testing.Short() {
		t.Skip("kills processes")
	}
	tg := newHeldTarget(t)
	n := startNode(t)
	ctx := ctxT(t)
	if _, err := n.c.CreateTopic(ctx, client.CreateTopicRequest{Name: "src", Partitions: 1}); err != nil {
		t.Fatal(err)
	}
	return tg, n, ctx
}
