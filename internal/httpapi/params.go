package httpapi

import (
	"bytes"
	"io"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/narad-io/narad/internal/apierr"
	"github.com/narad-io/narad/internal/broker"
	"github.com/narad-io/narad/internal/duration"
)

func bytesReader(b []byte) io.Reader { return bytes.NewReader(b) }

// optInt parses an optional non-negative decimal query parameter.
func optInt(q url.Values, name string) (*int, error) {
	if !q.Has(name) {
		return nil, nil
	}
	v := q.Get(name)
	n, err := strconv.Atoi(v)
	if err != nil || n < 0 || strings.HasPrefix(v, "+") {
		return nil, badParam(name, v, "want a non-negative integer")
	}
	return &n, nil
}

// optRange parses an optional integer query parameter that must lie in
// lo..hi, refusing with the API's one wording of a range error ("max must
// be 1..1000, got 0").
func optRange(q url.Values, name string, lo, hi int) (*int, error) {
	if !q.Has(name) {
		return nil, nil
	}
	v := q.Get(name)
	n, err := strconv.Atoi(v)
	if err != nil || strings.HasPrefix(v, "+") {
		return nil, apierr.BadRequest("%s must be an integer %d..%d, got %q", name, lo, hi, v)
	}
	if n < lo || n > hi {
		return nil, rangeErr(name, n, lo, hi)
	}
	return &n, nil
}

// rangeErr is the one wording of a value out of its range.
func rangeErr(name string, got, lo, hi int) error {
	return apierr.BadRequest("%s must be %d..%d, got %d", name, lo, hi, got)
}

func optUint(q url.Values, name string) (*uint64, error) {
	if !q.Has(name) {
		return nil, nil
	}
	v := q.Get(name)
	n, err := strconv.ParseUint(v, 10, 64)
	if err != nil || strings.HasPrefix(v, "+") {
		return nil, badParam(name, v, "want a non-negative integer")
	}
	return &n, nil
}

// parseWait accepts a duration ("500ms", "10s") or integer milliseconds.
func parseWait(q url.Values) (time.Duration, error) {
	if !q.Has("wait") {
		return 0, nil
	}
	v := q.Get("wait")
	if strings.HasPrefix(v, "-") { // only then can it be a negative integer: no *NumError for "1s"
		if n, err := strconv.ParseInt(v, 10, 64); err == nil && n < 0 {
			return 0, badParam("wait", v, "must not be negative")
		}
	}
	d, err := duration.ParseMillis(v)
	if err != nil || d < 0 {
		return 0, badParam("wait", v, `want a duration like "500ms" or "10s", or integer milliseconds (wait=1 is 1 ms)`)
	}
	return d, nil
}

// parseExtend reads an ack's extend: absent, the ack settles; "true"
// renews the lease for the topic's visibility timeout (d 0); a zero
// duration ("0", "0s", "0ms") nacks; any other duration, in wait's syntax
// (a bare integer is milliseconds: "1" is 1 ms), renews it for that long,
// 1ms..12h (broker.ValidLeaseDuration).
func parseExtend(q url.Values) (op broker.AckOp, d time.Duration, err error) {
	if !q.Has("extend") {
		return broker.Settle, 0, nil
	}
	v := q.Get("extend")
	if v == "true" {
		return broker.Extend, 0, nil
	}
	d, err = duration.ParseMillis(v)
	if err != nil {
		return 0, 0, badParam("extend", v, `want "true" (extend) or "0" (nack), or a duration of 1ms..12h to extend for ("45s", or integer milliseconds)`)
	}
	if d == 0 {
		return broker.Nack, 0, nil
	}
	if err := broker.ValidLeaseDuration("extend", d); err != nil {
		return 0, 0, err
	}
	return broker.Extend, d, nil
}

// parseVisibility reads a consume's visibility: how long the leases it
// grants live instead of the topic's timeout, in wait's syntax, 1ms..12h;
// 0 when absent.
func parseVisibility(q url.Values) (time.Duration, error) {
	if !q.Has("visibility") {
		return 0, nil
	}
	v := q.Get("visibility")
	d, err := duration.ParseMillis(v)
	if err != nil {
		return 0, badParam("visibility", v, `want a duration of 1ms..12h ("45s", or integer milliseconds)`)
	}
	if err := broker.ValidLeaseDuration("visibility", d); err != nil {
		return 0, err
	}
	return d, nil
}
