package rpc

import (
	"context"
	"errors"
	"net"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/narad-io/narad/internal/apierr"
	"github.com/narad-io/narad/internal/refusal"
	nodepb "github.com/narad-io/narad/internal/rpc/proto"
	"github.com/narad-io/narad/internal/storage"
)

// A kept connection its node closed meanwhile (the node restarted) is
// not the caller's problem: the call goes again, once, on a new one.
func TestAConnectionClosedByARestartedNodeIsReplaced(t *testing.T) {
	first := &fake{}
	s, addr, served := serveManually(t, first)
	p := testPool(t, testSecret)
	ctx := context.Background()
	if err := p.Commit(ctx, addr, "t", 0, 0, nil, 0); err != nil {
		t.Fatal(err)
	}
	s.Stop()
	if err := <-served; err != nil {
		t.Fatal(err)
	}
	lis, err := net.Listen("tcp", addr)
	if err != nil {
		t.Skipf("the port could not be bound again: %v", err)
	}
	second := &fake{}
	s2, err := NewServer(testSecret, second)
	if err != nil {
		t.Fatal(err)
	}
	go s2.Serve(lis)
	t.Cleanup(s2.Stop)
	if err := p.Commit(ctx, addr, "t", 0, 0, nil, 0); err != nil {
		t.Fatalf("the first commit after the node restarted: %v", err)
	}
	if n := second.calls.Load(); n != 1 {
		t.Fatalf("the restarted node served %d commits, want 1", n)
	}
}

// A call whose caller gives up is a 503, like a gRPC call's; its
// connection is closed, not reused, and the next call gets a new one.
func TestAnAbandonedFramedCallIs503(t *testing.T) {
	release := make(chan struct{})
	var served atomic.Int64
	f := &fake{commit: func(ctx context.Context, topic string, _ uint64, _ int, _ []storage.Record, _ uint64) error {
		served.Add(1)
		if topic == "slow" {
			select {
			case <-release:
			case <-ctx.Done():
				return ctx.Err()
			}
		}
		return nil
	}}
	addr, _ := startServer(t, f)
	p := testPool(t, testSecret)
	for _, give := range []string{"deadline", "cancel"} {
		ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
		if give == "cancel" {
			ctx, cancel = context.WithCancel(context.Background())
			time.AfterFunc(200*time.Millisecond, cancel)
		}
		err := p.Commit(ctx, addr, "slow", 0, 0, nil, 0)
		cancel()
		if ae := asAPIErr(t, err); ae.Status != http.StatusServiceUnavailable || errors.Is(err, refusal.ErrUndelivered) {
			t.Fatalf("%s: %v, want a 503 not marked undelivered", give, err)
		}
	}
	// A cancelled call's connection is closed (past a deadline the
	// server's own 503 may come first, on a connection that stays good).
	if open, _ := framedOpen(p, addr); open != 0 {
		t.Fatalf("%d connections still open after a cancelled call", open)
	}
	close(release)
	if err := p.Commit(context.Background(), addr, "t", 0, 0, nil, 0); err != nil {
		t.Fatal(err)
	}
	if n := served.Load(); n != 3 {
		t.Fatalf("served %d commits, want 3", n)
	}
}

// Stop lets a framed call in progress finish and closes the idle
// connections; past its grace it cancels the call, which the caller
// hears as a 503.
func TestStopAndFramedCalls(t *testing.T) {
	for _, c := range []struct {
		name  string
		grace time.Duration
		want  int // the commit's status; 0: it succeeds
	}{{"graceful", 5 * time.Second, 0}, {"bounded", 200 * time.Millisecond, http.StatusServiceUnavailable}} {
		t.Run(c.name, func(t *testing.T) {
			entered := make(chan struct{})
			f := &fake{commit: func(ctx context.Context, topic string, _ uint64, _ int, _ []storage.Record, _ uint64) error {
				if topic != "held" {
					return nil
				}
				close(entered)
				select {
				case <-time.After(500 * time.Millisecond):
					return nil
				case <-ctx.Done():
					return ctx.Err()
				}
			}}
			s, addr, served := serveManually(t, f, WithStopGrace(c.grace))
			p := testPool(t, testSecret)
			// Another node's call leaves a connection idle on the server.
			if err := testPool(t, testSecret).Commit(context.Background(), addr, "idle", 0, 0, nil, 0); err != nil {
				t.Fatal(err)
			}
			res := make(chan error, 1)
			go func() { res <- p.Commit(context.Background(), addr, "held", 0, 0, nil, 0) }()
			<-entered
			start := time.Now()
			s.Stop()
			// The idle connection was closed, not waited for: a graceful
			// Stop ends with the held call (500 ms), long before its grace.
			if took := time.Since(start); c.want == 0 && took > c.grace-time.Second {
				t.Errorf("Stop took %v with the only call done after 500ms", took)
			}
			err := <-res
			if c.want == 0 && err != nil {
				t.Fatalf("in-flight call cut off by a graceful Stop: %v", err)
			}
			if c.want != 0 && (err == nil || asAPIErr(t, err).Status != c.want) {
				t.Fatalf("cut-off call: %v, want %d", err, c.want)
			}
			if err := <-served; err != nil {
				t.Errorf("Serve: %v", err)
			}
		})
	}
}

// The budget a request carries is its handler's deadline; a handler that
// fails once it has passed is answered 503 with Retry-After, as a gRPC
// call past its deadline is, not as an internal error.
func TestAFramedCallPastItsBudgetIs503(t *testing.T) {
	f := &fake{commit: func(ctx context.Context, _ string, _ uint64, _ int, _ []storage.Record, _ uint64) error {
		<-ctx.Done()
		return ctx.Err()
	}}
	addr, logs := startServer(t, f)
	p := testPool(t, testSecret)
	c := rawFramed(t, p, addr)
	fr, fw := newFrameReader(c), &frameWriter{w: c}
	if err := fw.write(opCommit, 50, &nodepb.CommitRequest{Topic: "held"}); err != nil {
		t.Fatal(err)
	}
	ans, err := fr.read()
	e := &nodepb.Error{}
	if err != nil || ans.kind != answerError || unmarshalTest(ans.msg, e) != nil {
		t.Fatalf("answer kind %d, %v", ans.kind, err)
	}
	if e.GetStatus() != http.StatusServiceUnavailable || e.GetRetryAfterMs() != unreachableRetry.Milliseconds() {
		t.Fatalf("answered %+v, want a 503 with Retry-After", e)
	}
	if strings.Contains(logs.String(), "handler failed") {
		t.Errorf("a call past its budget was logged as a failure: %s", logs)
	}
}

// A commit or a forwarded request whose caller gives up is cancelled on
// the serving node, as a gRPC call is: a forwarded long-poll consume must
// not go on to lease records for a client that left, nor a commit wait
// out its budget for copies that are cut off. Its connection is closed,
// and the next call gets another.
func TestAnAbandonedCallIsCancelledWhereItRuns(t *testing.T) {
	for _, op := range []string{"commit", "forward"} {
		t.Run(op, func(t *testing.T) {
			entered := make(chan struct{})
			cancelled := make(chan struct{})
			hold := func(ctx context.Context) error {
				close(entered)
				<-ctx.Done()
				close(cancelled)
				return ctx.Err()
			}
			f := &fake{
				forward: func(ctx context.Context, req ForwardRequest) (ForwardResponse, error) {
					if req.Path != "/v1/topics/t/consume" {
						return ForwardResponse{Status: 200, Body: []byte(req.Path)}, nil
					}
					return ForwardResponse{}, hold(ctx)
				},
				commit: func(ctx context.Context, topic string, _ uint64, _ int, _ []storage.Record, _ uint64) error {
					if topic != "held" {
						return nil
					}
					return hold(ctx)
				},
			}
			addr, _ := startServer(t, f)
			p := testPool(t, testSecret)
			ctx, cancel := context.WithCancel(context.Background())
			res := make(chan error, 1)
			go func() {
				if op == "commit" {
					res <- p.Commit(ctx, addr, "held", 0, 0, nil, 0)
					return
				}
				_, err := p.Forward(ctx, addr, ForwardRequest{Method: "POST", Path: "/v1/topics/t/consume", Timeout: time.Minute})
				res <- err
			}()
			<-entered
			cancel()
			if ae := asAPIErr(t, <-res); ae.Status != http.StatusServiceUnavailable {
				t.Fatalf("abandoned %s: %+v, want a 503", op, ae)
			}
			select {
			case <-cancelled:
			case <-time.After(10 * time.Second):
				t.Fatalf("the abandoned %s's handler ran on, with most of its budget left", op)
			}
			resp, err := p.Forward(context.Background(), addr, ForwardRequest{Method: "GET", Path: "/v1/topics"})
			if err != nil || resp.Status != 200 || string(resp.Body) != "/v1/topics" {
				t.Fatalf("the next call: %+v, %v", resp, err)
			}
			if err := p.Commit(context.Background(), addr, "t", 0, 0, nil, 0); err != nil {
				t.Fatal(err)
			}
			if open, grpcConn := framedOpen(p, addr); open != 1 || grpcConn {
				t.Fatalf("framed connections %d, a gRPC connection %v; want 1 and none", open, grpcConn)
			}
		})
	}
}

// A node no connection could be made to is not dialled again for every
// call: until its redial wait has passed, calls that need a connection
// fail at once, marked undelivered, without a connect; after it, the next
// call dials again.
func TestCallsToANodeThatCannotBeReachedFailFast(t *testing.T) {
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	// A port that accepts and then says nothing, as a node cut off
	// mid-handshake: a dial to it lasts as long as its caller lets it.
	var accepted atomic.Int64
	var held sync.WaitGroup
	held.Go(func() {
		var conns []net.Conn
		defer func() {
			for _, c := range conns {
				c.Close()
			}
		}()
		for {
			c, err := lis.Accept()
			if err != nil {
				return
			}
			accepted.Add(1)
			conns = append(conns, c)
		}
	})
	t.Cleanup(func() { lis.Close(); held.Wait() })
	addr := lis.Addr().String()
	p := testPool(t, testSecret)
	p.framed.redial = time.Minute // the calls below all fall within it, however slow the machine
	for i := range 3 {
		ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
		err := p.Commit(ctx, addr, "t", 0, 0, nil, 0)
		cancel()
		if !errors.Is(err, refusal.ErrUndelivered) || apierr.Status(err) != http.StatusServiceUnavailable {
			t.Fatalf("call %d: %v, want a 503 marked undelivered", i, err)
		}
	}
	if n := accepted.Load(); n != 1 {
		t.Fatalf("%d connections to the silent node, want 1 (the calls after the failed dial fail at once)", n)
	}
	if _, dial, down := p.framed.take(addr, time.Now().Add(time.Minute)); !dial || down != nil {
		t.Fatal("the node is never dialled again")
	}
}
