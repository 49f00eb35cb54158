package server

import (
	"sync/atomic"

	"github.com/narad-io/narad/internal/dispatch"
	"github.com/narad-io/narad/internal/fanout"
	"github.com/narad-io/narad/internal/replica"
)

// The dispatcher and the fan-out engine are built from the broker (its
// commit, its partitions), and the broker asks each of them one thing:
// the dispatcher whether a partition still waits for its WAL tail, the
// engine for its cursor files. The broker takes both as constructor
// arguments; these answer for the component until it is built, then ask
// it. The cycle is the wiring's, kept here, not a setter on the broker.

// replayGate is the dispatcher's Replaying (broker.Config.ReplayGate):
// false until the dispatcher is bound, as no commit is then owed.
type replayGate struct {
	d atomic.Pointer[dispatch.Dispatcher]
}

func (g *replayGate) Replaying(topic string, p int) bool {
	d := g.d.Load()
	return d != nil && d.Replaying(topic, p)
}

// cursorFiles is the fan-out engine's cursor files
// (broker.Config.CursorCopies): none, and nothing written, until the
// engine is bound.
type cursorFiles struct{ e atomic.Pointer[fanout.Engine] }

func (c *cursorFiles) CursorCopies(parent string, p int) ([]replica.CursorPosition, error) {
	if e := c.e.Load(); e != nil {
		return e.CursorCopies(parent, p)
	}
	return nil, nil
}

func (c *cursorFiles) WriteCursorCopy(parent string, p int, pos replica.CursorPosition) (bool, error) {
	if e := c.e.Load(); e != nil {
		return e.WriteCursorCopy(parent, p, pos)
	}
	return false, nil
}
