package httpapi

import (
	"context"
	"log/slog"
	"path/filepath"
	"testing"
	"time"

	"github.com/narad-io/narad/internal/broker"
	"github.com/narad-io/narad/internal/meta/metatest"
	"github.com/narad-io/narad/internal/metrics"
	"github.com/narad-io/narad/internal/wal"
)

// realBroker is a started one-node broker — a real one-member Raft
// metastore, ingress WAL and partition logs in a temporary directory —
// on the clock now (nil: the real one), with topic created under its
// defaults (2 partitions, visibility_timeout_ms 30000).
func realBroker(t *testing.T, now func() time.Time, topic string) *broker.Broker {
	t.Helper()
	dir := t.TempDir()
	ms := metatest.Leader(t, dir, "n1")
	w, err := wal.Open(filepath.Join(dir, "ingress"), wal.Options{})
	if err != nil {
		t.Fatal(err)
	}
	b := broker.New(broker.Config{DataDir: dir, NodeID: "n1", DefaultPartitions: 2, MaxPartitions: 8,
		DefaultRetentionMs: 3_600_000, DefaultVisibilityMs: 30_000, DefaultMaxInFlight: 1024, DefaultMaxAckedAhead: 1024,
		Now: now, Logger: slog.New(slog.DiscardHandler)}, ms, w, metrics.New())
	b.Start()
	b.OpenCreateGate()
	t.Cleanup(func() { b.Close(); w.Close() })
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if _, err := b.CreateTopic(ctx, broker.CreateTopicRequest{Name: topic}, ""); err != nil {
		t.Fatal(err)
	}
	return b
}

// apiOver is the API in front of b alone (no cluster).
func apiOver(b *broker.Broker) *Server {
	return New(b, nil, metrics.New(), nil, func() (bool, string) { return true, "" }, slog.New(slog.DiscardHandler), Options{})
}
