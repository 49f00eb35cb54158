package server

import (
	"crypto/tls"
	"log/slog"
	"testing"
	"time"

	"github.com/narad-io/narad/internal/clustertls"
	"github.com/narad-io/narad/internal/config"
	"github.com/narad-io/narad/internal/meta/metatest"
	"github.com/narad-io/narad/internal/metrics"
)

// TestLostMetastoreStateRenewsTheDiskID: a clustered node whose data
// directory kept its disk id but lost the metastore's Raft state starts
// with a new disk id (its abstention from metastore elections ends only
// on a record of its disk written after the loss: meta's abstain.go); a
// new directory, and one whose Raft state is there, keep theirs.
func TestLostMetastoreStateRenewsTheDiskID(t *testing.T) {
	cfg := testConfig(t, true)
	log := slog.New(slog.DiscardHandler)
	start := func() string {
		t.Helper()
		n, err := prepare(&cfg, log)
		if err != nil {
			t.Fatal(err)
		}
		n.lock.Close()
		return n.disk.ID
	}
	first := start() // a new directory: its first disk id
	second := start()
	if second == first {
		t.Fatal("a directory that kept its disk id but has no Raft state kept that id")
	}
	ms := metatest.Leader(t, cfg.DataDir, cfg.NodeID) // Raft state in <data_dir>/metastore
	if err := ms.Close(); err != nil {
		t.Fatal(err)
	}
	if third := start(); third != second {
		t.Fatalf("a directory with its Raft state got a new disk id (%s, was %s)", third, second)
	}
	single := testConfig(t, false)
	cfg = single
	a, b := start(), start()
	if a != b {
		t.Fatal("a single node (no cluster) renewed its disk id")
	}
}

// The node's journal gets the configured delay (storage.journal_delay_ms).
func TestJournalOptionsCarryTheDelay(t *testing.T) {
	cfg := config.Default()
	cfg.Storage.JournalDelay = 300 * time.Microsecond
	if got := journalOptions(cfg, metrics.New(), slog.New(slog.DiscardHandler)).Delay; got != 300*time.Microsecond {
		t.Fatalf("journal delay %v, want the configured 300µs", got)
	}
}

// The pool calls over framed connections only when cluster.framed_rpc
// says so, with and without cluster TLS.
func TestPoolCallsFramedOnlyWhenSet(t *testing.T) {
	for _, on := range []bool{false, true} {
		cfg := config.Default()
		cfg.Cluster.Secret = "s"
		cfg.Cluster.FramedRPC = on
		for _, tc := range []*clustertls.Config{nil, {Client: &tls.Config{MinVersion: tls.VersionTLS13}}} {
			p := newPool(cfg, tc)
			got := p.CallsFramed()
			p.Close()
			if got != on {
				t.Errorf("framed_rpc %v, TLS %v: the pool calls framed: %v", on, tc != nil, got)
			}
		}
	}
}

// A node serves framed connections only when cluster.framed_rpc says so;
// without it its node port is gRPC's alone, as before them.
func TestRPCServerServesFramedOnlyWhenSet(t *testing.T) {
	for _, on := range []bool{false, true} {
		cfg := config.Default()
		cfg.Cluster.Secret = "s"
		cfg.Cluster.FramedRPC = on
		srv, err := newRPCServer(cfg, &rpcHandler{}, nil, nil, slog.New(slog.DiscardHandler))
		if err != nil {
			t.Fatal(err)
		}
		got := srv.ServesFramed()
		srv.Stop()
		if got != on {
			t.Errorf("framed_rpc %v: the server serves framed: %v", on, got)
		}
	}
}
