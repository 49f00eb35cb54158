package server

import (
	"context"
	"log/slog"
	"net"
	"net/http"
	"sync/atomic"
	"testing"
)

// TestGroupStopJoinsEveryGoroutine: Stop cancels the group's context and
// returns only after every goroutine returned — also one that is slow to
// wind down — and after every listener's stop was called and its serve
// returned.
func TestGroupStopJoinsEveryGoroutine(t *testing.T) {
	g := newGroup(slog.New(slog.DiscardHandler))
	var finished atomic.Int32
	for range 3 {
		g.Go("worker", func(ctx context.Context) { <-ctx.Done(); finished.Add(1) })
	}
	entered, release := make(chan struct{}), make(chan struct{})
	g.Go("slow", func(ctx context.Context) {
		<-ctx.Done()
		close(entered)
		<-release
		finished.Add(1)
	})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{}
	var served atomic.Bool
	g.Serve("listener", func() error {
		err := srv.Serve(ln)
		served.Store(true)
		return err
	}, func() { srv.Close() })

	stopped := make(chan struct{})
	go func() { g.Stop(); close(stopped) }()
	<-entered
	select {
	case <-stopped:
		t.Fatal("Stop returned while a goroutine was still winding down")
	default:
	}
	close(release)
	<-stopped
	if n := finished.Load(); n != 4 {
		t.Fatalf("%d of 4 goroutines had returned when Stop did", n)
	}
	if !served.Load() {
		t.Fatal("Stop returned before the listener's serve did")
	}
	g.Stop() // again: a no-op
}
