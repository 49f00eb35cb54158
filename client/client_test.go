package client

import (
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

func TestHealthAndReady(t *testing.T) {
	c, f := newFake(t, reply{status: 200, body: "ok"}, reply{status: 503, body: "starting"})
	if err := c.Healthz(ctx); err != nil {
		t.Fatal(err)
	}
	err := c.Readyz(ctx)
	var apiErr *APIError
	if !errors.As(err, &apiErr) || apiErr.Status != 503 || apiErr.Message != "starting" {
		t.Fatalf("readyz: %#v", err)
	}
	f.expect(seen{Method: "GET", Path: "/healthz"}, seen{Method: "GET", Path: "/readyz"})
}

func TestAPIErrorMessageFallbacks(t *testing.T) {
	c, _ := newFake(t, reply{status: 502}, reply{status: 500, body: "<html>" + strings.Repeat("x", 600)})
	err := c.Healthz(ctx)
	if err == nil || err.Error() != "bad gateway (HTTP 502)" {
		t.Errorf("empty body: %v", err)
	}
	err = c.Healthz(ctx)
	if err == nil || err.Error() != "internal server error (HTTP 500)" {
		t.Errorf("long non-JSON body: %v", err)
	}
}

func TestParseRetryAfter(t *testing.T) {
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	tests := []struct {
		in   string
		want time.Duration
	}{
		{"", 0},
		{"7", 7 * time.Second},
		{"-1", 0},
		{now.Add(90 * time.Second).Format(http.TimeFormat), 90 * time.Second},
		{now.Add(-time.Minute).Format(http.TimeFormat), 0},
		{"soon", 0},
	}
	for _, tt := range tests {
		if got := parseRetryAfter(tt.in, now); got != tt.want {
			t.Errorf("parseRetryAfter(%q) = %v, want %v", tt.in, got, tt.want)
		}
	}
}

func TestIsTransient(t *testing.T) {
	tests := []struct {
		err  error
		want bool
	}{
		{nil, false},
		{&APIError{Status: 429}, true},
		{&APIError{Status: 503}, true},
		{&APIError{Status: 500}, true},
		{&APIError{Status: 404}, false},
		{&APIError{Status: 410}, false},
		{context.Canceled, false},
		{context.DeadlineExceeded, false},
		{&net.OpError{Op: "dial", Err: errors.New("connection refused")}, true},
	}
	for _, tt := range tests {
		if got := IsTransient(tt.err); got != tt.want {
			t.Errorf("IsTransient(%v) = %v, want %v", tt.err, got, tt.want)
		}
	}
}

// Every request, errors included, must leave its connection reusable: a
// CLI or bench run that opened a connection per call would exhaust ports.
func TestConnectionsAreReused(t *testing.T) {
	var conns atomic.Int32
	var n atomic.Int32
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		switch n.Add(1) % 3 {
		case 0:
			w.WriteHeader(404)
			io.WriteString(w, `{"error":"nope"}`+strings.Repeat(" ", 8000))
		case 1:
			w.WriteHeader(204)
		default:
			io.WriteString(w, `{"topics":[],"next_page_token":""}`)
		}
	}))
	srv.Config.ConnState = func(_ net.Conn, s http.ConnState) {
		if s == http.StateNew {
			conns.Add(1)
		}
	}
	srv.Start()
	defer srv.Close()
	// A bare host:port must work too.
	c := New(strings.TrimPrefix(srv.URL, "http://"), "", "", nil)
	for range 30 {
		_, _, _ = c.ListTopics(ctx, 0, "")
	}
	if got := conns.Load(); got != 1 {
		t.Fatalf("30 sequential requests opened %d connections, want 1", got)
	}
	if n.Load() != 30 {
		t.Fatalf("server saw %d requests, want 30", n.Load())
	}
}

func TestContextCancelStopsLongPoll(t *testing.T) {
	release := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-r.Context().Done():
		case <-release:
		}
	}))
	defer srv.Close()
	defer close(release)
	c := New(srv.URL, "", "", nil)
	cctx, cancel := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() {
		_, err := c.Consume(cctx, "orders", ConsumeOptions{Wait: time.Minute})
		done <- err
	}()
	cancel()
	select {
	case err := <-done:
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("got %v, want context.Canceled", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Consume did not return after cancel")
	}
}
