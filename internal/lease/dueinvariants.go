package lease

import "fmt"

func (d *Due) unlock() {
	if assertInvariants {
		if err := d.checkLocked(); err != nil {
			d.mu.Unlock()
			panic(fmt.Sprintf("lease: partition %d: due table invariant broken: %v", d.partition, err))
		}
	}
	d.mu.Unlock()
}

// checkLocked reports the first broken invariant of Due's doc comment.
func (d *Due) checkLocked() error {
	seen := make(map[uint64]bool, len(d.ready))
	for _, x := range d.ready {
		if seen[x] {
			return fmt.Errorf("offset %d is ready twice", x)
		}
		seen[x] = true
		if _, ok := d.leases[x]; ok {
			return fmt.Errorf("offset %d is both ready and leased", x)
		}
		if _, ok := d.due[x]; !ok {
			return fmt.Errorf("ready offset %d has no due time", x)
		}
	}
	for x := range d.leases {
		if _, ok := d.due[x]; !ok {
			return fmt.Errorf("leased offset %d has no due time", x)
		}
	}
	for x := range d.dead {
		if _, ok := d.due[x]; !ok || seen[x] {
			return fmt.Errorf("dead offset %d has no due time or is also ready", x)
		}
		if _, ok := d.leases[x]; ok {
			return fmt.Errorf("dead offset %d is also leased", x)
		}
	}
	if len(d.due) != len(d.ready)+len(d.leases)+len(d.dead) {
		return fmt.Errorf("%d offsets held, %d ready + %d leased + %d dead", len(d.due), len(d.ready), len(d.leases), len(d.dead))
	}
	if len(d.expiries) != len(d.leases) {
		return fmt.Errorf("%d expiries for %d leases", len(d.expiries), len(d.leases))
	}
	return nil
}
