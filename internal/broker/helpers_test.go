package broker

import (
	"bytes"
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/narad-io/narad/internal/meta/metatest"
	"github.com/narad-io/narad/internal/metrics"
	"github.com/narad-io/narad/internal/storage"
	"github.com/narad-io/narad/internal/wal"
)

// newTestBroker is an in-process single node: a real one-member Raft
// metastore (metatest), an ingress WAL and a broker over real partition
// logs in a temporary directory. cfg's DataDir and NodeID are filled in.
func newTestBroker(t testing.TB, cfg Config) *Broker {
	t.Helper()
	dir := t.TempDir()
	ms := metatest.Leader(t, dir, "n1")
	w, err := wal.Open(filepath.Join(dir, "ingress"), wal.Options{})
	if err != nil {
		t.Fatal(err)
	}
	cfg.DataDir, cfg.NodeID = dir, "n1"
	b := New(cfg, ms, w, metrics.New())
	b.Start()
	b.OpenCreateGate()
	t.Cleanup(func() {
		b.Close()
		w.Close()
	})
	return b
}

func testCtx(t testing.TB) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	return ctx
}

func createTestTopic(t testing.TB, b *Broker, name string, partitions int) {
	t.Helper()
	if _, err := b.CreateTopic(testCtx(t), CreateTopicRequest{Name: name, Partitions: partitions}, ""); err != nil {
		t.Fatal(err)
	}
}

// commitSized commits n records of size bytes of payload each to
// topic/p, each payload filled with its index so a reader can tell them
// apart.
func commitSized(t testing.TB, b *Broker, topic string, p, n, size int) {
	t.Helper()
	recs := make([]storage.Record, n)
	for i := range recs {
		recs[i].Payload = bytes.Repeat([]byte{byte('a' + i%26)}, size)
	}
	if err := commitLocal(b, testCtx(t), topic, p, recs); err != nil {
		t.Fatal(err)
	}
}

// commitLocal commits records from elsewhere into whichever incarnation
// of topic is current (Commit with no source).
func commitLocal(b *Broker, ctx context.Context, topic string, p int, recs []storage.Record) error {
	return commitInc(b, ctx, topic, 0, p, recs)
}

// commitInc commits records from elsewhere pinned to incarnation inc.
func commitInc(b *Broker, ctx context.Context, topic string, inc uint64, p int, recs []storage.Record) error {
	_, err := b.Commit(ctx, topic, inc, p, recs, storage.Source{})
	return err
}
