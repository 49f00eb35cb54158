package client

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
)

// Client talks to one Narad server. It is safe for concurrent use.
type Client struct {
	base       string
	user, pass string
	hc         *http.Client
	retry      RetryPolicy
}

// maxResponseBytes bounds what one response may make us buffer; a consume of
// many large messages is the biggest legitimate answer.
const maxResponseBytes = 256 << 20

// New returns a client for baseURL ("http://host:7942"; a bare "host:port"
// gets "http://"). user and pass are sent as basic auth when user is not
// empty. httpClient may be nil: the default keeps up to 64 idle
// connections per host, because the stock two would make every concurrent
// producer beyond the second open a fresh connection per request. No
// client-wide timeout is set: long-poll consumes are bounded by ctx.
// Options (WithRetry) adjust the rest; without them no call is retried.
func New(baseURL, user, pass string, httpClient *http.Client, opts ...Option) *Client {
	if httpClient == nil {
		t := http.DefaultTransport.(*http.Transport).Clone()
		t.MaxIdleConns = 256
		t.MaxIdleConnsPerHost = 64
		httpClient = &http.Client{Transport: t}
	}
	if !strings.Contains(baseURL, "://") {
		baseURL = "http://" + baseURL
	}
	c := &Client{base: strings.TrimRight(baseURL, "/"), user: user, pass: pass, hc: httpClient}
	for _, o := range opts {
		o(c)
	}
	return c
}

// request is one API call.
type request struct {
	method      string
	path        string // already escaped
	query       url.Values
	body        []byte
	contentType string
	header      http.Header // more request headers (Narad-Msg-Id)
}

// response is a finished call: the body is fully read and closed, so the
// connection has gone back to the pool before the caller looks at it.
type response struct {
	status int
	header http.Header
	body   []byte
}

// do sends req under the client's RetryPolicy and returns the response
// for any 2xx status; any other status becomes an *APIError.
func (c *Client) do(ctx context.Context, req request) (response, error) {
	return c.doRetrying(ctx, req)
}

// once is one try of req.
func (c *Client) once(ctx context.Context, req request) (response, error) {
	u := c.base + req.path
	if len(req.query) > 0 {
		u += "?" + req.query.Encode()
	}
	var body io.Reader
	if req.body != nil {
		body = bytes.NewReader(req.body)
	}
	hreq, err := http.NewRequestWithContext(ctx, req.method, u, body)
	if err != nil {
		return response{}, err
	}
	for k, v := range req.header {
		hreq.Header[k] = v
	}
	if req.contentType != "" {
		hreq.Header.Set("Content-Type", req.contentType)
	}
	hreq.Header.Set("Accept", "application/json")
	if c.user != "" {
		hreq.SetBasicAuth(c.user, c.pass)
	}
	hresp, err := c.hc.Do(hreq)
	if err != nil {
		return response{}, err
	}
	defer hresp.Body.Close()
	data, err := readBody(hresp)
	if err != nil {
		return response{}, fmt.Errorf("%s %s: reading response: %w", req.method, req.path, err)
	}
	if len(data) > maxResponseBytes {
		return response{}, fmt.Errorf("%s %s: response larger than %d bytes", req.method, req.path, maxResponseBytes)
	}
	if hresp.StatusCode < 200 || hresp.StatusCode > 299 {
		return response{}, newAPIError(hresp, data)
	}
	return response{status: hresp.StatusCode, header: hresp.Header, body: data}, nil
}

// readBody reads a response's body, up to one byte past maxResponseBytes.
// A body of known length is read into one buffer of that size (net/http
// ends a body at its Content-Length): io.ReadAll starts at 512 bytes and
// grows, copying a 50 KB consume answer about seven times over.
func readBody(hresp *http.Response) ([]byte, error) {
	n := hresp.ContentLength
	if n <= 0 || n > maxResponseBytes {
		return io.ReadAll(io.LimitReader(hresp.Body, maxResponseBytes+1))
	}
	buf := make([]byte, n)
	if _, err := io.ReadFull(hresp.Body, buf); err != nil {
		return nil, err
	}
	return buf, nil
}

// doJSON sends in (when not nil) as JSON and decodes a 2xx body into out
// (when not nil). It returns the status so callers can tell 200 from 204.
func (c *Client) doJSON(ctx context.Context, method, path string, query url.Values, in, out any) (int, error) {
	req := request{method: method, path: path, query: query}
	if in != nil {
		b, err := json.Marshal(in)
		if err != nil {
			return 0, err
		}
		req.body, req.contentType = b, "application/json"
	}
	resp, err := c.do(ctx, req)
	if err != nil {
		return 0, err
	}
	if out != nil && resp.status != http.StatusNoContent {
		if err := json.Unmarshal(resp.body, out); err != nil {
			return resp.status, fmt.Errorf("%s %s: decoding response: %w", method, path, err)
		}
	}
	return resp.status, nil
}

// topicPath escapes name so a topic called "a/b" or "a b" stays one segment.
func topicPath(name string, rest ...string) string {
	return namedPath("/v1/topics/", name, rest)
}

// namedPath is prefix + the escaped name + rest, which the caller has
// already escaped.
func namedPath(prefix, name string, rest []string) string {
	p := prefix + url.PathEscape(name)
	for _, r := range rest {
		p += "/" + r
	}
	return p
}

var errEmptyName = errors.New("topic name must not be empty")
