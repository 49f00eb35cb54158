package broker

import (
	"errors"
	"net/http"
	"path/filepath"
	"sync"
	"testing"

	"github.com/narad-io/narad/internal/apierr"
	"github.com/narad-io/narad/internal/refusal"
	"github.com/narad-io/narad/internal/storage"
)

// admission is a commit-admission hook that refuses while closed and
// counts the commits it let in and saw end.
type admission struct {
	mu            sync.Mutex
	closed        bool
	entered, done int
}

func (a *admission) Admit(topic string, p int) (func(), bool) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.closed {
		return nil, false
	}
	a.entered++
	return func() { a.mu.Lock(); a.done++; a.mu.Unlock() }, true
}

// Every commit asks the hook first: a refused one answers 503 with a
// Retry-After and stores nothing; an admitted one tells the hook when it
// ended.
func TestCommitAsksTheAdmissionHook(t *testing.T) {
	adm := &admission{}
	b := newTestBroker(t, Config{Admission: adm})
	createTestTopic(t, b, "orders", 2)
	commitSized(t, b, "orders", 0, 3, 10)
	if adm.entered != 1 || adm.done != 1 {
		t.Fatalf("hook saw %d commits enter, %d end; want 1 and 1", adm.entered, adm.done)
	}
	adm.mu.Lock()
	adm.closed = true
	adm.mu.Unlock()
	err := commitLocal(b, testCtx(t), "orders", 0, []storage.Record{{Payload: []byte("refused")}})
	ae, ok := apierr.From(err) // as a client sees it
	if !ok || ae.Status != http.StatusServiceUnavailable || ae.RetryAfter <= 0 || !errors.Is(err, refusal.ErrFrozen) {
		t.Fatalf("a refused commit answered %v, want refusal.ErrFrozen: 503 with Retry-After", err)
	}
	l, err := b.parts.Get("orders", 0)
	if err != nil || l.HWM() != 3 {
		t.Fatalf("after a refused commit the log holds %d records (%v), want 3", l.HWM(), err)
	}
}

// PartitionDirs lists what is on disk, by topic, through the one
// partition-directory name of storage.
func TestPartitionDirsListsTheDisk(t *testing.T) {
	b := newTestBroker(t, Config{})
	createTestTopic(t, b, "orders", 3)
	for _, p := range []int{0, 2} {
		if _, err := b.parts.Get("orders", p); err != nil {
			t.Fatal(err)
		}
	}
	got, err := b.parts.PartitionDirs()
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 1 || len(got["orders"]) != 2 || got["orders"][0] != 0 || got["orders"][1] != 2 {
		t.Fatalf("PartitionDirs = %v, want orders: [0 2]", got)
	}
	dir, err := b.parts.Dir("orders", 2)
	if err != nil || dir != filepath.Join(b.parts.Root(), "orders", "p00002") {
		t.Fatalf("Dir = %q %v", dir, err)
	}
}
