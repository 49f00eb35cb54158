package client

import (
	"net/http"
	"strconv"
	"time"
)

// Scheduled delivery (docs/concepts.md, "Scheduled delivery"): a record
// may name when queue consumers first see it, by a delay from when the
// node accepts it or by a point in time. Replay returns it at once. The
// node checks the range (0 .. 1 year) and refuses both at once.

// Request headers of a scheduled single produce.
const (
	delayHeader     = "Narad-Delay"
	deliverAtHeader = "Narad-Deliver-At"
)

// scheduled reports whether opts schedule the record.
func (o ProduceOptions) scheduled() bool { return o.Delay != nil || !o.DeliverAt.IsZero() }

// setSchedule sets the schedule headers of opts on h (the node refuses a
// request that has both).
func (o ProduceOptions) setSchedule(h http.Header) {
	if o.Delay != nil {
		h[delayHeader] = []string{delayText(*o.Delay)}
	}
	if !o.DeliverAt.IsZero() {
		h[deliverAtHeader] = []string{strconv.FormatInt(unixMillisUp(o.DeliverAt), 10)}
	}
}

// WithDelay returns r scheduled d after the node accepts it (Delay; a
// DeliverAt is cleared). 0 is a delay of its own: the record is due at
// once even on a topic with a delivery_delay.
func (r BatchRecord) WithDelay(d time.Duration) BatchRecord {
	r.Delay, r.DeliverAt = delayText(d), 0
	return r
}

// WithDeliverAt returns r scheduled for t (DeliverAt; a Delay is
// cleared). A time past means now.
func (r BatchRecord) WithDeliverAt(t time.Time) BatchRecord {
	r.Delay, r.DeliverAt = "", unixMillisUp(t)
	return r
}

// DueTime is when the record falls due for queue consumers (DeliverAt),
// or the zero time for a record that was due at once.
func (m Message) DueTime() time.Time {
	if m.DeliverAt == 0 {
		return time.Time{}
	}
	return time.UnixMilli(m.DeliverAt).UTC()
}

// delayText is d in the node's duration syntax ("1m30s"), rounded up to
// the millisecond, the node's unit: a record is never due before d has
// passed. A negative d is sent as it is, for the node to refuse.
func delayText(d time.Duration) string {
	if r := d % time.Millisecond; r > 0 {
		d += time.Millisecond - r
	}
	if d%time.Millisecond == 0 && d%time.Second != 0 {
		return strconv.FormatInt(d.Milliseconds(), 10) + "ms" // "1500ms", not "1.5s"
	}
	return d.String()
}

// unixMillisUp is t in Unix milliseconds, rounded up (never due before
// t). A time before 1970 is 1: any past time means now, and 0 is "none"
// in a BatchRecord.
func unixMillisUp(t time.Time) int64 {
	ms := t.UnixMilli()
	if t.After(time.UnixMilli(ms)) {
		ms++
	}
	return max(ms, 1)
}
