package fanout

import (
	"sync"
	"sync/atomic"
	"time"
)

// reconcileState is the reconciler's memory between ticks (rules: tick
// every second, skip unchanged ticks).
type reconcileState struct {
	mu          sync.Mutex
	ticks       uint64
	caughtTicks uint64
	lastVersion uint64
	lastFull    time.Time
	wasCaught   bool
	dirty       bool // the last pass failed or left work behind

	exited atomic.Bool   // a cursor exited since the last pass
	passes atomic.Uint64 // full passes run
	skips  atomic.Uint64 // ticks that skipped the pass
}

// link is what a cursor needs from the child's record.
type link struct {
	epoch         string
	delayMs       int64
	attachOffsets []uint64
	remote        bool // a remote child: the slab goes to the sender (remote.go)
}

// Passes and Skips count full reconcile passes and skipped ticks.
func (e *Engine) Passes() uint64 { return e.rec.passes.Load() }
func (e *Engine) Skips() uint64  { return e.rec.skips.Load() }

// Tick is one reconcile interval. The full comparison decodes every topic
// record, so a tick skips it while LatestDomainVersion has not moved since
// the last full pass — except after a pass that failed or left work behind,
// after any cursor exited, on the first tick after the replica caught up
// again, on orphan-sweep ticks, and at least every 30 s (rule: skip
// unchanged ticks).
func (e *Engine) Tick() {
	r := &e.rec
	r.mu.Lock()
	defer r.mu.Unlock()
	caught := e.meta.AppliedCaughtUp()
	r.ticks++
	sweep := false
	if caught {
		r.caughtTicks++
		sweep = r.caughtTicks%uint64(e.cfg.SweepEveryTicks) == 0
	}
	v := e.meta.LatestDomainVersion()
	now := e.clk.Now()
	force := r.dirty || r.exited.Swap(false) || (caught && !r.wasCaught) || sweep ||
		now.Sub(r.lastFull) >= e.cfg.ForcedPassEvery || r.passes.Load() == 0
	r.wasCaught = caught
	if !force && v == r.lastVersion {
		r.skips.Add(1)
		return
	}
	r.lastVersion, r.lastFull = v, now
	r.dirty = !e.fullPass()
	r.passes.Add(1)
	if sweep {
		e.sweepOrphans()
	}
}

// fullPass starts the cursors this node should run (links × parent
// partitions it owns) and stops the others. It reports false when it left
// work behind.
func (e *Engine) fullPass() bool {
	clean := true
	desired := map[cursorKey]link{}
	for _, t := range e.meta.Topics() {
		if t.Parent == "" || t.AttachEpoch == "" {
			continue
		}
		parent, ok := e.meta.Topic(t.Parent)
		if !ok {
			continue
		}
		for p := 0; p < parent.Partitions; p++ {
			owner, ok := e.meta.Owner(parent.Name, p)
			if !ok || owner == "" {
				clean = false // ownership not readable (or not placed yet): look again next tick
				continue
			}
			if owner == e.self {
				desired[cursorKey{parent.Name, t.Name, p}] = link{epoch: t.AttachEpoch, delayMs: t.FanoutDelayMs,
					attachOffsets: t.AttachOffsets, remote: t.Remote != nil}
			}
		}
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	for k, c := range e.running {
		if d, ok := desired[k]; !ok || d.epoch != c.link.epoch {
			c.stop()
		}
		select {
		case <-c.done:
			delete(e.running, k)
		default:
			if c.stopping.Load() {
				clean = false // still draining
			}
		}
	}
	select {
	case <-e.stop:
		return clean
	default:
	}
	for k, l := range desired {
		if _, ok := e.running[k]; ok {
			continue
		}
		e.running[k] = e.startCursor(k, l)
	}
	return clean
}
