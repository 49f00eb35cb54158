package broker

import (
	"time"

	"github.com/narad-io/narad/internal/duration"
	"github.com/narad-io/narad/internal/header"
	"github.com/narad-io/narad/internal/meta"
	"github.com/narad-io/narad/internal/refusal"
)

// Scheduled delivery at produce (docs/concepts.md, "Scheduled delivery"):
// a record's own delay or deliver_at, else its topic's delivery_delay,
// becomes its due time, stored in the record as the reserved header
// header.DeliverAt. A record due now or earlier gets none: it is an
// ordinary record. The queue side is package hosted's (scheduled.go).

// MaxScheduleAhead is how far ahead a record may be scheduled: a year,
// as a delay child's delay.
const MaxScheduleAhead = time.Duration(maxDelayMs) * time.Millisecond

// checkSchedule validates a record's scheduling fields; where prefixes
// the refusal ("record 3: " in a batch).
func checkSchedule(r ProduceRecord, now time.Time, where string) error {
	switch {
	case r.Delay != nil && r.DeliverAt != nil:
		return refusal.New(refusal.ErrInvalid, 0, "%sdelay and deliver_at are both given: give one", where)
	case r.Delay != nil && (*r.Delay < 0 || *r.Delay > MaxScheduleAhead):
		return refusal.New(refusal.ErrInvalid, 0, "%sdelay %s is out of range (0 .. 1 year)", where, duration.Format(*r.Delay))
	case r.DeliverAt != nil && *r.DeliverAt > now.Add(MaxScheduleAhead).UnixMilli():
		return refusal.New(refusal.ErrInvalid, 0, "%sdeliver_at %d is more than a year ahead", where, *r.DeliverAt)
	}
	return nil
}

// dueOf is a record's due time in Unix ms; ok is false when it is due
// at once (no header).
func dueOf(t meta.Topic, r ProduceRecord, now time.Time) (int64, bool) {
	nowMs := now.UnixMilli()
	var due int64
	switch {
	case r.Delay != nil:
		due = nowMs + r.Delay.Milliseconds()
	case r.DeliverAt != nil:
		due = *r.DeliverAt
	default:
		due = nowMs + t.DeliveryDelayMs
	}
	return due, due > nowMs
}

// schedule stamps r's headers with its due time, if it has one ahead.
func schedule(t meta.Topic, r *ProduceRecord, now time.Time) {
	if due, ok := dueOf(t, *r, now); ok {
		r.Headers = header.WithDeliverAt(r.Headers, due)
	}
}

// deliveryDelay reads a topic's delivery_delay from a create or alter
// body: a duration ("90s") or milliseconds, or delivery_delay_ms. ok is
// false when neither is given.
func deliveryDelay(s *string, ms *int64) (int64, bool, error) {
	switch {
	case s != nil && ms != nil:
		return 0, false, refusal.New(refusal.ErrInvalid, 0, "delivery_delay and delivery_delay_ms are both given: give one")
	case s != nil:
		d, err := duration.ParseMillis(*s)
		if err != nil {
			return 0, false, refusal.New(refusal.ErrInvalid, 0, "delivery_delay: %v", err)
		}
		v := d.Milliseconds()
		ms = &v
	case ms == nil:
		return 0, false, nil
	}
	if *ms < 0 || *ms > maxDelayMs {
		return 0, false, refusal.New(refusal.ErrInvalid, 0, "delivery_delay %d ms is out of range (0 .. 1 year)", *ms)
	}
	return *ms, true, nil
}
