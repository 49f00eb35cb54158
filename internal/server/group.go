package server

import (
	"context"
	"log/slog"
	"sync"
)

// group runs a node's long-lived goroutines and stops them together: Stop
// cancels the context they were given and returns only once every one of
// them has returned, so the components they use may be closed right after
// it. Its context is its own, not the caller's: background work goes on
// while the client API drains, and ends when the node stops.
type group struct {
	ctx    context.Context
	cancel context.CancelFunc
	wg     sync.WaitGroup
	log    *slog.Logger
}

func newGroup(log *slog.Logger) *group {
	ctx, cancel := context.WithCancel(context.Background())
	return &group{ctx: ctx, cancel: cancel, log: log}
}

// Go runs fn in the group; fn must return once its context is done. Go is
// not called after Stop.
func (g *group) Go(name string, fn func(ctx context.Context)) {
	g.wg.Add(1)
	go func() {
		defer g.wg.Done()
		fn(g.ctx)
		g.log.Debug("stopped", "task", name)
	}()
}

// Serve runs serve (a listener's accept loop) in the group: when the group
// stops, stop is called, and serve must then return. An error serve
// returns by itself is logged: the node goes on without that listener, as
// it would if the listener had never started.
func (g *group) Serve(name string, serve func() error, stop func()) {
	g.Go(name, func(ctx context.Context) {
		errc := make(chan error, 1)
		go func() { errc <- serve() }()
		select {
		case err := <-errc:
			if err != nil {
				g.log.Error("listener stopped", "task", name, "err", err)
			}
		case <-ctx.Done():
			stop()
			<-errc
		}
	})
}

// Stop cancels the group's context and waits for every goroutine. It may
// be called more than once.
func (g *group) Stop() {
	g.cancel()
	g.wg.Wait()
}
