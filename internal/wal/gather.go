package wal

import "time"

// How the syncer gathers a group (the rule of doc.go's "Group commit").
//
// A released appender's next records come back only after its caller has
// answered its client and read the next request. On a loopback HTTP node
// that round trip is several fdatasyncs long (150-300 µs syncs against
// 1-2 ms round trips on a 2-core machine), so a syncer that takes whatever
// is staged the moment its previous sync ends splits the producers into
// small groups: 16 HTTP producers shared a sync only 6 at a time.
//
// So after releasing a group the syncer expects as many appenders as were
// in the WAL at that moment (the ones it released plus the ones that staged
// during the sync, counted in publish before the release, so that a
// released appender quick to stage again is not counted twice), and before taking the next batch it waits, until
// GatherWait after the release at most, for that many to be staged. Append wakes it when the count
// is reached, so the wait ends as soon as the group is whole. It never
// waits with nothing staged (it sleeps on the wake channel then, as
// before), nor for a group of one, so a lone appender is never delayed;
// nor while an append waits for buffer space, after a failure, or once the
// WAL is closing. The bound counts from the release, so producers that come
// back slowly (a trickle of requests from a few clients) are not delayed:
// by the time the first of them stages, the bound has passed. A group that did not fill sets the next expectation to
// what did come, so appenders that left cost at most one wait.
//
// Lingering changes only when a batch is taken, never what a batch is:
// staged records are still made durable, or failed, together, and nothing
// is visible before its sync.

// gather waits, at most bound, until target appends are staged. It returns
// at once when nothing or enough is staged, or when waiting cannot help.
func (w *WAL) gather(target int, bound time.Duration) {
	if target <= 1 || bound <= 0 {
		return
	}
	// A wake sent before the check below is stale (the buffer became
	// non-empty): drop it, so only a wake that follows the check counts.
	select {
	case <-w.wake:
	default:
	}
	w.mu.Lock()
	if !w.mayGather(target) {
		w.mu.Unlock()
		return
	}
	w.gatherAt = target
	w.mu.Unlock()
	w.lingers.Add(1)

	t := w.gatherTimer
	t.Reset(bound)
	for done := false; !done; {
		select {
		case <-w.wake:
			w.mu.Lock()
			done = !w.mayGather(target)
			w.mu.Unlock()
		case <-t.C:
			done = true
		case <-w.quit:
			done = true
		case req := <-w.rotateReq: // the dispatcher's SetCheckpoint need not wait out the gather
			req <- w.rotateIfDispatched()
		}
	}
	t.Stop()
	w.mu.Lock()
	w.gatherAt = 0
	w.mu.Unlock()
}

// mayGather reports whether waiting for target staged appends can still
// help. Called with mu held.
func (w *WAL) mayGather(target int) bool {
	staged := w.cur.appends
	return staged > 0 && staged < target && !w.closed && w.fenced == nil && w.cur.taken == nil
}

// newGatherTimer returns a stopped timer for gather to reset.
func newGatherTimer() *time.Timer {
	t := time.NewTimer(time.Hour)
	t.Stop()
	return t
}
