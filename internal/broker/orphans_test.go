package broker

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/narad-io/narad/internal/meta/metatest"
	"github.com/narad-io/narad/internal/metrics"
)

// The periodic orphan sweep waits for the startup reconcile (the create
// gate): a node recovering with recovery.orphan_data=adopt that takes
// longer than a tick to elect must find the data it is to adopt, not have
// it swept away first. Once the gate is open the sweep deletes orphans.
func TestOrphanSweepWaitsForTheStartupReconcile(t *testing.T) {
	dir := t.TempDir()
	ms := metatest.Leader(t, dir, "n1")
	orphan := filepath.Join(dir, "topics", "orders", "p00000")
	if err := os.MkdirAll(orphan, 0o755); err != nil {
		t.Fatal(err)
	}
	b := New(Config{DataDir: dir, NodeID: "n1"}, ms, nil, metrics.New())
	t.Cleanup(func() { b.Close() })
	b.reconcileTopics() // the loop's tick, before the startup reconcile ran
	if _, err := os.Stat(orphan); err != nil {
		t.Fatalf("the sweep ran before the startup reconcile: %v", err)
	}
	b.OpenCreateGate()
	b.reconcileTopics()
	if _, err := os.Stat(filepath.Dir(orphan)); !os.IsNotExist(err) {
		t.Fatalf("the orphan is still there once the gate is open: %v", err)
	}
}
