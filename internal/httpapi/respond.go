package httpapi

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"net/http"
	"strconv"

	"github.com/narad-io/narad/internal/apierr"
)

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	enc.Encode(v)
}

// writeError answers with the error's status and {"error": ...}. Errors
// that are not apierr values are internal: 500 with a generic sentence
// (the detail goes to the log, not to the client).
func (s *Server) writeError(w http.ResponseWriter, r *http.Request, err error) {
	var ae *apierr.Error
	if !errors.As(err, &ae) {
		s.log.Error("internal error", "method", r.Method, "path", r.URL.Path, "err", err)
		ae = apierr.New(http.StatusInternalServerError, "internal error")
	}
	if ae.Status == http.StatusServiceUnavailable {
		secs := int(math.Ceil(ae.RetryAfter.Seconds()))
		w.Header().Set("Retry-After", strconv.Itoa(max(secs, 1)))
	}
	if ae.Status == http.StatusUnauthorized {
		w.Header().Set("WWW-Authenticate", `Basic realm="narad"`)
	}
	writeJSON(w, ae.Status, map[string]string{"error": ae.Message})
}

// readBody reads at most limit bytes. A declared or actual size over the
// limit is 413, decided before the body is read whole.
func readBody(r *http.Request, limit int64, what string) ([]byte, error) {
	if r.ContentLength > limit {
		return nil, apierr.TooLarge("%s of %d bytes is over the cap of %d", what, r.ContentLength, limit)
	}
	b, err := io.ReadAll(io.LimitReader(r.Body, limit+1))
	if err != nil {
		return nil, apierr.BadRequest("reading the %s: %v", what, err)
	}
	if int64(len(b)) > limit {
		return nil, apierr.TooLarge("%s is over the cap of %d bytes", what, limit)
	}
	return b, nil
}

// decodeStrict decodes one JSON object, refusing unknown fields (a typo
// must not silently become a default) and trailing data.
func decodeStrict(body []byte, v any) error {
	if len(body) == 0 {
		return apierr.BadRequest("the request body is empty; a JSON object is required")
	}
	dec := json.NewDecoder(bytesReader(body))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return apierr.BadRequest("invalid JSON body: %v", err)
	}
	if dec.More() {
		return apierr.BadRequest("invalid JSON body: trailing data after the object")
	}
	var extra json.RawMessage
	if err := dec.Decode(&extra); err != io.EOF {
		return apierr.BadRequest("invalid JSON body: trailing data after the object")
	}
	return nil
}

func badParam(name, value, want string) error {
	return apierr.BadRequest("query parameter %s=%q: %s", name, value, want)
}

func errorf(status int, format string, args ...any) error {
	return apierr.New(status, "%s", fmt.Sprintf(format, args...))
}
