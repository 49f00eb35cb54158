package broker

import (
	"bytes"
	"context"
	"log/slog"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/narad-io/narad/internal/meta"
	"github.com/narad-io/narad/internal/meta/metatest"
	"github.com/narad-io/narad/internal/metrics"
	"github.com/narad-io/narad/internal/storage"
	"github.com/narad-io/narad/internal/vfs"
	"github.com/narad-io/narad/internal/vfs/errorfs"
)

// testNode is an in-process single node: a real one-member Raft metastore
// and a broker whose partition logs sit on an errorfs over a temporary
// directory. restart replaces the broker (the metastore stays), the way a
// process restart would find the data directory.
type testNode struct {
	t    *testing.T
	dir  string
	ms   *meta.Store
	fs   *errorfs.FS
	logs *syncBuffer
	cfg  Config
	b    *Broker
	m    *metrics.Metrics
}

type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

func newTestNode(t *testing.T, cfg Config) *testNode {
	t.Helper()
	dir := t.TempDir()
	ms := metatest.Leader(t, dir, "n1")
	n := &testNode{t: t, dir: dir, ms: ms, fs: errorfs.New(vfs.Default), logs: &syncBuffer{}}
	cfg.DataDir, cfg.NodeID = dir, "n1"
	cfg.Logger = slog.New(slog.NewTextHandler(n.logs, nil))
	cfg.FS = n.fs
	n.cfg = cfg
	n.start()
	t.Cleanup(func() {
		n.b.Close()
		if t.Failed() {
			t.Logf("node log:\n%s", n.logs.String())
		}
	})
	return n
}

func (n *testNode) start() {
	n.m = metrics.New()
	n.b = New(n.cfg, n.ms, nil, n.m)
	n.b.Start()
	n.b.OpenCreateGate()
}

// restart closes the broker and starts a new one over the same data; mod
// may change its configuration first.
func (n *testNode) restart(mod func(*Config)) {
	n.t.Helper()
	if err := n.b.Close(); err != nil {
		n.t.Logf("close: %v", err)
	}
	if mod != nil {
		mod(&n.cfg)
	}
	n.start()
}

func (n *testNode) createTopic(name string, partitions int) {
	n.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if _, err := n.b.CreateTopic(ctx, CreateTopicRequest{Name: name, Partitions: partitions}, ""); err != nil {
		n.t.Fatal(err)
	}
}

func (n *testNode) commit(topic string, p int, payloads ...string) error {
	recs := make([]storage.Record, len(payloads))
	for i, s := range payloads {
		recs[i].Payload = []byte(s)
	}
	return commitLocal(n.b, context.Background(), topic, p, recs)
}

func (n *testNode) partDir(topic string, p int) string {
	n.t.Helper()
	d, err := n.b.parts.Dir(topic, p)
	if err != nil {
		n.t.Fatal(err)
	}
	return d
}

// consume leases up to max records (pinned to p when p >= 0) and returns
// their payloads and offsets.
func (n *testNode) consume(topic string, p, max int) ([]Message, error) {
	req := ConsumeRequest{Topic: topic, Max: max}
	if p >= 0 {
		req.Partition = &p
	}
	return n.b.Consume(context.Background(), req)
}

func (n *testNode) replay(topic string, p int, from uint64, max int) ([]Message, error) {
	return n.b.Consume(context.Background(), ConsumeRequest{Topic: topic, Partition: &p, Offset: &from, Max: max})
}

// metric reads one series from the exposition (-1 when absent).
func (n *testNode) metric(series string) float64 {
	rec := httptest.NewRecorder()
	n.m.Handler().ServeHTTP(rec, httptest.NewRequest("GET", "/metrics", nil))
	for _, line := range strings.Split(rec.Body.String(), "\n") {
		if v, ok := strings.CutPrefix(line, series+" "); ok {
			f, _ := strconv.ParseFloat(v, 64)
			return f
		}
	}
	return -1
}

func payloadsOf(msgs []Message) []string {
	out := make([]string, len(msgs))
	for i, m := range msgs {
		out[i] = string(m.Payload)
	}
	return out
}
