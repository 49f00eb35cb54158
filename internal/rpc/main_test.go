package rpc

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/narad-io/narad/internal/apierr"
	"github.com/narad-io/narad/internal/storage"
)

// Every test stops its servers and closes its pools; goleak proves that
// leaves no gRPC goroutine behind.
func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

const testSecret = "s3cret-of-the-cluster"

// fake is a Handler whose methods count calls and delegate to optional
// functions; a nil function answers with zero values.
type fake struct {
	calls     atomic.Int64
	exact     atomic.Bool // the last Stats call asked for exact tails
	commit    func(context.Context, string, uint64, int, []storage.Record, uint64) error
	forward   func(context.Context, ForwardRequest) (ForwardResponse, error)
	stats     func(context.Context, string, []int) ([]PartitionStats, error)
	confirm   func(context.Context, string, string) (bool, bool, uint64, error)
	join      func(context.Context, Member) (JoinResult, error)
	heartbeat func(context.Context, Member) error
	// reports, if set, is handed the unreachable leaders a heartbeat carried.
	reports func([]UnreachableLeader)
	wait    func(context.Context, string, time.Duration) (bool, error)
	fetch   func(context.Context, FetchRequest) (FetchResponse, error)
}

func (f *fake) Propose(ctx context.Context, cmd []byte) error {
	f.calls.Add(1)
	if string(cmd) == "refuse" {
		return errDisk
	}
	return nil
}

func (f *fake) Fetch(ctx context.Context, req FetchRequest) (FetchResponse, error) {
	f.calls.Add(1)
	if f.fetch == nil {
		return FetchResponse{}, nil
	}
	return f.fetch(ctx, req)
}

func (f *fake) Commit(ctx context.Context, topic string, incarnation uint64, partition int, recs []storage.Record, metaVersion uint64) error {
	f.calls.Add(1)
	if f.commit == nil {
		return nil
	}
	return f.commit(ctx, topic, incarnation, partition, recs, metaVersion)
}

func (f *fake) Forward(ctx context.Context, req ForwardRequest) (ForwardResponse, error) {
	f.calls.Add(1)
	if f.forward == nil {
		return ForwardResponse{}, nil
	}
	return f.forward(ctx, req)
}

func (f *fake) Stats(ctx context.Context, topic string, partitions []int, exact bool) ([]PartitionStats, error) {
	f.calls.Add(1)
	f.exact.Store(exact)
	if f.stats == nil {
		return nil, nil
	}
	return f.stats(ctx, topic, partitions)
}

func (f *fake) ConfirmTopic(ctx context.Context, name, epoch string) (bool, bool, uint64, error) {
	f.calls.Add(1)
	if f.confirm == nil {
		return false, false, 0, nil
	}
	return f.confirm(ctx, name, epoch)
}

func (f *fake) Join(ctx context.Context, m Member) (JoinResult, error) {
	f.calls.Add(1)
	if f.join == nil {
		return JoinResult{}, nil
	}
	return f.join(ctx, m)
}

func (f *fake) Heartbeat(ctx context.Context, m Member, unreachable []UnreachableLeader) error {
	f.calls.Add(1)
	if f.reports != nil {
		f.reports(unreachable)
	}
	if f.heartbeat == nil {
		return nil
	}
	return f.heartbeat(ctx, m)
}

func (f *fake) Wait(ctx context.Context, topic string, wait time.Duration) (bool, error) {
	f.calls.Add(1)
	if f.wait == nil {
		return false, nil
	}
	return f.wait(ctx, topic, wait)
}

func (f *fake) ConfirmOwner(ctx context.Context, topic string, p int) (string, string, error) {
	f.calls.Add(1)
	return "n1", "n2", nil
}

func (f *fake) ReadIndex(ctx context.Context) (uint64, error) {
	f.calls.Add(1)
	return 4242, nil
}

func (f *fake) Flip(ctx context.Context, topic string, p int, from, to string) error {
	f.calls.Add(1)
	return nil
}

func (f *fake) MoveFreeze(ctx context.Context, topic string, p int, ttl time.Duration, holder string) (uint64, error) {
	f.calls.Add(1)
	return uint64(ttl.Milliseconds()) + uint64(len(holder)), nil
}

func (f *fake) MoveFiles(ctx context.Context, topic string, p int) ([]MoveFile, uint64, error) {
	f.calls.Add(1)
	return []MoveFile{{Name: topic, Size: int64(p)}}, 7, nil
}

func (f *fake) MoveRead(ctx context.Context, topic string, p int, name string, offset, length int64) ([]byte, error) {
	f.calls.Add(1)
	return []byte(fmt.Sprintf("%s/%d/%s@%d+%d", topic, p, name, offset, length)), nil
}

// logBuf collects a server's log lines so tests can check what was logged.
type logBuf struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *logBuf) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *logBuf) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// startServer serves h on a loopback port until the test ends and returns
// the address and the server's log.
func startServer(t testing.TB, h Handler, opts ...ServerOption) (string, *logBuf) {
	t.Helper()
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	logs := &logBuf{}
	opts = append([]ServerOption{WithLogger(slog.New(slog.NewTextHandler(logs, nil)))}, opts...)
	s, err := NewServer(testSecret, h, opts...)
	if err != nil {
		lis.Close()
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- s.Serve(lis) }()
	t.Cleanup(func() {
		s.Stop()
		if err := <-done; err != nil {
			t.Errorf("Serve: %v", err)
		}
	})
	return lis.Addr().String(), logs
}

// testPool returns a pool closed when the test ends (before the servers
// started earlier stop, cleanups running in reverse).
func testPool(t testing.TB, secret string) *Pool {
	t.Helper()
	p := NewPool(secret)
	t.Cleanup(func() { p.Close() })
	return p
}

// insiderPool passes the peer handshake with the cluster's key but
// presents secret on every call: a peer that got in and then lies, for the
// per-call check.
func insiderPool(t *testing.T, secret string) *Pool {
	t.Helper()
	p := testPool(t, testSecret)
	p.secret = secret
	return p
}

// asAPIErr requires err to be exactly an *apierr.Error, as every Pool
// method promises.
func asAPIErr(t *testing.T, err error) *apierr.Error {
	t.Helper()
	var ae *apierr.Error
	if !errors.As(err, &ae) {
		t.Fatalf("error %v (%T) is not an *apierr.Error", err, err)
	}
	return ae
}

// freeAddr returns a loopback address nobody listens on.
func freeAddr(t *testing.T) string {
	t.Helper()
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := lis.Addr().String()
	lis.Close()
	return addr
}

var errDisk = errors.New("disk on fire")
