package httpapi

import (
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/narad-io/narad/internal/apierr"
	"github.com/narad-io/narad/internal/broker"
	"github.com/narad-io/narad/internal/duration"
)

// A single produce schedules its record with one of these request
// headers (docs/concepts.md, "Scheduled delivery"); the range rules are
// the broker's.
const (
	delayHeader     = "Narad-Delay"      // a duration ("90s") or milliseconds
	deliverAtHeader = "Narad-Deliver-At" // RFC 3339 or Unix milliseconds
)

// scheduleHeaders sets rec's Delay or DeliverAt from the request. Both
// given, or one malformed: 400 naming the header.
func scheduleHeaders(r *http.Request, rec *broker.ProduceRecord) error {
	delay, hasDelay := oneHeader(r, delayHeader)
	at, hasAt := oneHeader(r, deliverAtHeader)
	switch {
	case hasDelay && hasAt:
		return apierr.BadRequest("%s and %s are both given: give one", delayHeader, deliverAtHeader)
	case hasDelay:
		d, err := duration.ParseMillis(strings.TrimSpace(delay))
		if err != nil {
			return apierr.BadRequest("%s %q: %v", delayHeader, delay, err)
		}
		if d < 0 {
			return apierr.BadRequest("%s %q is negative", delayHeader, delay)
		}
		rec.Delay = &d
	case hasAt:
		ms, err := parseInstant(strings.TrimSpace(at))
		if err != nil {
			return apierr.BadRequest("%s %q: want an RFC 3339 time or Unix milliseconds", deliverAtHeader, at)
		}
		rec.DeliverAt = &ms
	}
	return nil
}

// oneHeader is a request header's value; fields given twice are one
// comma-separated value (RFC 9110, 5.3), which no parser here accepts.
func oneHeader(r *http.Request, name string) (string, bool) {
	vs, ok := r.Header[name]
	if !ok {
		return "", false
	}
	return strings.Join(vs, ","), true
}

// parseInstant reads a point in time as Unix milliseconds: RFC 3339, or
// a non-negative integer of milliseconds.
func parseInstant(s string) (int64, error) {
	if ms, err := strconv.ParseInt(s, 10, 64); err == nil && ms >= 0 && !strings.HasPrefix(s, "+") {
		return ms, nil
	}
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		return 0, err
	}
	return t.UnixMilli(), nil
}
