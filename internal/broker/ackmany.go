package broker

import (
	"cmp"
	"slices"

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
	type item struct {
		i int // place in handles
		p int
		r lease.Receipt
	}
	items := make([]item, 0, len(handles))
	for i, h := range handles {
		p, offset, nonce, err := lease.ParseHandle(h)
		if err != nil {
			out[i] = badHandle(h, err)
			continue
		}
		items = append(items, item{i, p, lease.Receipt{Offset: offset, Nonce: nonce}})
	}
	// Grouped by partition, each group in the batch's order (a stable
	// sort: a consume answer comes partition by partition, so this is
	// nearly always sorted already, and it allocates nothing).
	slices.SortStableFunc(items, func(a, b item) int { return cmp.Compare(a.p, b.p) })
	rs := make([]lease.Receipt, len(items))
	for k, it := range items {
		rs[k] = it.r
	}
	errs := make([]error, len(items))
	for lo := 0; lo < len(items); {
		p := items[lo].p
		hi := lo + 1
		for hi < len(items) && items[hi].p == p {
			hi++
		}
		group := items[lo:hi]
		q, err := b.ackQueue(t, handles[group[0].i], p)
		if err != nil {
			for _, it := range group {
				// The refusal names the handle, as the single form's does.
				_, out[it.i] = b.ackQueue(t, handles[it.i], p)
			}
			lo = hi
			continue
		}
		q.AckMany(rs[lo:hi], errs[lo:hi])
		for k, it := range group {
			out[it.i] = ackErr(b.m, t.Name, handles[it.i], p, it.r.Offset, Settle, errs[lo+k])
		}
		if q.Table.TakeFreed() {
			b.wake(t.Name) // capacity again: wake consumers held back by a cap
		}
		lo = hi
	}
	return out
}
