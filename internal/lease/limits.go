package lease

import (
	"errors"
	"fmt"
	"time"
)

// Limits are the per-partition knobs of a Table. They can be changed on a
// live table with SetLimits.
type Limits struct {
	// VisibilityTimeout is how long a lease lives after Reserve, or after
	// an Extend that gives no duration of its own.
	VisibilityTimeout time.Duration
	// MaxInFlight caps the number of live leases; at the cap Reserve hands
	// out nothing.
	MaxInFlight int
	// MaxAckedAhead caps the acked-ahead set (offsets acked above a gap).
	// Zero is valid and means strictly serial settlement: every ack above
	// the frontier is refused and Reserve only ever hands out the frontier
	// record.
	MaxAckedAhead int
	// MaxDeliveries, when above 0, is how many deliveries a record gets:
	// once a lease of a record delivered that often expires or is nacked,
	// the record is held for the dead-letter topic (dead.go) instead of
	// being offered again. 0 is off (the reference: redelivered forever).
	MaxDeliveries int
	// Groups: the topic's ordering is "group", so the caller leases by
	// group walk (groups.go) rather than Reserve. The table itself takes
	// either call under any setting; the caller picks by this.
	Groups bool
}

// visibility is how long a lease granted or extended for d lives: d, or
// the visibility timeout when d <= 0.
func (l Limits) visibility(d time.Duration) time.Duration {
	if d > 0 {
		return d
	}
	return l.VisibilityTimeout
}

// FloorVisibilityTimeout replaces a non-positive visibility timeout; it is
// the lowest value the API accepts.
const FloorVisibilityTimeout = time.Second

// Validate reports whether l is usable as given. Config and admin layers
// should call it to reject bad input with a message. New and SetLimits do
// not fail on invalid limits; they clamp them (see Normalize), because a
// table must keep working, and a panic here would take a broker node down
// over a replicated topic record.
func (l Limits) Validate() error {
	var errs []error
	if l.VisibilityTimeout <= 0 {
		errs = append(errs, fmt.Errorf("visibility timeout must be positive, got %v", l.VisibilityTimeout))
	}
	if l.MaxInFlight < 1 {
		errs = append(errs, fmt.Errorf("max in flight must be at least 1, got %d", l.MaxInFlight))
	}
	if l.MaxAckedAhead < 0 {
		errs = append(errs, fmt.Errorf("max acked ahead must not be negative, got %d", l.MaxAckedAhead))
	}
	if l.MaxDeliveries < 0 {
		errs = append(errs, fmt.Errorf("max deliveries must not be negative, got %d", l.MaxDeliveries))
	}
	return errors.Join(errs...)
}

// Normalize returns l with every invalid field clamped to the nearest
// safe value: a non-positive visibility timeout becomes
// FloorVisibilityTimeout (zero would redeliver every record at once), a
// MaxInFlight below 1 becomes 1 (zero would stall the partition for
// good), a negative MaxAckedAhead becomes 0 (serial settlement), and a negative
// MaxDeliveries becomes 0 (off).
// Valid limits are returned unchanged.
func (l Limits) Normalize() Limits {
	if l.VisibilityTimeout <= 0 {
		l.VisibilityTimeout = FloorVisibilityTimeout
	}
	l.MaxInFlight = max(l.MaxInFlight, 1)
	l.MaxAckedAhead = max(l.MaxAckedAhead, 0)
	l.MaxDeliveries = max(l.MaxDeliveries, 0)
	return l
}
