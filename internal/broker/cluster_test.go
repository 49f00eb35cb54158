package broker

import (
	"net/http"
	"testing"

	"github.com/narad-io/narad/internal/apierr"
	"github.com/narad-io/narad/internal/storage"
)

// TestCommitRoutedWaitsForTheSendersVersion: a batch routed here by a node
// that already saw the topic (at a newer metastore version) waits for
// this replica to apply that version instead of answering 404.
func TestCommitRoutedWaitsForTheSendersVersion(t *testing.T) {
	b := newTestBroker(t, Config{})
	ctx := testCtx(t)
	seen := b.meta.LatestDomainVersion() + 1 // the sender's version: the create below
	done := make(chan error, 1)
	go func() {
		done <- b.CommitRouted(ctx, "late", 0, 0, []storage.Record{{Payload: []byte("x")}}, seen)
	}()
	createTestTopic(t, b, "late", 1)
	if err := <-done; err != nil {
		t.Fatalf("routed commit before this replica knew the topic: %v", err)
	}
	if hwm, err := b.CommittedHWM("late", 0); err != nil || hwm != 1 {
		t.Fatalf("high watermark %d, %v; want 1", hwm, err)
	}
	// Version 0 (unknown) does not wait: an unknown topic is a 404 now.
	if err := b.CommitRouted(ctx, "nope", 0, 0, []storage.Record{{Payload: []byte("x")}}, 0); apierr.Status(err) != http.StatusNotFound {
		t.Fatalf("unknown topic without a version: %v", err)
	}
}

// TestOwnerReportsValidateTheName: a Stats call names a topic; a bad name
// is refused before any lookup, a known one is described.
func TestOwnerReportsValidateTheName(t *testing.T) {
	b := newTestBroker(t, Config{})
	ctx := testCtx(t)
	if _, err := b.OwnerReports(ctx, "bad/name", []int{0}, false); apierr.Status(err) != http.StatusBadRequest {
		t.Fatalf("bad name: %v", err)
	}
	createTestTopic(t, b, "known", 2)
	reps, err := b.OwnerReports(ctx, "known", []int{0, 1}, false)
	if err != nil || len(reps) != 2 || !reps[0].Available || !reps[1].Available {
		t.Fatalf("reports %+v, %v", reps, err)
	}
}
