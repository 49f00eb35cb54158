package hosted

import (
	"errors"
	"hash/maphash"
	"time"

	"github.com/narad-io/narad/internal/lease"
	"github.com/narad-io/narad/internal/storage"
)

// The lease round of a topic with ordering "group" (docs/concepts.md,
// "Message groups"). Reserve-then-read cannot keep group order: the
// lowest free offsets would be the blocked records of one stuck group, so
// every round would read and give back the same records while other
// groups starve. Here the round reads first: it asks the lease table for
// the next free offsets (lease.Table.Candidates), reads those records, and
// hands their keys' hashes back for the table to lease in offset order,
// skipping groups that are locked (lease.Table.ReserveGroups). The records
// read are the answer, so nothing is read twice.
//
// How far a round looks is bounded: at most groupWindow candidates past
// the frontier — the leases and acked-ahead records the table's limits
// allow, plus what is wanted — so records waiting behind a stuck group cost
// a bounded read per round, and a partition whose window is all blocked
// waits like one at its in-flight cap.
//
// The walk is one function (leaseGroups) reading a chunk at a time, so that
// a step deciding about a candidate before it is leased (scheduled delivery
// deferring a record not yet due) has one place to go: between the read
// and ReserveGroups.

// groupSeed hashes keys into groups. Groups live only in memory (the
// lease table rebuilds them from the leases it grants), so a per-process
// seed is enough; two keys of one hash merely share a group.
var groupSeed = maphash.MakeSeed()

// groupRetries bounds the walks a round starts over after racing with a
// nack or expiry (lease.GroupWalk): past it the round answers what it has,
// and the freed record's wake-up brings a consumer back.
const groupRetries = 3

// groupWindow is how many candidates a round may walk: what the limits
// let be out at once, plus what is wanted.
func groupWindow(l lease.Limits, want int) int {
	return l.MaxInFlight + l.MaxAckedAhead + want
}

// setLimits applies the topic's limits to the queue's table.
func (q *Queue) setLimits(l lease.Limits) {
	q.Table.SetLimits(l)
	q.sched.Due.SetLimits(l)
	q.groups.Store(l.Groups)
}

// leaseGroups is LeaseFrom for a topic with ordering "group".
func (q *Queue) leaseGroups(l *storage.Log, out []Message, want int, vis time.Duration, budget *Budget, wake func()) ([]Message, error) {
	limits := q.Table.Limits()
	for range groupRetries {
		if oldest := l.Oldest(); q.Table.Frontier() < oldest {
			q.Table.AdvanceTo(oldest)
		}
		var stale bool
		var err error
		out, stale, err = q.walkGroups(l, out, want, groupWindow(limits, want), vis, budget, wake)
		if err != nil || !stale {
			return out, err
		}
	}
	return out, nil
}

// walkGroups is one group walk: chunks of candidates read, hashed and
// offered to the table in offset order until want records are leased, the
// budget is full, the window is walked, or the table stops the walk.
// stale: the walk raced with a record being freed and should start over
// (what it leased is in out and stays leased: it was in order).
func (q *Queue) walkGroups(l *storage.Log, out []Message, want, window int, vis time.Duration, budget *Budget, wake func()) (_ []Message, stale bool, err error) {
	w := lease.GroupWalk{Visibility: vis}
	var offs []uint64
	var cands []lease.Candidate
	var recs []storage.Record
	hwm := l.HWM()
	chunk := 0
	for walked := 0; len(out) < want && !budget.Full() && walked < window; {
		n := fitting(q, want-len(out), budget)
		if n == 0 {
			break
		}
		// The first read is what is wanted (nothing blocked: nothing read
		// in vain); each further one doubles, so a window of blocked
		// records costs a logarithmic number of reads.
		chunk = max(n, 2*chunk)
		var st, settled bool
		offs, st = q.Table.Candidates(&w, offs, hwm, min(chunk, window-walked))
		if st || len(offs) == 0 {
			return out, st, nil
		}
		cands, recs, settled, err = q.readCandidates(l, offs, cands, recs)
		if err != nil {
			return out, false, err
		}
		if len(cands) == 0 {
			if settled {
				continue // only unreadable records, now settled: look on
			}
			break
		}
		walked += len(cands)
		leases, st := q.Table.ReserveGroups(&w, hwm, cands, n)
		if st {
			return out, true, nil
		}
		var full bool
		out, full = q.answer(leases, cands, recs, budget, out, wake)
		if full {
			break
		}
	}
	return out, false, nil
}

// readCandidates reads the records at offs (ascending) and returns them as
// candidates with their groups, and the records (recs[i] is cands[i]'s),
// reusing the arrays of the two slices given. It stops at the first
// offset it could not read, so the candidates are a prefix of offs with no
// unknown record among them; unreadable records are settled as skipped
// and records below retention by moving the frontier, as in readLeased
// (settled says it did either).
func (q *Queue) readCandidates(l *storage.Log, offs []uint64, cands []lease.Candidate, recs []storage.Record) (_ []lease.Candidate, _ []storage.Record, settled bool, err error) {
	if cap(cands) < len(offs) {
		cands, recs = make([]lease.Candidate, 0, len(offs)), make([]storage.Record, 0, len(offs))
	}
	cands, recs = cands[:0], recs[:0]
	for i := 0; i < len(offs); {
		j := i + 1
		for j < len(offs) && offs[j] == offs[j-1]+1 {
			j++
		}
		res, err := l.Read(offs[i], j-i, groupReadBytes, storage.NoDueLimit)
		var below *storage.BelowOldestError
		switch {
		case errors.As(err, &below):
			q.Table.AdvanceTo(below.Oldest)
			return cands, recs, true, nil
		case err != nil:
			return nil, nil, false, err
		case res.Skipped > 0:
			q.Table.MarkSkipped(res.SkippedFrom, res.SkippedFrom+res.Skipped)
			return cands, recs, true, nil
		}
		for k, r := range res.Records {
			if r.Offset != offs[i+k] {
				return cands, recs, false, nil // a gap the next walk will read
			}
			c := lease.Candidate{Offset: r.Offset}
			if len(r.Key) > 0 {
				c.Group, c.Keyed = maphash.Bytes(groupSeed, r.Key), true
			}
			cands = append(cands, c)
			recs = append(recs, r)
		}
		if len(res.Records) < j-i {
			return cands, recs, false, nil // the byte bound cut the run
		}
		i = j
	}
	return cands, recs, false, nil
}

// groupReadBytes bounds one read of candidates: records behind a locked
// group are read too, so the answer's budget is no measure.
const groupReadBytes = 4 << 20

// answer adds the records of freshly granted leases to out within the
// budget; full says the budget cut the answer, and the leases it could
// not hold are released at once (waking consumers to take them). The
// leases are some of cands, in the same order; recs are cands' records.
func (q *Queue) answer(leases []lease.Lease, cands []lease.Candidate, recs []storage.Record, a *Budget, out []Message, wake func()) (_ []Message, full bool) {
	topic := q.Key.Topic
	nowMs := q.set.now().UnixMilli()
	before, readBytes, j := len(out), 0, 0
	for i, ls := range leases {
		for cands[j].Offset != ls.Offset {
			j++
		}
		r := recs[j]
		if due, later := dueAt(r.Headers, nowMs); later {
			// Not due: filed in the schedule, and out of its group's
			// order (lease.Table.Defer).
			q.deferRecord(ls, due)
			continue
		}
		size := len(r.Key) + len(r.Payload)
		readBytes += size
		if a.Full() || !a.fits(size) {
			released := 0
			for _, x := range leases[i:] {
				if q.Table.Release(x.Offset, x.Nonce) == nil {
					released++
				}
			}
			if released > 0 && len(out) > before {
				wake()
			}
			return out, true
		}
		a.add(size)
		out = append(out, Message{Topic: topic, Partition: ls.Partition, Offset: r.Offset,
			Key: r.Key, Payload: r.Payload, CommittedAt: r.CommittedAt, Headers: r.Headers,
			ReceiptHandle: ls.Handle(), DeliveryCount: ls.DeliveryCount})
	}
	if len(leases) > 0 {
		q.RecordBytes.Store(int64(readBytes / len(leases)))
	}
	return out, false
}
