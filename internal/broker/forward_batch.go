package broker

import (
	"context"
	"slices"
	"sync"
	"time"

	"github.com/narad-io/narad/internal/storage"
)

// Coalesced forwards: the produces a node forwards to a replicated
// partition's leader (commitReplicated) share node RPCs. While one
// forwarded commit of a partition is in flight, the produces that arrive
// for the same partition wait together, and the next commit carries all
// of them: one RPC, one commit on the leader — one fdatasync there and
// on each follower — for as many produces as arrived meanwhile, as the
// ingress WAL's group commit does for a node's own disk. Each produce
// learns its own records' offsets and shares the commit's outcome: a
// failed commit fails every produce in it, each of which its client
// retries (a msg_id makes the retry idempotent, as for any failed
// replicated produce).
//
// Invariant: a produce's records are committed together, contiguous and
// in their order, in at most one commit (none when the produce stopped
// waiting before they were sent); no commit reads them once the produce
// has returned; and a partition has at most one forwarded commit of this
// node in flight.

// Bounds of one coalesced commit: a produce's own (MaxBatchRecords and
// the batch body's 16 MiB), so the leader takes nothing bigger than one
// produce could send it. A produce over them goes alone.
const (
	forwardMaxRecords = MaxBatchRecords
	forwardMaxBytes   = MaxBatchBodySize
)

// forwardKey names a partition of a topic's incarnation.
type forwardKey struct {
	topic       string
	incarnation uint64
	partition   int
}

// forwards is a node's coalescing of forwarded commits, per partition.
// failed holds when the last forwarded commit of a partition failed,
// until one succeeds (stalled).
type forwards struct {
	mu     sync.Mutex
	queues map[forwardKey]*forwardQueue
	failed map[forwardKey]time.Time
}

// forwardQueue is one partition's produces waiting for the next commit.
// It is in forwards.queues exactly while a goroutine is sending for the
// partition (send drops it when it hands on to no one); the commit in
// flight was sent at since.
type forwardQueue struct {
	since   time.Time
	pending []*forwardWaiter
}

type forwardWaiter struct {
	recs []storage.Record // the produce's bucket; offsets are set in place
	done chan error
}

// commit commits recs through send, coalesced with the other produces of
// the same partition: send commits a merged bucket, setting each
// record's Offset, on a context of its own (no one produce's deadline
// bounds the others'). commit returns send's outcome for the commit that
// carried recs. A produce that stops waiting (ctx) while its records are
// still queued takes them out and returns ctx's error: they are never
// sent. One whose records are already in a commit in flight waits for
// that commit's outcome, bounded by send's own context: its records are
// the caller's memory (the HTTP edge reuses a request's body buffer once
// the produce returns), so commit must not return while send may still
// read them. Returning at once there stored another request's bytes in
// their place (the network-fault soak found records holding the start
// of a produce answer).
func (f *forwards) commit(ctx context.Context, k forwardKey, recs []storage.Record, send func(recs []storage.Record) error) error {
	w := &forwardWaiter{recs: recs, done: make(chan error, 1)}
	f.mu.Lock()
	if f.queues == nil {
		f.queues = map[forwardKey]*forwardQueue{}
	}
	q := f.queues[k]
	if q == nil {
		// Nothing in flight: this produce sends at once, itself, and
		// hands on to a goroutine only the produces that arrive
		// meanwhile — an uncontended forward costs no extra hop.
		q = &forwardQueue{pending: []*forwardWaiter{w}}
		f.queues[k] = q
		f.mu.Unlock()
		f.send(k, q, send)
		return <-w.done
	}
	q.pending = append(q.pending, w)
	f.mu.Unlock()
	select {
	case err := <-w.done:
		return err
	case <-ctx.Done():
	}
	f.mu.Lock()
	queued := slices.Contains(q.pending, w)
	if queued {
		q.pending = slices.DeleteFunc(q.pending, func(x *forwardWaiter) bool { return x == w })
	}
	f.mu.Unlock()
	if queued {
		return ctx.Err()
	}
	return <-w.done // in flight: send returns within its own bound
}

// send sends the produces waiting in q as one commit, as many as the
// bounds allow, and hands the partition on: to a goroutine that sends
// the next when more wait, else to no one (the queue is dropped).
func (f *forwards) send(k forwardKey, q *forwardQueue, send func([]storage.Record) error) {
	f.mu.Lock()
	if len(q.pending) == 0 {
		// Every produce handed on here stopped waiting first.
		delete(f.queues, k)
		f.mu.Unlock()
		return
	}
	n, records, bytes := 0, 0, 0
	for n < len(q.pending) {
		r, b := len(q.pending[n].recs), recordsSize(q.pending[n].recs)
		if n > 0 && (records+r > forwardMaxRecords || bytes+b > forwardMaxBytes) {
			break
		}
		n, records, bytes = n+1, records+r, bytes+b
	}
	batch := q.pending[:n:n]
	q.pending = q.pending[n:]
	q.since = time.Now()
	f.mu.Unlock()

	merged := batch[0].recs
	if len(batch) > 1 {
		merged = make([]storage.Record, 0, records)
		for _, w := range batch {
			merged = append(merged, w.recs...)
		}
	}
	err := send(merged)
	if len(batch) > 1 {
		at := 0
		for _, w := range batch {
			for i := range w.recs {
				w.recs[i].Offset = merged[at].Offset
				at++
			}
		}
	}
	for _, w := range batch {
		w.done <- err
	}

	f.mu.Lock()
	defer f.mu.Unlock()
	if err != nil {
		if f.failed == nil {
			f.failed = map[forwardKey]time.Time{}
		}
		f.failed[k] = time.Now()
	} else {
		delete(f.failed, k)
	}
	if len(q.pending) == 0 {
		delete(f.queues, k)
		return
	}
	go f.send(k, q, send)
}

// stallAfter is how long a forwarded commit may be in flight before its
// partition counts as stalled on this node (stalled): a LAN commit takes
// milliseconds, and one the leader cannot answer waits out its whole
// budget (replicatedCommitHop plus the leader's quorum wait).
const stallAfter = time.Second

// stalled reports whether the partition k counts as stalled on this node
// at now: a forwarded commit of it has been in flight for more than
// stallAfter (its leader is cut off from this node, or cannot reach a
// quorum of its copies, or is slow), or its last forwarded commit failed
// and since then either less than stallAfter has passed or another is in
// flight. So after a failure the partition is left alone for stallAfter,
// then one commit tries it, and only its success brings produces back:
// a leader that refuses for a while (one taking over its leadership,
// waiting for a metastore it cannot reach) fails one commit at a time,
// not every produce that would have queued behind it.
func (f *forwards) stalled(k forwardKey, now time.Time) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	q := f.queues[k]
	if q != nil && now.Sub(q.since) > stallAfter {
		return true
	}
	at, failed := f.failed[k]
	return failed && (q != nil || now.Sub(at) < stallAfter)
}

// recordsSize is the bytes of recs that count towards a commit's bound.
func recordsSize(recs []storage.Record) int {
	n := 0
	for _, r := range recs {
		n += len(r.Key) + len(r.Payload)
		for _, h := range r.Headers {
			n += len(h.Name) + len(h.Value)
		}
	}
	return n
}
