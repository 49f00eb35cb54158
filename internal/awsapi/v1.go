package awsapi

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"net/url"

	"github.com/narad-io/narad/internal/broker"
	"github.com/narad-io/narad/internal/httpapi"
)

// The edge's way to the data plane: /v1 requests served in-process by the
// node's own API (httpapi.AsUser, httpapi.WithRecords), so that grants,
// rate limits, routing to the leader and to partition owners, and every
// refusal are the API's.

// answer is a /v1 answer.
type answer struct {
	status int
	header http.Header
	body   []byte
	text   string // the error's text, when given as a value (httpapi.WithAcks)
}

// recorder is the http.ResponseWriter an in-process request writes to.
type recorder struct {
	h      http.Header
	status int
	buf    bytes.Buffer
}

func (r *recorder) Header() http.Header { return r.h }
func (r *recorder) WriteHeader(code int) {
	if r.status == 0 {
		r.status = code
	}
}
func (r *recorder) Write(p []byte) (int, error) {
	if r.status == 0 {
		r.status = http.StatusOK
	}
	return r.buf.Write(p)
}

// v1 serves one /v1 request for c's caller. body is marshalled as JSON
// unless it is nil.
func (e *Edge) v1(c *call, method, path string, query url.Values, body any) (answer, error) {
	return e.v1Records(c, method, path, query, body, nil)
}

func (e *Edge) v1Records(c *call, method, path string, query url.Values, body any, recs []broker.ProduceRecord) (answer, error) {
	var rd io.Reader = http.NoBody
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return answer{}, errInternal.f("encoding a request: %v", err)
		}
		rd = bytes.NewReader(b)
	}
	ctx := c.ctx
	if recs != nil {
		ctx = httpapi.WithRecords(ctx, recs)
	}
	req, err := http.NewRequestWithContext(ctx, method, "", rd)
	if err != nil {
		return answer{}, errInternal.f("building a request: %v", err)
	}
	// The URL as a server would have parsed it, without printing and
	// parsing it here.
	req.URL = &url.URL{Path: path}
	if len(query) > 0 {
		req.URL.RawQuery = query.Encode()
	}
	req.RemoteAddr = c.remote
	req.Host = c.host
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	rec := &recorder{h: http.Header{}}
	e.api.ServeHTTP(rec, req)
	if rec.status == 0 {
		rec.status = http.StatusOK
	}
	return answer{status: rec.status, header: rec.h, body: rec.buf.Bytes()}, nil
}

// ok reports a 2xx answer.
func (a answer) ok() bool { return a.status >= 200 && a.status < 300 }

// message is a /v1 error answer's text.
func (a answer) message() string {
	if a.text != "" {
		return a.text
	}
	var e struct {
		Error string `json:"error"`
	}
	if json.Unmarshal(a.body, &e) == nil && e.Error != "" {
		return e.Error
	}
	return http.StatusText(a.status)
}

// refusal turns a /v1 refusal into the AWS error a client of service
// expects; notFound is what a 404 means for the action.
func (a answer) refusal(service string, notFound errorKind) *Error {
	msg := a.message()
	switch {
	case a.status == http.StatusNotFound:
		return notFound.f("%s", msg)
	case a.status == http.StatusForbidden || a.status == http.StatusUnauthorized:
		if service == serviceSNS {
			return errAuthorizationError.f("%s", msg)
		}
		return errAccessDenied.f("%s", msg)
	case a.status == http.StatusTooManyRequests:
		if service == serviceSNS {
			return errSNSThrottled.f("%s", msg)
		}
		return errThrottled.f("%s", msg)
	case a.status >= 500:
		return errServiceUnavailable.f("%s", msg)
	}
	if service == serviceSNS {
		return errSNSInvalidParam.f("%s", msg)
	}
	return errInvalidParameter.f("%s", msg)
}

// decode reads a 2xx answer's JSON into v.
func (a answer) decode(v any) error {
	if err := json.Unmarshal(a.body, v); err != nil {
		return errInternal.f("reading an answer of the data plane: %v", err)
	}
	return nil
}
