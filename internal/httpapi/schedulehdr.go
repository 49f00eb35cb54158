package httpapi

import (
	"errors"
	"fmt"
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

// scheduleFields sets rec's Delay or DeliverAt from a batch record's
// "delay" and "deliver_at" values (raw JSON; nil or null: absent). A
// delay is a duration string ("90s") or a number of milliseconds; a
// deliver_at an RFC 3339 string, or Unix milliseconds as a number or a
// string of digits. Both given is the broker's refusal, which names the
// record.
func scheduleFields(rec *broker.ProduceRecord, delay, at []byte) error {
	if v, ok, err := scheduleValue("delay", delay); err != nil {
		return err
	} else if ok {
		d, err := duration.ParseMillis(v)
		if err != nil {
			return fmt.Errorf("delay: %v", err)
		}
		if d < 0 {
			return fmt.Errorf("delay %s is negative", v)
		}
		rec.Delay = &d
	}
	if v, ok, err := scheduleValue("deliver_at", at); err != nil {
		return err
	} else if ok {
		ms, err := parseInstant(v)
		if err != nil {
			return fmt.Errorf("deliver_at %q: want an RFC 3339 time or Unix milliseconds", v)
		}
		rec.DeliverAt = &ms
	}
	return nil
}

// scheduleValue reads a schedule field's raw JSON: a string's text or a
// number's digits; ok is false for absent or null.
func scheduleValue(name string, raw []byte) (string, bool, error) {
	switch {
	case len(raw) == 0 || string(raw) == "null":
		return "", false, nil
	case raw[0] == '"':
		return string(unquote(raw)), true, nil
	case raw[0] == '-' || raw[0] >= '0' && raw[0] <= '9':
		return string(raw), true, nil
	}
	return "", false, errors.New(name + ": want a string or a number")
}
