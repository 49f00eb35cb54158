package main

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"
)

// req is one request as the fake broker received it.
type req struct {
	Method string
	Path   string // escaped
	Query  url.Values
	Body   string
	Auth   string // "user:pass", or "" without basic auth
	Header http.Header
}

func (r req) q(name string) string { return r.Query.Get(name) }

// broker is a fake /v1 server: it records every request and answers with
// handle, which tests write per scenario.
type broker struct {
	mu     sync.Mutex
	reqs   []req
	handle func(r req) (int, string)
	srv    *httptest.Server
	// header, when set, adds headers to an answer (a 503's Retry-After).
	header func(r req, status int) http.Header
}

func newBroker(t *testing.T, handle func(r req) (int, string)) *broker {
	t.Helper()
	b := &broker{handle: handle}
	b.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, hr *http.Request) {
		body, _ := io.ReadAll(hr.Body)
		r := req{Method: hr.Method, Path: hr.URL.EscapedPath(), Query: hr.URL.Query(), Body: string(body), Header: hr.Header}
		if u, p, ok := hr.BasicAuth(); ok {
			r.Auth = u + ":" + p
		}
		b.mu.Lock()
		b.reqs = append(b.reqs, r)
		b.mu.Unlock()
		status, out := b.handle(r)
		if b.header != nil {
			for k, vs := range b.header(r, status) {
				w.Header()[k] = vs
			}
		}
		w.WriteHeader(status)
		io.WriteString(w, out)
	}))
	t.Cleanup(b.srv.Close)
	return b
}

func (b *broker) requests() []req {
	b.mu.Lock()
	defer b.mu.Unlock()
	return append([]req(nil), b.reqs...)
}

// only returns the recorded requests matching method and path.
func (b *broker) only(method, path string) []req {
	var out []req
	for _, r := range b.requests() {
		if r.Method == method && r.Path == path {
			out = append(out, r)
		}
	}
	return out
}

// result is one CLI run.
type result struct {
	code           int
	stdout, stderr string
}

// cli runs the narad command line in-process against env (NARAD_ADDR is
// how tests point it at a fake) with stdin. home is also where contexts
// live (home/.config/narad) unless env sets XDG_CONFIG_HOME; empty means
// no home, so no saved contexts.
type cli struct {
	env      map[string]string
	stdin    string
	tty      bool
	stdinTTY bool
	home     string
	now      time.Time // what the clock reads
}

func (c cli) run(t *testing.T, args ...string) result {
	t.Helper()
	return c.runWith(t, context.Background(), args...)
}

// runWith is run under parent: cancelling it is what Ctrl-C does.
func (c cli) runWith(t *testing.T, parent context.Context, args ...string) result {
	t.Helper()
	var out, errOut bytes.Buffer
	a := &app{
		stdin:    strings.NewReader(c.stdin),
		stdout:   &out,
		stderr:   &errOut,
		tty:      c.tty,
		stdinTTY: c.stdinTTY,
		lookupEnv: func(k string) (string, bool) {
			v, ok := c.env[k]
			if !ok && k == "NARAD_RETRY_FOR" {
				// No waiting for a fake that is down on purpose; tests
				// of the waiting set it.
				return "0", true
			}
			return v, ok
		},
		home: func() (string, error) { return c.home, nil },
		now:  func() time.Time { return c.now },
	}
	// A deadline turns a command that never ends (a loop that stopped
	// making progress) into a failed test instead of a hung one.
	ctx, cancel := context.WithTimeout(parent, 20*time.Second)
	defer cancel()
	code := a.run(ctx, args)
	if ctx.Err() != nil && parent.Err() == nil {
		t.Fatalf("narad %v did not finish within 20s", args)
	}
	return result{code: code, stdout: out.String(), stderr: errOut.String()}
}

// against returns a cli pointed at b.
func against(b *broker) cli {
	return cli{env: map[string]string{"NARAD_ADDR": b.srv.URL}}
}

// retrying is c with a retry budget of d.
func (c cli) retrying(d string) cli {
	env := map[string]string{"NARAD_RETRY_FOR": d}
	for k, v := range c.env {
		env[k] = v
	}
	c.env = env
	return c
}

func mustOK(t *testing.T, r result) {
	t.Helper()
	if r.code != 0 {
		t.Fatalf("exit %d\nstdout: %s\nstderr: %s", r.code, r.stdout, r.stderr)
	}
}
