package metatest

import (
	"context"
	"io"
	"log/slog"
	"path/filepath"
	"testing"
	"time"

	"github.com/narad-io/narad/internal/meta"
)

// Leader opens a metastore under dir as node nodeID, bootstraps it alone
// and waits until it leads.
func Leader(t testing.TB, dir, nodeID string) *meta.Store {
	t.Helper()
	ms, err := meta.Open(meta.Options{Dir: filepath.Join(dir, "metastore"), NodeID: nodeID, BindAddr: "127.0.0.1:0",
		Bootstrap: true, Logger: slog.New(slog.DiscardHandler), RaftLogOutput: io.Discard})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ms.Close() })
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if err := ms.WaitLeader(ctx); err != nil {
		t.Fatal(err)
	}
	return ms
}
