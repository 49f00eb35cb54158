package rpc

import (
	"context"
	"io"
	"log/slog"
	"net"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"google.golang.org/grpc"

	"github.com/narad-io/narad/internal/storage"
)

func TestPoolReusesOneConnectionPerAddress(t *testing.T) {
	addrA, _ := startServer(t, &fake{})
	addrB, _ := startServer(t, &fake{})
	var dials atomic.Int64
	p := newPool(testSecret)
	p.extra = []grpc.DialOption{grpc.WithContextDialer(func(ctx context.Context, addr string) (net.Conn, error) {
		dials.Add(1)
		return p.door.DialContext(ctx, addr)
	})}
	t.Cleanup(func() { p.Close() })
	ctx := context.Background()

	for range 5 {
		if err := p.Heartbeat(ctx, addrA, Member{ID: "n1"}); err != nil {
			t.Fatal(err)
		}
	}
	var wg sync.WaitGroup
	for range 16 {
		wg.Go(func() {
			if err := p.Commit(ctx, addrA, "t", 0, 0, []storage.Record{{Payload: []byte("x")}}, 0); err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
	if n := dials.Load(); n != 1 {
		t.Errorf("dials to one address = %d, want 1", n)
	}
	if err := p.Heartbeat(ctx, addrB, Member{ID: "n1"}); err != nil {
		t.Fatal(err)
	}
	p.mu.Lock()
	conns := len(p.conns)
	p.mu.Unlock()
	if n := dials.Load(); n != 2 || conns != 2 {
		t.Errorf("after a second address: dials %d, conns %d, want 2 and 2", n, conns)
	}
}

func TestPoolClosed(t *testing.T) {
	addr, _ := startServer(t, &fake{})
	p := NewPool(testSecret)
	if err := p.Heartbeat(context.Background(), addr, Member{}); err != nil {
		t.Fatal(err)
	}
	if err := p.Close(); err != nil {
		t.Fatal(err)
	}
	if ae := asAPIErr(t, p.Heartbeat(context.Background(), addr, Member{})); ae.Status != 503 {
		t.Errorf("after Close: %+v", ae)
	}
	if err := p.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}
}

// TestDeadlines checks the budget each call carries to the server: the
// per-method default without a caller deadline, the caller's when earlier,
// and the cap when the caller's is later.
func TestDeadlines(t *testing.T) {
	seen := make(chan time.Duration, 1)
	report := func(ctx context.Context) {
		dl, ok := ctx.Deadline()
		if !ok {
			seen <- -1
			return
		}
		seen <- time.Until(dl)
	}
	f := &fake{
		commit: func(ctx context.Context, _ string, _ uint64, _ int, _ []storage.Record, _ uint64) error {
			report(ctx)
			return nil
		},
		forward: func(ctx context.Context, _ ForwardRequest) (ForwardResponse, error) {
			report(ctx)
			return ForwardResponse{Status: 200}, nil
		},
		stats: func(ctx context.Context, _ string, _ []int) ([]PartitionStats, error) { report(ctx); return nil, nil },
	}
	addr, _ := startServer(t, f)
	p := testPool(t, testSecret)

	cases := []struct {
		name   string
		caller time.Duration // 0: no caller deadline
		call   func(ctx context.Context) error
		want   time.Duration
	}{
		{"commit default", 0, func(ctx context.Context) error { return p.Commit(ctx, addr, "t", 0, 0, nil, 0) }, CommitTimeout},
		{"commit caller earlier", 2 * time.Second, func(ctx context.Context) error { return p.Commit(ctx, addr, "t", 0, 0, nil, 0) }, 2 * time.Second},
		{"stats default", 0, func(ctx context.Context) error { _, err := p.Stats(ctx, addr, "t", nil, false); return err }, DefaultTimeout},
		{"forward default", 0, func(ctx context.Context) error { _, err := p.Forward(ctx, addr, ForwardRequest{}); return err }, DefaultTimeout},
		{"forward capped", 10 * time.Minute, func(ctx context.Context) error { _, err := p.Forward(ctx, addr, ForwardRequest{}); return err }, DefaultTimeout},
		{"forward with a long-poll's wait", 0, func(ctx context.Context) error {
			_, err := p.Forward(ctx, addr, ForwardRequest{Timeout: DefaultTimeout + 10*time.Second})
			return err
		}, DefaultTimeout + 10*time.Second},
		{"forward to the leader", 0, func(ctx context.Context) error {
			_, err := p.Forward(ctx, addr, ForwardRequest{Timeout: ForwardTimeout})
			return err
		}, ForwardTimeout},
		{"forward caller earlier", 3 * time.Second, func(ctx context.Context) error { _, err := p.Forward(ctx, addr, ForwardRequest{}); return err }, 3 * time.Second},
	}
	for _, c := range cases {
		ctx := context.Background()
		cancel := context.CancelFunc(func() {})
		if c.caller > 0 {
			ctx, cancel = context.WithTimeout(ctx, c.caller)
		}
		err := c.call(ctx)
		cancel()
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		// The server sees the budget minus transit time; a second of slack
		// keeps a loaded race-detector run from flaking.
		if got := <-seen; got > c.want || got < c.want-time.Second {
			t.Errorf("%s: server saw %v left, want about %v", c.name, got, c.want)
		}
	}
}

func TestStopWaitsForInFlightCalls(t *testing.T) {
	entered := make(chan struct{})
	f := &fake{heartbeat: func(context.Context, Member) error {
		close(entered)
		time.Sleep(200 * time.Millisecond)
		return nil
	}}
	s, addr, served := serveManually(t, f, WithStopGrace(5*time.Second))
	p := testPool(t, testSecret)
	res := make(chan error, 1)
	go func() { res <- p.Heartbeat(context.Background(), addr, Member{}) }()
	<-entered
	s.Stop()
	if err := <-res; err != nil {
		t.Errorf("in-flight call cut off by a graceful Stop: %v", err)
	}
	if err := <-served; err != nil {
		t.Errorf("Serve: %v", err)
	}
}

func TestStopIsBounded(t *testing.T) {
	entered := make(chan struct{})
	cancelled := make(chan struct{})
	f := &fake{heartbeat: func(ctx context.Context, _ Member) error {
		close(entered)
		<-ctx.Done() // a handler stuck until told to give up
		close(cancelled)
		return ctx.Err()
	}}
	s, addr, served := serveManually(t, f, WithStopGrace(200*time.Millisecond))
	p := testPool(t, testSecret)
	res := make(chan error, 1)
	go func() { res <- p.Heartbeat(context.Background(), addr, Member{}) }()
	<-entered
	start := time.Now()
	s.Stop()
	if took := time.Since(start); took > 2*time.Second {
		t.Errorf("Stop took %v with a 200ms grace", took)
	}
	<-cancelled
	if ae := asAPIErr(t, <-res); ae.Status != 503 {
		t.Errorf("cut-off call: %+v, want 503", ae)
	}
	if err := <-served; err != nil {
		t.Errorf("Serve: %v", err)
	}
}

// serveManually is startServer for tests that call Stop themselves.
func serveManually(t *testing.T, h Handler, opts ...ServerOption) (*Server, string, <-chan error) {
	t.Helper()
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	opts = append([]ServerOption{WithLogger(slog.New(slog.NewTextHandler(io.Discard, nil)))}, opts...)
	s, err := NewServer(testSecret, h, opts...)
	if err != nil {
		t.Fatal(err)
	}
	served := make(chan error, 1)
	go func() { served <- s.Serve(lis) }()
	return s, lis.Addr().String(), served
}
