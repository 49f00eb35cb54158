package main

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
)

// noBackoff makes the pause after a transient failure instant.
func noBackoff(t *testing.T) {
	orig := retryBackoff
	retryBackoff = 0
	t.Cleanup(func() { retryBackoff = orig })
}

// A refusal stops every producer at once: at most one request per producer
// is ever sent, not --messages of them; the scratch topic is deleted.
func TestBenchStopsAtTheFirstRefusal(t *testing.T) {
	for _, tt := range []struct {
		status int
		body   string
	}{
		{404, `{"error":"topic not found"}`},
		{401, `{"error":"authentication required"}`},
		{403, `{"error":"not allowed to produce"}`},
		{400, `{"error":"payload does not match the topic schema"}`},
		{409, `{"error":"a delay child takes no produce"}`},
	} {
		api := newBenchAPI(t, func(r req) (int, string) { return tt.status, tt.body })
		r := against(api.broker).run(t, "bench", "--producers", "4", "--messages", "20000", "--batch", "2")
		msg := strings.TrimSuffix(strings.TrimPrefix(tt.body, `{"error":"`), `"}`)
		want := fmt.Sprintf("narad: produce stopped at the first refusal: %s (HTTP %d)\n", msg, tt.status)
		if r.code == 0 || r.stderr[strings.Index(r.stderr, "narad:"):] != want {
			t.Errorf("%d: exit %d stderr %q, want %q", tt.status, r.code, r.stderr, want)
		}
		if !strings.Contains(r.stdout, "produce: stopped at the first refusal: "+msg) {
			t.Errorf("%d: stdout %q", tt.status, r.stdout)
		}
		if n := len(api.messageRequests()); n < 1 || n > 4 {
			t.Errorf("%d: %d produce requests, want 1..4 (one per producer at most)", tt.status, n)
		}
		api.scratch(t)
	}
}

// A failing broker (500, connection trouble) is not a refusal: each
// producer tries benchFailures times in a row, then gives up.
func TestBenchGivesUpOnAFailingBroker(t *testing.T) {
	noBackoff(t)
	api := newBenchAPI(t, func(r req) (int, string) { return 500, `{"error":"disk trouble"}` })
	r := against(api.broker).run(t, "bench", "--producers", "3", "--messages", "20000")
	if r.code != 1 || !strings.Contains(r.stderr, "narad: produce: 9 of 9 requests failed: disk trouble (HTTP 500)") {
		t.Fatalf("exit %d stdout %q stderr %q", r.code, r.stdout, r.stderr)
	}
	if !strings.Contains(r.stdout, "produce: stopped: every worker failed 3 requests in a row") {
		t.Errorf("stdout %q", r.stdout)
	}
	if n := len(api.messageRequests()); n != 9 {
		t.Errorf("%d produce requests, want 3 producers × 3 tries", n)
	}
	api.scratch(t)

	// The same for consumers: the produce phase went through.
	cons := newBenchAPI(t, func(r req) (int, string) {
		if r.Method == "GET" {
			return 500, `{"error":"broken"}`
		}
		return 202, ""
	})
	r = against(cons.broker).run(t, "bench", "--producers", "2", "--messages", "4", "--consume")
	if r.code != 1 || !strings.Contains(r.stdout, "consume: 6 of 6 requests failed; first: broken (HTTP 500)") {
		t.Fatalf("exit %d stdout %q stderr %q", r.code, r.stdout, r.stderr)
	}
	cons.scratch(t)
}

// Ctrl-C (the command's context cancelled) stops the bench: the partial
// figures are printed, the scratch topic is deleted all the same, and the
// exit status is 130.
func TestBenchInterruptedPrintsPartialFiguresAndCleansUp(t *testing.T) {
	ctx, interrupt := context.WithCancel(context.Background())
	defer interrupt()
	var produced atomic.Int64
	api := newBenchAPI(t, func(r req) (int, string) {
		if produced.Add(1) == 5 {
			interrupt()
		}
		return 202, ""
	})
	r := against(api.broker).runWith(t, ctx, "bench", "--producers", "1", "--messages", "1000000", "--json")
	if r.code != 130 {
		t.Fatalf("exit %d, want 130; stdout %q stderr %q", r.code, r.stdout, r.stderr)
	}
	var rep benchReport
	if err := json.Unmarshal([]byte(r.stdout), &rep); err != nil {
		t.Fatalf("no partial report: %v\n%s", err, r.stdout)
	}
	if !rep.Interrupted || rep.Produce.Stopped != stoppedInterrupted || rep.Produce.Messages < 4 ||
		rep.Produce.Messages > 5 || rep.Produce.Errors != 0 || !rep.ScratchDeleted {
		t.Errorf("report %+v produce %+v", rep, rep.Produce)
	}
	api.scratch(t)
	if strings.Contains(r.stderr, "narad:") {
		t.Errorf("an interrupt is not an error: stderr %q", r.stderr)
	}

	// In text: the figures, marked partial.
	ctx2, interrupt2 := context.WithCancel(context.Background())
	defer interrupt2()
	api2 := newBenchAPI(t, func(r req) (int, string) { interrupt2(); return 202, "" })
	r = against(api2.broker).runWith(t, ctx2, "bench", "--producers", "1", "--messages", "1000000")
	if r.code != 130 || !strings.Contains(r.stdout, "produce: ") || !strings.Contains(r.stdout, "bench: interrupted: the figures are partial\n") {
		t.Fatalf("exit %d stdout %q", r.code, r.stdout)
	}
	api2.scratch(t)
}

// A scratch topic is deleted however the bench ends; when the deletion
// fails, the bench fails and says how to delete it by hand. A refused
// create leaves nothing to delete (a 409 names someone else's topic).
func TestBenchScratchTopicLifecycle(t *testing.T) {
	left := newBroker(t, func(r req) (int, string) {
		switch r.Method {
		case "POST":
			if r.Path == "/v1/topics" {
				return 201, `{"name":"x","partitions":1}`
			}
			return 202, ""
		case "DELETE":
			return 503, `{"error":"no leader"}`
		}
		return 404, ""
	})
	r := against(left).run(t, "bench", "--messages", "2")
	if r.code != 1 || !strings.Contains(r.stderr, "narad: could not delete the scratch topic bench-") ||
		!strings.Contains(r.stderr, `(delete it with "narad topic rm bench-`) || !strings.Contains(r.stderr, "expire within 1h anyway") {
		t.Fatalf("exit %d stderr %q", r.code, r.stderr)
	}

	for _, status := range []int{409, 403} {
		refused := newBroker(t, func(r req) (int, string) { return status, `{"error":"no"}` })
		r = against(refused).run(t, "bench")
		if r.code == 0 || !strings.Contains(r.stderr, "narad: creating the scratch topic bench-") {
			t.Errorf("%d: exit %d stderr %q", status, r.code, r.stderr)
		}
		if got := refused.requests(); len(got) != 1 || got[0].Method != "POST" {
			t.Errorf("%d: requests %+v, want the create alone", status, got)
		}
	}
}

// Ctrl-C while the scratch topic is being created: whether or not the
// create was answered, the topic is deleted and the exit is 130.
func TestBenchInterruptedWhileCreatingDeletesTheScratchTopic(t *testing.T) {
	ctx, interrupt := context.WithCancel(context.Background())
	defer interrupt()
	api := newBenchAPIWith(t, interrupt, nil)
	r := against(api.broker).runWith(t, ctx, "bench")
	if r.code != 130 {
		t.Fatalf("exit %d, want 130; stderr %q", r.code, r.stderr)
	}
	api.scratch(t)
	if n := len(api.messageRequests()); n != 0 {
		t.Errorf("%d message requests after Ctrl-C", n)
	}
}
