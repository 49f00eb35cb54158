package client

import (
	"context"
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// fast is a policy whose pauses are short, for tests that retry.
func fast(max time.Duration, events chan<- RetryEvent) RetryPolicy {
	return RetryPolicy{
		MaxElapsed: max,
		Backoff:    Backoff{Initial: 5 * time.Millisecond, Max: 20 * time.Millisecond},
		OnRetry: func(e RetryEvent) {
			if events != nil {
				select {
				case events <- e:
				default:
				}
			}
		},
	}
}

func TestBackoffSchedule(t *testing.T) {
	var def Backoff
	want := []time.Duration{100, 200, 400, 800, 1600, 2000, 2000}
	for i, w := range want {
		if got := def.Delay(i); got != w*time.Millisecond {
			t.Errorf("default Delay(%d) = %v, want %v", i, got, w*time.Millisecond)
		}
	}
	b := Backoff{Initial: time.Second, Max: 30 * time.Second}
	if got := b.Delay(1000); got != 30*time.Second {
		t.Errorf("Delay(1000) = %v: the cap must hold (and nothing overflow)", got)
	}
	if got := b.Pause(0, 5*time.Second); got != 5*time.Second {
		t.Errorf("Pause with Retry-After 5s = %v", got)
	}
	if got := b.Pause(3, time.Second); got != 8*time.Second {
		t.Errorf("Pause(3) with a shorter Retry-After = %v", got)
	}
}

// TestRetryWaitsForALateListener: the node is not listening yet when the
// call starts (a CLI run right after "narad server start &"); the call
// waits for it instead of failing.
func TestRetryWaitsForALateListener(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close() // nothing listens there now

	events := make(chan RetryEvent, 1)
	c := New(addr, "", "", nil, WithRetry(fast(20*time.Second, events)))
	done := make(chan error, 1)
	go func() { done <- c.Healthz(context.Background()) }()

	e := <-events // the call failed once and is waiting
	if !e.Refused() || e.Attempt != 1 || e.Path != "/healthz" {
		t.Fatalf("first retry event %+v (refused %v)", e, e.Refused())
	}
	ln, err = net.Listen("tcp", addr)
	if err != nil {
		t.Skipf("the port was taken meanwhile: %v", err)
	}
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {})}
	go srv.Serve(ln)
	t.Cleanup(func() { srv.Close() })
	if err := <-done; err != nil {
		t.Fatalf("healthz once the node listens: %v", err)
	}
}

func TestRetryHonoursRetryAfter(t *testing.T) {
	var pol = fast(10*time.Second, nil)
	var got []RetryEvent
	pol.OnRetry = func(e RetryEvent) { got = append(got, e) }
	f := &fake{t: t, replies: []reply{
		{status: 503, body: `{"error":"not ready: no Raft leader yet"}`, header: map[string]string{"Retry-After": "1"}},
		{status: 200, body: `{"topics":[]}`},
	}}
	f.srv = httptest.NewServer(http.HandlerFunc(f.serve))
	t.Cleanup(f.srv.Close)
	c := New(f.srv.URL, "alice", "pw", nil, WithRetry(pol))
	if _, _, err := c.ListTopics(ctx, 0, ""); err != nil {
		t.Fatal(err)
	}
	if len(got) != 1 || got[0].Wait != time.Second || StatusOf(got[0].Err) != 503 || got[0].Refused() {
		t.Fatalf("retry events %+v: want one, waiting the server's 1s", got)
	}
	f.expect(seen{Method: "GET", Path: "/v1/topics"}, seen{Method: "GET", Path: "/v1/topics"})
}

func TestRetryGivesUpAfterMaxElapsed(t *testing.T) {
	f := &fake{t: t, replies: []reply{{status: 503, body: `{"error":"no quorum"}`}}}
	f.srv = httptest.NewServer(http.HandlerFunc(f.serve))
	t.Cleanup(f.srv.Close)
	c := New(f.srv.URL, "", "", nil, WithRetry(fast(100*time.Millisecond, nil)))
	err := c.Healthz(ctx)
	var re *RetryError
	if !errors.As(err, &re) || re.Attempts < 2 || StatusOf(err) != 503 {
		t.Fatalf("got %v: want a RetryError around the 503", err)
	}
	if n := f.count(); n != re.Attempts {
		t.Errorf("server saw %d tries, the error says %d", n, re.Attempts)
	}
}

// A Retry-After that would end past the budget is not waited out.
func TestRetryAfterBeyondTheBudgetFailsAtOnce(t *testing.T) {
	c, f := newFake(t, reply{status: 503, body: `{"error":"disk full"}`, header: map[string]string{"Retry-After": "60"}})
	c.retry = fast(time.Second, nil)
	err := c.Healthz(ctx)
	var apiErr *APIError
	if !errors.As(err, &apiErr) || apiErr.RetryAfter != time.Minute {
		t.Fatalf("got %v", err)
	}
	if f.count() != 1 {
		t.Errorf("%d tries, want 1", f.count())
	}
}

func TestNoPolicyNoRetryAndNoRetryOfRefusals(t *testing.T) {
	c, f := newFake(t, reply{status: 503})
	if err := c.Healthz(ctx); StatusOf(err) != 503 || f.count() != 1 {
		t.Fatalf("without a policy: %v after %d tries", err, f.count())
	}
	for _, status := range []int{400, 401, 403, 404, 409, 410, 500} {
		c, f := newFake(t, reply{status: status})
		c.retry = fast(time.Second, nil)
		if err := c.Healthz(ctx); StatusOf(err) != status || f.count() != 1 {
			t.Errorf("%d: %v after %d tries, want no retry", status, err, f.count())
		}
	}
}

// lostAnswers is a server that reads each request and closes the
// connection without answering: the request may have been carried out.
func lostAnswers(t *testing.T) (*Client, *atomic.Int32) {
	t.Helper()
	var n atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n.Add(1)
		conn, _, err := w.(http.Hijacker).Hijack()
		if err == nil {
			conn.Close()
		}
	}))
	t.Cleanup(srv.Close)
	return New(srv.URL, "", "", nil, WithRetry(fast(100*time.Millisecond, nil))), &n
}

// TestRetryAfterALostAnswerOnlyWhenSafe: a create whose answer was lost is
// not sent again (it may have worked: a second try would be refused as
// "already exists"); reads, deletes, acks and produce (at least once, by
// design) are.
func TestRetryAfterALostAnswerOnlyWhenSafe(t *testing.T) {
	once := map[string]func(*Client) error{
		"create topic": func(c *Client) error { _, err := c.CreateTopic(ctx, CreateTopicRequest{Name: "t"}); return err },
		"create user":  func(c *Client) error { _, err := c.CreateUser(ctx, CreateUserRequest{Username: "u"}); return err },
		"attach": func(c *Client) error {
			_, err := c.Attach(ctx, "p", AttachRequest{Child: "c"})
			return err
		},
	}
	again := map[string]func(*Client) error{
		"describe": func(c *Client) error { _, err := c.GetTopic(ctx, "t"); return err },
		"delete":   func(c *Client) error { return c.DeleteTopic(ctx, "t") },
		"ack":      func(c *Client) error { return c.Ack(ctx, "t", "0:1:2") },
		"purge":    func(c *Client) error { _, err := c.Purge(ctx, "t"); return err },
		"produce":  func(c *Client) error { return c.Produce(ctx, "t", []byte("x"), ProduceOptions{}) },
		"produce batch": func(c *Client) error {
			_, err := c.ProduceBatch(ctx, "t", []BatchRecord{RecordFromBytes([]byte("x"))})
			return err
		},
	}
	for name, call := range once {
		c, n := lostAnswers(t)
		if err := call(c); err == nil || n.Load() != 1 {
			t.Errorf("%s: %v after %d tries, want one try", name, err, n.Load())
		}
	}
	for name, call := range again {
		c, n := lostAnswers(t)
		if err := call(c); err == nil || n.Load() < 2 {
			t.Errorf("%s: %v after %d tries, want retries", name, err, n.Load())
		}
	}
}

func TestRetryStopsWhenTheCallerGivesUp(t *testing.T) {
	c, f := newFake(t, reply{status: 503, header: map[string]string{"Retry-After": "5"}})
	c.retry = RetryPolicy{MaxElapsed: time.Minute}
	cctx, cancel := context.WithCancel(ctx)
	var once sync.Once
	c.retry.OnRetry = func(RetryEvent) { once.Do(cancel) }
	err := c.Healthz(cctx)
	if StatusOf(err) != 503 || f.count() != 1 {
		t.Fatalf("got %v after %d tries: want the 503, no second try", err, f.count())
	}
}

// count is how many requests the fake has received.
func (f *fake) count() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.got)
}
