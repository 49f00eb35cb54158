package httpapi

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// The edge over HTTP/2 without TLS (a node's http.h2c): every rule that
// holds for HTTP/1.1 holds for a prior-knowledge h2c client too — 405 with
// Allow, 413 for a body over its cap whether declared or not (and the
// client hears it although it sends the whole body), a query parameter
// given twice, a path that is not canonical, credentials checked before
// the body is parsed — and a produce is answered 202 with its payload
// intact.

// h2cServer serves e's API with HTTP/1.1 and h2c, as a node does.
func h2cServer(t *testing.T, e *env) (string, *http.Client) {
	t.Helper()
	srv := httptest.NewUnstartedServer(e.s)
	var p http.Protocols
	p.SetHTTP1(true)
	p.SetUnencryptedHTTP2(true)
	srv.Config.Protocols = &p
	srv.Start()
	t.Cleanup(srv.Close)
	var cp http.Protocols
	cp.SetUnencryptedHTTP2(true)
	tr := &http.Transport{Protocols: &cp}
	t.Cleanup(tr.CloseIdleConnections)
	return srv.URL, &http.Client{Transport: tr}
}

type h2Req struct {
	method, path string
	body         io.Reader
	user         string // "name:password"; "" sends none
}

func h2Do(t *testing.T, c *http.Client, base string, r h2Req) (*http.Response, string) {
	t.Helper()
	req, err := http.NewRequest(r.method, base+r.path, r.body)
	if err != nil {
		t.Fatal(err)
	}
	if name, pw, ok := strings.Cut(r.user, ":"); ok {
		req.SetBasicAuth(name, pw)
	}
	res, err := c.Do(req)
	if err != nil {
		t.Fatalf("%s %s over h2c: %v", r.method, r.path, err)
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	if err != nil {
		t.Fatalf("%s %s over h2c: reading the answer: %v", r.method, r.path, err)
	}
	if res.ProtoMajor != 2 {
		t.Fatalf("%s %s answered over %s, want HTTP/2", r.method, r.path, res.Proto)
	}
	return res, string(b)
}

// wantError requires status and the API's JSON error shape.
func wantError(t *testing.T, what string, res *http.Response, body string, status int) {
	t.Helper()
	var m map[string]any
	if res.StatusCode != status || res.Header.Get("Content-Type") != "application/json" || json.Unmarshal([]byte(body), &m) != nil || m["error"] == nil {
		t.Errorf("%s over h2c: %d %q %q, want %d with a JSON error", what, res.StatusCode, res.Header.Get("Content-Type"), body, status)
	}
}

// onlyReader hides a reader's length, so the client sends no
// Content-Length.
type onlyReader struct{ io.Reader }

func TestEdgeRulesHoldOverH2C(t *testing.T) {
	e := newEnv(t)
	base, c := h2cServer(t, e)

	res, _ := h2Do(t, c, base, h2Req{method: "POST", path: "/v1/topics/orders/produce", body: strings.NewReader("hello over h2c")})
	if res.StatusCode != http.StatusAccepted {
		t.Fatalf("produce over h2c: %d", res.StatusCode)
	}
	if got := e.rec.last("Produce"); !strings.Contains(got, `payload="hello over h2c"`) {
		t.Errorf("the produced record is %q", got)
	}

	res, body := h2Do(t, c, base, h2Req{method: "DELETE", path: "/v1/topics/orders/produce"})
	wantError(t, "a method the path does not take", res, body, http.StatusMethodNotAllowed)
	if res.Header.Get("Allow") != "POST" {
		t.Errorf("405 over h2c has Allow %q, want POST", res.Header.Get("Allow"))
	}

	big := bytes.Repeat([]byte("z"), 1<<20+1)
	res, body = h2Do(t, c, base, h2Req{method: "POST", path: "/v1/topics/orders/produce", body: bytes.NewReader(big)})
	wantError(t, "a declared body over the cap", res, body, http.StatusRequestEntityTooLarge)
	res, body = h2Do(t, c, base, h2Req{method: "POST", path: "/v1/topics/orders/produce", body: onlyReader{bytes.NewReader(big)}})
	wantError(t, "an undeclared body over the cap", res, body, http.StatusRequestEntityTooLarge)
	res, body = h2Do(t, c, base, h2Req{method: "POST", path: "/v1/topics", body: onlyReader{bytes.NewReader(big)}})
	wantError(t, "an admin body over its cap", res, body, http.StatusRequestEntityTooLarge)

	res, body = h2Do(t, c, base, h2Req{method: "POST", path: "/v1/topics/orders/produce?partition=1&partition=2", body: strings.NewReader("x")})
	wantError(t, "a parameter given twice", res, body, http.StatusBadRequest)
	res, body = h2Do(t, c, base, h2Req{method: "POST", path: "/v1/topics/orders/produce?extnd=true", body: strings.NewReader("x")})
	wantError(t, "a parameter the route does not take", res, body, http.StatusBadRequest)
	res, body = h2Do(t, c, base, h2Req{method: "GET", path: "/v1//topics"})
	wantError(t, "a path that is not canonical", res, body, http.StatusBadRequest)
	res, body = h2Do(t, c, base, h2Req{method: "GET", path: "/v1/nowhere"})
	wantError(t, "a path no route serves", res, body, http.StatusNotFound)

	if n := e.rec.count("Produce"); n != 1 {
		t.Errorf("%d produces reached the data plane, want the one valid one", n)
	}
}

func TestCredentialsBeforeTheBodyOverH2C(t *testing.T) {
	e := newEnv(t, secured)
	base, c := h2cServer(t, e)
	res, body := h2Do(t, c, base, h2Req{method: "POST", path: "/v1/topics", body: strings.NewReader(`{"name": `)})
	wantError(t, "no credentials and a malformed body", res, body, http.StatusUnauthorized)
	if res.Header.Get("WWW-Authenticate") == "" {
		t.Error("401 over h2c without WWW-Authenticate")
	}
	res, body = h2Do(t, c, base, h2Req{method: "POST", path: "/v1/topics/orders/produce", body: strings.NewReader("x"), user: "producer:x"})
	wantError(t, "a wrong password", res, body, http.StatusUnauthorized)
	res, _ = h2Do(t, c, base, h2Req{method: "POST", path: "/v1/topics/orders/produce", body: strings.NewReader("x"), user: "producer:pw"})
	if res.StatusCode != http.StatusAccepted {
		t.Errorf("a good produce over h2c with credentials: %d", res.StatusCode)
	}
	res, body = h2Do(t, c, base, h2Req{method: "POST", path: "/v1/topics/orders/produce", body: strings.NewReader("x"), user: "consumer:pw"})
	wantError(t, "a produce without the grant", res, body, http.StatusForbidden)
}
