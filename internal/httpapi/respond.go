package httpapi

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"net/http"
	"net/url"
	"reflect"
	"strconv"
	"strings"

	"github.com/narad-io/narad/internal/apierr"
)

// jsonContentType is the Content-Type of every JSON answer, one slice for
// all of them: Header().Set allocates a fresh []string per answer. Nothing
// writes into a header's value slice (Set and Add replace or append).
var jsonContentType = []string{"application/json"}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header()["Content-Type"] = jsonContentType
	w.WriteHeader(status)
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	enc.Encode(v)
}

// writeError answers with the error's status and {"error": ...}: an apierr
// value's own, a typed refusal's (apierr.From). Any other error is
// internal: 500 with a generic sentence (the detail goes to the log, not
// to the client).
func (s *Server) writeError(w http.ResponseWriter, r *http.Request, err error) {
	ae, ok := apierr.From(err)
	if !ok {
		s.log.Error("internal error", "method", r.Method, "path", r.URL.Path, "err", err)
		ae = apierr.New(http.StatusInternalServerError, "internal error")
	}
	drainBody(w, r) // before the answer: a client still sending must get to read it
	if ae.Status == http.StatusServiceUnavailable || ae.Status == http.StatusTooManyRequests {
		secs := int(math.Ceil(ae.RetryAfter.Seconds()))
		w.Header().Set("Retry-After", strconv.Itoa(max(secs, 1)))
	}
	if ae.Status == http.StatusUnauthorized {
		w.Header().Set("WWW-Authenticate", `Basic realm="narad"`)
	}
	body := map[string]any{"error": scrubPaths(ae.Message, s.diskRoots)}
	if ae.Index != nil {
		body["index"] = *ae.Index // batch produce: the refused record, for clients not to parse the text
	}
	writeJSON(w, ae.Status, body)
}

// readBody reads at most limit bytes. A declared or actual size over the
// limit is 413, decided before the body is read whole.
func readBody(r *http.Request, limit int64, what string) ([]byte, error) {
	if r.ContentLength > limit {
		return nil, apierr.TooLarge("%s of %d bytes is over the cap of %d", what, r.ContentLength, limit)
	}
	// Sized by the declared length when there is one: io.ReadAll starts
	// at 512 bytes and grows by copying, a dozen times for a 1 MiB batch.
	size := int64(512)
	if r.ContentLength >= 0 {
		size = r.ContentLength
	}
	b, err := readAllInto(make([]byte, 0, size), r.Body, limit)
	if err != nil {
		return nil, apierr.BadRequest("reading the %s: %v", what, err)
	}
	if int64(len(b)) > limit {
		return nil, apierr.TooLarge("%s is over the cap of %d bytes", what, limit)
	}
	return b, nil
}

// decodeStrict decodes one JSON object, refusing unknown fields (a typo
// must not silently become a default), trailing data, and the keys
// encoding/json would take leniently: a field name in another case, a key
// given twice (checkKeys).
func decodeStrict(body []byte, v any) error {
	if len(body) == 0 {
		return apierr.BadRequest("the request body is empty; a JSON object is required")
	}
	dec := json.NewDecoder(bytesReader(body))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return apierr.BadRequest("invalid JSON body: %s", jsonProblem(err))
	}
	if dec.More() {
		return apierr.BadRequest("invalid JSON body: trailing data after the object")
	}
	var extra json.RawMessage
	if err := dec.Decode(&extra); err != io.EOF {
		return apierr.BadRequest("invalid JSON body: trailing data after the object")
	}
	return checkKeys(body, reflect.TypeOf(v))
}

func badParam(name, value, want string) error {
	return apierr.BadRequest("query parameter %s=%q: %s", name, value, want)
}

// jsonProblem says what is wrong with a body in the API's words rather than
// in Go's (no struct or type names).
func jsonProblem(err error) string {
	var te *json.UnmarshalTypeError
	var se *json.SyntaxError
	switch {
	case errors.As(err, &te):
		if te.Field == "" {
			return fmt.Sprintf("want %s, got a JSON %s", kindName(te.Type.Kind().String()), te.Value)
		}
		return fmt.Sprintf("field %q: want %s, got a JSON %s", te.Field, kindName(te.Type.Kind().String()), te.Value)
	case errors.As(err, &se):
		return fmt.Sprintf("malformed JSON at byte %d", se.Offset)
	case errors.Is(err, io.ErrUnexpectedEOF):
		return "the JSON ends early"
	}
	return strings.TrimPrefix(err.Error(), "json: ")
}

func kindName(k string) string {
	switch k {
	case "int", "int64", "int32", "uint64", "uint32", "float64":
		return "a number"
	case "string":
		return "a string"
	case "bool":
		return "true or false"
	case "slice":
		return "an array"
	case "struct", "map":
		return "an object"
	}
	return "another type"
}

// onlyParams refuses query parameters a route does not take: a typo such as
// extnd=true must not silently become a default (settling instead of
// extending).
func onlyParams(q url.Values, allowed ...string) error {
	for name := range q {
		ok := false
		for _, a := range allowed {
			ok = ok || a == name
		}
		if !ok {
			if len(allowed) == 0 {
				return apierr.BadRequest("unknown query parameter %q: this route takes none", name)
			}
			return apierr.BadRequest("unknown query parameter %q (this route takes %s)", name, strings.Join(allowed, ", "))
		}
	}
	return nil
}
