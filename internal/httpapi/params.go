package httpapi

import (
	"bytes"
	"io"
	"net/url"
	"strconv"
	"strings"
	"time"

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
	if n, err := strconv.ParseInt(v, 10, 64); err == nil && n < 0 {
		return 0, badParam("wait", v, "must not be negative")
	}
	d, err := duration.ParseMillis(v)
	if err != nil || d < 0 {
		return 0, badParam("wait", v, `want a duration like "500ms" or "10s", or integer milliseconds`)
	}
	return d, nil
}
