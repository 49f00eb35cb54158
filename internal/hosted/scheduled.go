package hosted

import (
	"errors"
	"sync"
	"sync/atomic"
	"time"

	"github.com/narad-io/narad/internal/clock"
	"github.com/narad-io/narad/internal/header"
	"github.com/narad-io/narad/internal/lease"
	"github.com/narad-io/narad/internal/schedule"
	"github.com/narad-io/narad/internal/storage"
)

// Scheduled delivery on a hosted partition (docs/concepts.md, "Scheduled
// delivery"). A record whose narad-deliver-at is ahead of the clock when
// a lease round reads it is filed in the partition's schedule (package
// schedule, files in the partition's directory) and then settled in the
// lease table (lease.Table.Defer): the records behind it go on as if it
// were not there, and it takes no acked-ahead capacity. When it falls due the
// schedule hands it to the queue's due table (lease.Due), whose leases
// the next consumes take first.
//
// Order, so that a crash loses nothing: the schedule entry is added
// before the table settles the record, and the schedule is synced before
// any frontier that passes it is written (Persist). A settle lost in a
// crash only delivers a record again.

// sched is a queue's schedule and the goroutine that wakes consumers when
// an entry falls due.
type sched struct {
	index *schedule.Index
	Due   *lease.Due

	ever atomic.Bool // a record was scheduled here (EverScheduled)

	mu       sync.Mutex
	watching bool
	kick     chan struct{} // an earlier entry was added: look at Next again
	stop     chan struct{}
	stopped  bool
}

func (s *Set) openSchedule(dir string, partition int, limits lease.Limits) (*sched, error) {
	x, err := schedule.Open(schedule.Options{FS: s.fs, Dir: dir, Now: s.now})
	if err != nil {
		return nil, err
	}
	return &sched{index: x, Due: lease.NewDue(partition, limits, clockFunc{clock.Real, s.now}),
		kick: make(chan struct{}, 1), stop: make(chan struct{})}, nil
}

// deferRecord files a record that is not due yet and settles its lease.
func (q *Queue) deferRecord(ls lease.Lease, due int64) {
	q.sched.ever.Store(true)
	q.sched.index.Add(ls.Offset, due)
	q.Table.Defer(ls.Offset, ls.Nonce)
	if q.sched.index.Pending() >= maxPending {
		// A consume filing a large backlog: write it now rather than
		// hold it all until the next frontier write. A failure leaves it
		// pending, for that write to retry.
		q.sched.index.Sync()
	}
	q.watch()
}

// maxPending bounds the schedule entries held between syncs (24 bytes
// each: 1.5 MiB).
const maxPending = 1 << 16

// releaseDue moves the schedule's entries that fell due into the due
// table and returns how many.
func (q *Queue) releaseDue() int {
	n := 0
	for {
		es, err := q.sched.index.Pop(1024)
		if err != nil {
			q.set.hook.QueueError("schedule_read")
			q.set.log.Warn("schedule bucket not read; retried on the next consume", "topic", q.Key.Topic, "partition", q.Key.Partition, "err", err)
			return n
		}
		for _, e := range es {
			q.sched.Due.Add(e.Offset, e.Due)
		}
		n += len(es)
		if len(es) < 1024 {
			return n
		}
	}
}

// leaseDue leases due records into out, first among a consume's records:
// they waited their turn already.
func (q *Queue) leaseDue(l *storage.Log, out []Message, want int, vis time.Duration, budget *Budget, wake func()) []Message {
	if !q.sched.ever.Load() {
		return out // never a scheduled record here: the common case costs a load
	}
	q.releaseDue()
	ls := q.sched.Due.ReserveFor(want, vis)
	released := 0
	for i, x := range ls {
		if budget.Full() {
			for _, y := range ls[i:] {
				if q.sched.Due.Release(y.Offset, y.Nonce) == nil {
					released++
				}
			}
			break
		}
		res, err := l.Read(x.Offset, 1, budget.left(), storage.NoDueLimit)
		var below *storage.BelowOldestError
		switch {
		case errors.As(err, &below), err == nil && (len(res.Records) == 0 || res.Records[0].Offset != x.Offset):
			// Gone: retention deleted it, or its frame cannot be read.
			q.dropDue(x.Offset)
			continue
		case err != nil:
			if q.sched.Due.Release(x.Offset, x.Nonce) == nil {
				released++
			}
			continue
		}
		r := res.Records[0]
		size := len(r.Key) + len(r.Payload)
		if !budget.fits(size) {
			if q.sched.Due.Release(x.Offset, x.Nonce) == nil {
				released++
			}
			continue
		}
		budget.add(size)
		out = append(out, Message{Topic: q.Key.Topic, Partition: x.Partition, Offset: r.Offset,
			Key: r.Key, Payload: r.Payload, CommittedAt: r.CommittedAt, Headers: r.Headers,
			ReceiptHandle: x.Handle(), DeliveryCount: x.DeliveryCount})
	}
	if released > 0 && len(out) > 0 {
		wake()
	}
	return out
}

// dropDue forgets a due record whose record is gone, and settles its
// schedule entry.
func (q *Queue) dropDue(offset uint64) {
	if due, ok := q.sched.Due.Drop(offset); ok {
		q.sched.index.Settle(schedule.Entry{Offset: offset, Due: due})
	}
}

// Ack settles the lease (offset, nonce): a due record's in the due table
// (and its schedule entry), any other in the lease table.
func (q *Queue) Ack(offset, nonce uint64) error {
	if q.holdsDue(offset) {
		due, err := q.sched.Due.Ack(offset, nonce)
		if err == nil {
			q.sched.index.Settle(schedule.Entry{Offset: offset, Due: due})
			return nil
		}
	}
	return q.Table.Ack(offset, nonce)
}

// AckMany is Ack for a batch of one partition, errs[i] for rs[i]: the
// lease table's AckMany for all but the due records.
func (q *Queue) AckMany(rs []lease.Receipt, errs []error) {
	var rest []int
	for i, r := range rs {
		if q.holdsDue(r.Offset) {
			if due, err := q.sched.Due.Ack(r.Offset, r.Nonce); err == nil {
				q.sched.index.Settle(schedule.Entry{Offset: r.Offset, Due: due})
				continue
			}
		}
		rest = append(rest, i)
	}
	if len(rest) == len(rs) {
		q.Table.AckMany(rs, errs)
		return
	}
	sub := make([]lease.Receipt, len(rest))
	subErrs := make([]error, len(rest))
	for k, i := range rest {
		sub[k] = rs[i]
	}
	q.Table.AckMany(sub, subErrs)
	for k, i := range rest {
		errs[i] = subErrs[k]
	}
}

// holdsDue says offset is a due record's: only a queue that ever had a
// scheduled record looks.
func (q *Queue) holdsDue(offset uint64) bool {
	return q.sched.ever.Load() && q.sched.Due.Holds(offset)
}

// Nack gives up the lease (offset, nonce): the record is deliverable again.
func (q *Queue) Nack(offset, nonce uint64) error {
	if q.holdsDue(offset) && q.sched.Due.Nack(offset, nonce) == nil {
		return nil
	}
	return q.Table.Nack(offset, nonce)
}

// Extend renews the lease (offset, nonce) to expire d from now, or one
// visibility timeout from now when d <= 0 (lease.Table.Extend).
func (q *Queue) Extend(offset, nonce uint64, d time.Duration) error {
	if q.holdsDue(offset) && q.sched.Due.Extend(offset, nonce, d) == nil {
		return nil
	}
	return q.Table.Extend(offset, nonce, d)
}

// dueWork says scheduled records are due or being delivered: a consume
// must look at the partition even with nothing past its frontier.
func (q *Queue) dueWork() bool {
	if !q.sched.ever.Load() {
		return false
	}
	if r, l := q.sched.Due.Len(); r+l > 0 {
		return true
	}
	at, ok := q.sched.index.Next()
	return ok && !at.After(q.set.now())
}

// EverScheduled says the schedule held a record at some time in this
// queue's life (a gauge of it then stays, down to zero).
func (q *Queue) EverScheduled() bool { return q.sched.ever.Load() }

// Scheduled counts the partition's records scheduled and not due yet.
func (q *Queue) Scheduled() int { return q.sched.index.Stats().Waiting }

// ScheduleOut counts scheduled records that fell due and are not
// settled yet: being delivered, or held for the dead-letter topic.
func (q *Queue) ScheduleOut() int { return q.sched.index.Stats().Out }

// ScheduleLow is at or below every scheduled record not settled (ok
// false: none): a frontier copied to a node without this schedule must
// not pass it.
func (q *Queue) ScheduleLow() (uint64, bool) { return q.sched.index.Low() }

// PurgeSchedule forgets every scheduled record, due or not (a purge
// settled the partition) and returns how many it forgot.
func (q *Queue) PurgeSchedule() (int, error) {
	st := q.sched.index.Stats()
	for _, x := range q.sched.Due.Offsets() {
		q.sched.Due.Drop(x)
	}
	return st.Waiting + st.Out, q.sched.index.Clear()
}

// watch starts the goroutine that wakes the topic's consumers when the
// schedule's next entry falls due, or nudges it to look again. It runs
// only while the schedule holds something: an idle partition with no
// scheduled records has no timer, and one with a million has one.
func (q *Queue) watch() {
	s := q.sched
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.stopped {
		return
	}
	if s.watching {
		select {
		case s.kick <- struct{}{}:
		default:
		}
		return
	}
	s.watching = true
	go q.watchLoop()
}

// watchCap bounds one sleep, so a clock that jumps is noticed.
const watchCap = 30 * time.Second

func (q *Queue) watchLoop() {
	s := q.sched
	t := time.NewTimer(0)
	defer t.Stop()
	for {
		at, ok := s.index.Next()
		if !ok {
			s.mu.Lock()
			// Re-check under the lock: an Add between Next and here
			// saw watching set and only kicked.
			if _, ok := s.index.Next(); !ok {
				s.watching = false
				s.mu.Unlock()
				return
			}
			s.mu.Unlock()
			continue
		}
		d := min(max(at.Sub(q.set.now()), time.Millisecond), watchCap)
		if !t.Stop() {
			select {
			case <-t.C:
			default:
			}
		}
		t.Reset(d)
		select {
		case <-s.stop:
			return
		case <-s.kick:
			continue
		case <-t.C:
		}
		if q.releaseDue() > 0 && q.set.wake != nil {
			q.set.wake(q.Key.Topic)
		}
	}
}

// closeSchedule stops the watcher and closes the schedule's files (the
// queue is dropped: a move, a change of role, the topic deleted).
func (q *Queue) closeSchedule() {
	s := q.sched
	s.mu.Lock()
	if !s.stopped {
		s.stopped = true
		close(s.stop)
	}
	s.mu.Unlock()
	s.index.Close()
}

// dueAt reads a record's due time; ok is false when it has none or it is
// not ahead of nowMs.
func dueAt(hs []header.Header, nowMs int64) (int64, bool) {
	due, ok := header.DeliverAtOf(hs)
	return due, ok && due > nowMs
}
