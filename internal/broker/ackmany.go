package broker

import (
	"github.com/narad-io/narad/internal/lease"
	"github.com/narad-io/narad/internal/meta"
)

// ackMany settles a batch's handles with one lease-table call per
// partition (lease.Table.AckMany: one lock, one clock read, one wake-up
// check for all of that partition's handles, instead of one each). Each
// handle's error is what the single form would have returned had the
// handles been acked one after another in order: partitions are
// independent, and within one the order is kept, so a handle given twice
// is settled by its first place and ErrSettled at its second.
func (b *Broker) ackMany(t meta.Topic, handles []string) []error {
	out := make([]error, len(handles))
	type slot struct {
		i      int // place in handles
		p      int
		offset uint64
	}
	slots := make([]slot, 0, len(handles))
	rs := make([]lease.Receipt, 0, len(handles))
	for i, h := range handles {
		p, offset, nonce, err := lease.ParseHandle(h)
		if err != nil {
			out[i] = badHandle(h, err)
			continue
		}
		slots = append(slots, slot{i, p, offset})
		rs = append(rs, lease.Receipt{Offset: offset, Nonce: nonce})
	}
	qs := ackQueues{}
	errs := make([]error, len(rs))
	done := make([]bool, len(slots))
	// One pass per partition, in the order partitions first appear; a
	// batch names few (the partitions of one consume answer), so the
	// scratch slices are rebuilt per partition rather than grouped by map.
	sub := make([]lease.Receipt, 0, len(rs))
	idx := make([]int, 0, len(rs))
	for k := range slots {
		if done[k] {
			continue
		}
		p := slots[k].p
		sub, idx = sub[:0], idx[:0]
		for j := k; j < len(slots); j++ {
			if !done[j] && slots[j].p == p {
				done[j] = true
				sub = append(sub, rs[j])
				idx = append(idx, j)
			}
		}
		q, err := b.ackQueue(t, handles[slots[k].i], p, qs)
		if err != nil {
			for _, j := range idx {
				// The refusal names the handle, as the single form's does.
				_, out[slots[j].i] = b.ackQueue(t, handles[slots[j].i], p, qs)
			}
			continue
		}
		q.table.AckMany(sub, errs[:len(sub)])
		for n, j := range idx {
			s := slots[j]
			out[s.i] = b.ackErr(t.Name, handles[s.i], p, s.offset, Settle, errs[n])
		}
		if q.table.TakeFreed() {
			b.topicState(t.Name).notify.Fire() // room again: wake consumers held back by a cap
		}
	}
	return out
}
