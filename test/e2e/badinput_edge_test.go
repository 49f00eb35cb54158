package e2e

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"
)

// biRawExchange writes head and then the whole body on a fresh connection
// before it reads anything, in 8 KiB writes — what Python's urllib does —
// and returns the answer, or the error that stopped it (a reset, a broken
// pipe: what such clients saw instead of a 413).
func biRawExchange(t testing.TB, n *node, head string, body []byte) (*http.Response, []byte, error) {
	t.Helper()
	conn, err := net.Dial("tcp", n.http)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	conn.SetDeadline(time.Now().Add(60 * time.Second))
	if _, err := io.WriteString(conn, head); err != nil {
		return nil, nil, fmt.Errorf("writing the head: %w", err)
	}
	for len(body) > 0 {
		k := min(len(body), 8<<10)
		if _, err := conn.Write(body[:k]); err != nil {
			return nil, nil, fmt.Errorf("writing the body: %w", err)
		}
		body = body[k:]
	}
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		return nil, nil, fmt.Errorf("reading the answer: %w", err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return resp, b, err
}

// TestBadInput413IsDelivered: an oversize body sent whole before the
// client reads (no Expect: 100-continue) gets its 413 — a status line and
// a JSON error — every time, at 1 MiB + 1 and at 20 MiB, to produce and
// batch produce; nothing is stored (docs/security.md, "Input limits").
func TestBadInput413IsDelivered(t *testing.T) {
	n := startNode(t)
	biWantStatus(t, biDo(t, n, "POST", "/v1/topics", "application/json", []byte(`{"name":"big","partitions":1}`)), http.StatusCreated)
	before := biHWMs(t, n, "big")
	for _, c := range []struct {
		path, ctype string
		size, times int
	}{
		{"/v1/topics/big/produce", "application/octet-stream", 1<<20 + 1, 20},
		{"/v1/topics/big/produce", "application/octet-stream", 20 << 20, 10},
		// A batch body's type is one of the batch formats (another is 415).
		{"/v1/topics/big/produce/batch", "application/json", 20 << 20, 5},
	} {
		body := bytes.Repeat([]byte("x"), c.size)
		head := fmt.Sprintf("POST %s HTTP/1.1\r\nHost: %s\r\nContent-Type: %s\r\nContent-Length: %d\r\n\r\n", c.path, n.http, c.ctype, c.size)
		var bad []string
		for i := range c.times {
			resp, b, err := biRawExchange(t, n, head, body)
			switch {
			case err != nil:
				bad = append(bad, fmt.Sprintf("try %d: %v", i, err))
			case resp.StatusCode != http.StatusRequestEntityTooLarge:
				bad = append(bad, fmt.Sprintf("try %d: %d %q", i, resp.StatusCode, b))
			default:
				biWantError(t, biAnswer{status: resp.StatusCode, body: b, hdr: resp.Header, what: "POST " + c.path}, http.StatusRequestEntityTooLarge, "over the cap")
			}
		}
		if len(bad) > 0 {
			t.Errorf("%s, %d bytes: %d of %d tries got no 413:\n%s", c.path, c.size, len(bad), c.times, strings.Join(bad, "\n"))
		}
	}
	biFence(t, n, "big", before)
}

// TestBadInputEdge: a method a path does not take is 405 with Allow, in
// /v1 and outside; a path no route serves is a JSON 404 (no text/plain
// page, no redirect of /v1); a path the mux would clean is a JSON 400,
// never a redirect; a query parameter given twice is 400 — on the real
// server, whose /healthz and /metrics share the mux with /v1.
func TestBadInputEdge(t *testing.T) {
	n := startNode(t)
	biWantStatus(t, biDo(t, n, "POST", "/v1/topics", "application/json", []byte(`{"name":"e","partitions":1}`)), http.StatusCreated)
	list0 := biListRaw(t, n)
	for _, c := range []struct {
		method, path string
		status       int
		allow        string
		contains     []string
	}{
		{"PUT", "/v1/topics/e", 405, "GET, HEAD, PATCH, DELETE", []string{"PUT", "not allowed"}},
		{"GET", "/v1/topics/e/produce", 405, "POST", []string{"not allowed"}},
		{"DELETE", "/v1/topics", 405, "GET, HEAD, POST", []string{"not allowed"}},
		{"POST", "/v1/topics/e/consume", 405, "GET, HEAD", []string{"not allowed"}},
		{"POST", "/healthz", 405, "GET, HEAD", []string{"not allowed"}},
		{"PUT", "/metrics", 405, "GET, HEAD", []string{"not allowed"}},
		{"GET", "/v1", 404, "", []string{"no route"}},
		{"POST", "/", 404, "", []string{"no route"}}, // GET / is the console's redirect (below)
		{"GET", "/favicon.ico", 404, "", []string{"no route"}},
		{"GET", "/v1/topics/e/", 404, "", []string{"no route"}},
		{"GET", "//v1//topics", 400, "", []string{"not canonical"}},
		{"GET", "/v1//topics", 400, "", []string{"not canonical"}},
		{"GET", "/v1/./topics", 400, "", []string{"not canonical"}},
		{"GET", "/v1/topics?limit=1&limit=2", 400, "", []string{`"limit" is given 2 times`}},
		{"GET", "/v1/topics/e/consume?wait=1s&wait=2s", 400, "", []string{`"wait" is given 2 times`}},
		{"GET", "/v1/topics/e/consume?wait=%zz", 400, "", []string{"malformed"}},
	} {
		a := biDo(t, n, c.method, c.path, "", nil)
		if a.status/100 == 3 {
			t.Errorf("a redirect: %v (Location %q)", a, a.hdr.Get("Location"))
			continue
		}
		biWantError(t, a, c.status, c.contains...)
		if got := a.hdr.Get("Allow"); got != c.allow {
			t.Errorf("%s %s: Allow %q, want %q", c.method, c.path, got, c.allow)
		}
	}
	// The one redirect outside the API: GET / to the web console.
	if a := biDo(t, n, "GET", "/", "", nil); a.status != http.StatusFound || a.hdr.Get("Location") != "/console/" {
		t.Errorf("GET /: %d Location %q, want 302 to /console/", a.status, a.hdr.Get("Location"))
	}
	if got := biListRaw(t, n); got != list0 {
		t.Errorf("the topic list changed:\nbefore %s\nafter  %s", list0, got)
	}
}
