package lease

import (
	"cmp"
	"slices"
)

// Delivery counts are the one piece of lease state besides the frontier
// that outlives the table: the caller persists a snapshot (Deliveries)
// beside the frontier and seeds a new table with it (SeedDeliveries), so
// that a record's delivery_count keeps counting across a restart or a move
// instead of starting at 1 again (a poison record would otherwise cycle
// forever). The table itself still does no I/O.

// DeliveryCount is how many times one unsettled offset has been leased.
type DeliveryCount struct {
	Offset uint64
	Count  int
}

// DeliveryCount returns how many times offset has been leased and not
// settled since (counting a live lease of it, and counts seeded by
// SeedDeliveries); 0 for an offset never delivered or already settled.
func (t *Table) DeliveryCount(offset uint64) int {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.deliveries[offset]
}

// Deliveries returns the delivery counts of unsettled offsets, at most
// limit of them (limit <= 0: all), and a version bumped every time a count
// changes, so the caller writes a snapshot only when it differs from the
// last one written. Past limit it keeps the highest counts (ties: the
// lowest offsets): those are the records nearest a dead-letter policy's
// max_deliveries, and a dropped count of 1 costs one delivery reported as
// the first again. The result is sorted by offset.
//
// Cost: O(n log n) for the n counts held (bounded by the leases out plus
// the freed offsets awaiting redelivery).
func (t *Table) Deliveries(limit int) (counts []DeliveryCount, version uint64) {
	t.mu.Lock()
	out := make([]DeliveryCount, 0, len(t.deliveries))
	for off, n := range t.deliveries {
		out = append(out, DeliveryCount{Offset: off, Count: n})
	}
	version = t.countsVersion
	t.mu.Unlock()
	if limit > 0 && len(out) > limit {
		slices.SortFunc(out, func(a, b DeliveryCount) int {
			if c := cmp.Compare(b.Count, a.Count); c != 0 {
				return c
			}
			return cmp.Compare(a.Offset, b.Offset)
		})
		out = out[:limit]
	}
	slices.SortFunc(out, func(a, b DeliveryCount) int { return cmp.Compare(a.Offset, b.Offset) })
	return out, version
}

// CountsVersion returns the version Deliveries would report, without the
// snapshot: a caller polling for change pays a lock and a load.
func (t *Table) CountsVersion() uint64 {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.countsVersion
}

// SeedDeliveries sets the delivery counts of offsets not leased now, as
// persisted by an earlier life of the partition: the next lease of such an
// offset reports its count plus one. Entries below the frontier (settled
// since they were written), for settled or leased offsets, or with a count
// below 1 are ignored. It returns how many it took. Meant for a fresh
// table, before its first Reserve.
func (t *Table) SeedDeliveries(counts []DeliveryCount) int {
	t.mu.Lock()
	defer t.unlock()
	n := 0
	for _, c := range counts {
		if c.Count < 1 || t.settled(c.Offset) {
			continue
		}
		if _, leased := t.leases[c.Offset]; leased {
			continue
		}
		t.deliveries[c.Offset] = c.Count
		n++
	}
	if n > 0 {
		t.countsVersion++
	}
	return n
}
