package hosted

import (
	"cmp"
	"errors"
	"slices"
	"time"

	"github.com/narad-io/narad/internal/header"
	"github.com/narad-io/narad/internal/lease"
	"github.com/narad-io/narad/internal/storage"
)

// Reading a hosted partition for an answer: the lease round of a queue
// consume (reserve first, then read, within the answer's byte budget)
// and a replay by position. The request-level consume — which partitions,
// long polls, counting — is the broker's.

// Message is one delivered or replayed record. Key and Payload may alias
// the log's decoded frames: read-only.
type Message struct {
	Topic         string
	Partition     int
	Offset        uint64
	Key           []byte
	Payload       []byte
	CommittedAt   int64 // unix ms
	ReceiptHandle string
	DeliveryCount int
	Headers       []header.Header // sorted by name; nil when none
	// Origin and Seq are the record's ingress WAL source as the log keeps
	// it (storage.Record), zero when none; ID is its message id, which
	// the broker derives from them or from the position (package
	// messageid) before answering.
	Origin, Seq uint64
	ID          string
}

// LeaseFrom reserves and reads records of one partition into out, in
// rounds sized by the records last read there (queue.fitting), so leases
// are reserved only for what is likely to fit; a lease the budget then
// cannot hold is released at once, never left to its visibility timeout.
// A round that only stepped over unreadable records (settled as skipped)
// goes on: a gap is not the end of the partition. A topic with ordering
// "group" reads first and leases after (groups.go). The leases live vis
// (one consume's own visibility), or the topic's visibility timeout when
// vis is 0.
func (q *Queue) LeaseFrom(l *storage.Log, out []Message, want int, vis time.Duration, budget *Budget, wake func()) ([]Message, error) {
	out = q.leaseDue(l, out, want-len(out), vis, budget, wake)
	if q.groups.Load() {
		return q.leaseGroups(l, out, want, vis, budget, wake)
	}
	for len(out) < want && !budget.Full() {
		if oldest := l.Oldest(); q.Table.Frontier() < oldest {
			q.Table.AdvanceTo(oldest)
		}
		n := fitting(q, want-len(out), budget)
		if n == 0 {
			break
		}
		leases := q.Table.ReserveFor(l.HWM(), n, vis)
		if len(leases) == 0 {
			break
		}
		before := len(out)
		var skipped bool
		var err error
		out, skipped, err = q.readLeased(l, leases, budget, out, wake)
		if err != nil {
			return out, err
		}
		if got := len(out) - before; got < len(leases) && (got > 0 || !skipped) {
			break // the budget cut the round, or records were not readable: the next consume looks again
		}
	}
	return out, nil
}

// Budget is the byte budget of one consume or replay answer: keys and
// payloads up to max bytes, except that the first record always fits, so
// an oversized record cannot wedge its partition.
type Budget struct {
	max, used, n int
}

// NewBudget is an empty answer's budget of max bytes.
func NewBudget(max int) *Budget { return &Budget{max: max} }

func (a *Budget) fits(size int) bool { return a.n == 0 || a.used+size <= a.max }
func (a *Budget) add(size int)       { a.used += size; a.n++ }

// Full says the answer holds a record and its bytes reached the budget.
func (a *Budget) Full() bool { return a.n > 0 && a.used >= a.max }

// left is what a read may still return (storage.Log.Read returns one
// record past it when it has none yet; fits decides about that one).
func (a *Budget) left() int { return max(a.max-a.used, 1) }

// firstProbe is how many records a partition's first round reserves before
// anything was read there to learn their size from.
const firstProbe = 16

// fitting is how many of n records to reserve next: as many as records of
// the size last read on this partition (else of the answer's so far) fill
// of what is left of the budget, at least one when the answer is still
// empty, and none when not even one such record would fit any more.
func fitting(q *Queue, n int, a *Budget) int {
	size := int(q.RecordBytes.Load())
	if size <= 0 && a.n > 0 {
		size = a.used / a.n // nothing read here yet: guess from the answer so far
	}
	if size <= 0 {
		return min(n, firstProbe)
	}
	left := a.max - a.used
	if a.n > 0 && left < size {
		return 0
	}
	return min(n, max(left/size, 1))
}

// LogWithWork returns the partition's log if there may be something to
// deliver. A closed log whose directory shows nothing past the frontier
// stays closed: an idle consumer must not keep (or make) logs open.
func (s *Set) LogWithWork(q *Queue) (*storage.Log, error) {
	topic, p := q.Key.Topic, q.Key.Partition
	if s.Peek(topic, p) == nil && q.Table.Stats().InFlight == 0 && !q.dueWork() {
		st, err := s.Describe(topic, p)
		if err == nil && st.Exact && st.HighWatermark <= q.Table.Frontier() {
			return nil, nil
		}
	}
	return s.Get(topic, p)
}

// readLeased reads the records of freshly reserved leases into the answer
// budget a, appending them to out. Reserve first, then read: a lease
// whose record turns out unreadable is marked skipped (recorded loss), one
// below retention is dropped by moving the frontier, and one that cannot
// be read for another reason — or that the budget cannot hold — is
// released at once (and waiting consumers are woken to take it). skipped
// says some lease was settled as unreadable.
func (q *Queue) readLeased(l *storage.Log, leases []lease.Lease, a *Budget, out []Message, wake func()) (_ []Message, skipped bool, err error) {
	topic := q.Key.Topic
	// Reserve hands out the lowest offsets first, so leases are nearly
	// always in order already: checking first spares the sort, and
	// slices.SortFunc spares sort.Slice's two allocations per round.
	if !slices.IsSortedFunc(leases, byOffset) {
		slices.SortFunc(leases, byOffset)
	}
	before := len(out)
	nowMs := q.set.now().UnixMilli()
	readBytes, readCount, released := 0, 0, 0
	release := func(ls []lease.Lease) {
		for _, x := range ls {
			// Those MarkSkipped settled are gone already: ErrGone, harmless.
			if q.Table.Release(x.Offset, x.Nonce) == nil {
				released++
			}
		}
	}
	defer func() {
		if readCount > 0 {
			q.RecordBytes.Store(int64(readBytes / readCount))
		}
		// Records given back are available now: wake parked consumers.
		// Only with an answer in hand, so this consume cannot wake itself
		// into a loop.
		if released > 0 && len(out) > before {
			wake()
		}
	}()
	for i := 0; i < len(leases); {
		if a.Full() {
			release(leases[i:])
			break
		}
		// A run of consecutive offsets is one read.
		j := i + 1
		for j < len(leases) && leases[j].Offset == leases[j-1].Offset+1 {
			j++
		}
		run := leases[i:j]
		res, err := l.Read(run[0].Offset, len(run), a.left(), storage.NoDueLimit)
		var below *storage.BelowOldestError
		switch {
		case errors.As(err, &below):
			q.Table.AdvanceTo(below.Oldest) // drops the leases under it
			run = run[:0]
		case err != nil:
			release(leases[i:])
			return out, skipped, err
		case res.Skipped > 0:
			q.Table.MarkSkipped(res.SkippedFrom, res.SkippedFrom+res.Skipped)
			skipped = true
		}
		k, cut := 0, false
		for _, r := range res.Records {
			for k < len(run) && run[k].Offset < r.Offset {
				release(run[k : k+1])
				k++
			}
			if k < len(run) && run[k].Offset == r.Offset {
				if due, later := dueAt(r.Headers, nowMs); later {
					// Not due: filed in the schedule, settled here.
					q.deferRecord(run[k], due)
					skipped = true
					k++
					continue
				}
				size := len(r.Key) + len(r.Payload)
				readBytes, readCount = readBytes+size, readCount+1
				if cut = !a.fits(size); cut {
					break
				}
				a.add(size)
				ls := run[k]
				out = append(out, Message{Topic: topic, Partition: ls.Partition, Offset: r.Offset,
					Key: r.Key, Payload: r.Payload, CommittedAt: r.CommittedAt, Headers: r.Headers,
					ReceiptHandle: ls.Handle(), DeliveryCount: ls.DeliveryCount, Origin: r.Origin, Seq: r.Seq})
				k++
			}
		}
		// Leases the read did not reach, or the budget could not hold, go
		// back; the next consume takes them again.
		if cut {
			release(leases[i+k:])
			break
		}
		release(run[k:])
		i = j
	}
	return out, skipped, nil
}

func byOffset(a, b lease.Lease) int { return cmp.Compare(a.Offset, b.Offset) }

// Replay reads up to want records of topic/p from offset, within
// maxBytes of keys and payloads (one record always), with no lease and no
// queue effect.
func (s *Set) Replay(name string, p int, offset uint64, want, maxBytes int) ([]Message, error) {
	st, err := s.Describe(name, p)
	if err != nil {
		return nil, err
	}
	if st.Exact && offset >= st.HighWatermark {
		return nil, nil // nothing there yet: do not open a log to say so
	}
	l, err := s.Get(name, p)
	if err != nil {
		return nil, err
	}
	// Read's byte bound is the answer's: always the first record, then
	// none that would pass the cap.
	res, err := l.Read(offset, want, maxBytes, storage.NoDueLimit)
	for err == nil && len(res.Records) == 0 && res.Skipped > 0 {
		// Unreadable or lost records: a gap, not the end of the log. The
		// answer starts at the first record after it, whose offset tells
		// the reader what was skipped (the log counted it).
		res, err = l.Read(res.Next, want, maxBytes, storage.NoDueLimit)
	}
	var below *storage.BelowOldestError
	if errors.As(err, &below) {
		return nil, nil
	}
	if err != nil {
		return nil, StorageErr(name, p, "be read", err)
	}
	out := make([]Message, len(res.Records))
	for i, r := range res.Records {
		out[i] = Message{Topic: name, Partition: p, Offset: r.Offset, Key: r.Key, Payload: r.Payload, CommittedAt: r.CommittedAt, Headers: r.Headers,
			Origin: r.Origin, Seq: r.Seq}
	}
	return out, nil
}
