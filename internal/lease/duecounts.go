package lease

// Durable delivery counts of due records, as the Table's (counts.go): the
// caller writes them into the same counts file, and seeds a new due table
// with them after a restart.

// Deliveries returns the delivery counts of the records held, and the
// counts version they are of.
func (d *Due) Deliveries() ([]DeliveryCount, uint64) {
	d.mu.Lock()
	defer d.mu.Unlock()
	out := make([]DeliveryCount, 0, len(d.counts))
	for x, n := range d.counts {
		if n > 0 {
			out = append(out, DeliveryCount{Offset: x, Count: n})
		}
	}
	return out, d.countsVersion
}

// CountsVersion is the version Deliveries would report.
func (d *Due) CountsVersion() uint64 {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.countsVersion
}

// SeedDeliveries keeps counts loaded from the counts file for the records
// it names: a record that falls due (Add) continues from its count. It
// returns how many it kept.
func (d *Due) SeedDeliveries(counts []DeliveryCount) int {
	d.mu.Lock()
	defer d.unlock()
	if d.seeded == nil {
		d.seeded = make(map[uint64]int, len(counts))
	}
	n := 0
	for _, c := range counts {
		if c.Count < 1 {
			continue
		}
		if _, held := d.due[c.Offset]; held {
			continue
		}
		d.seeded[c.Offset] = c.Count
		n++
	}
	return n
}
