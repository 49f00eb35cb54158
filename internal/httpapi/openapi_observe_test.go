package httpapi

import (
	"flag"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"sort"
	"strings"
	"sync"
	"testing"
)

// Every answer any test of this package gets through env.do is checked
// against the document once the tests have run (TestMain): its status
// must be one the document gives that route, and a JSON answer of 2xx
// must validate against the documented schema. So the document cannot
// drift from what the handlers answer, in every case the tests reach.

type observation struct {
	route, target string
	status        int
	body          []byte
	contentType   string
	headers       []string // Narad-* headers set
	forwarded     bool     // the answer came from a fake of another node
}

var observed struct {
	mu   sync.Mutex
	seen []observation
}

// observe records the answer to r (called by env.do). r.Pattern is the
// route the mux chose.
func observe(e *env, r *http.Request, w *httptest.ResponseRecorder) {
	if r.Pattern == "" {
		return
	}
	o := observation{route: r.Pattern, target: r.Method + " " + r.URL.String(), status: w.Code,
		body: w.Body.Bytes(), contentType: w.Header().Get("Content-Type"), forwarded: e.cl != nil}
	for h := range w.Header() {
		if strings.HasPrefix(h, "Narad-") {
			o.headers = append(o.headers, h)
		}
	}
	observed.mu.Lock()
	defer observed.mu.Unlock()
	observed.seen = append(observed.seen, o)
}

// checkObserved returns every way the answers seen disagree with the
// document.
func checkObserved() []string {
	d, err := parseDoc(openAPIDocument)
	if err != nil {
		return []string{err.Error()}
	}
	observed.mu.Lock()
	defer observed.mu.Unlock()
	seen, used := map[string]bool{}, map[int]bool{}
	var bad []string
	note := func(format string, args ...any) {
		if s := fmt.Sprintf(format, args...); !seen[s] {
			seen[s] = true
			bad = append(bad, s)
		}
	}
	for _, o := range observed.seen {
		r := d.routes[o.route]
		if r == nil {
			continue // the /v1/ fallback: no route of the document
		}
		if o.status == http.StatusInternalServerError {
			continue // any route may fail inside (the document's description says so)
		}
		resp, ok := r.op.Responses[fmt.Sprint(o.status)]
		if !ok {
			note("%s answered %d (%s); the document does not give that status", o.route, o.status, o.target)
			continue
		}
		resp, _ = d.resolveResponse(resp)
		for _, h := range o.headers {
			if resp.Headers[h] == nil {
				note("%s %d sets header %s; the document does not describe it", o.route, o.status, h)
			}
		}
		if o.forwarded || o.contentType != "application/json" || o.status >= 300 {
			continue // forwarded answers are the fake's; errors are checked by errorBody
		}
		pointer := d.responseSchema(r, o.status)
		if pointer == "" {
			note("%s %d answers JSON; the document describes no JSON body", o.route, o.status)
			continue
		}
		if err := validateJSON(pointer, o.body); err != nil && !isPending(o.route, err.Error(), used) {
			note("%s %d (%s): the answer %s does not match the document: %v", o.route, o.status, o.target, o.body, err)
		}
	}
	if fullRun() {
		for i, p := range pending {
			if !used[i] {
				note("pending disagreement %q is gone (%s): delete it from pending", p.says, p.why)
			}
		}
	}
	sort.Strings(bad)
	return bad
}

// fullRun reports whether every test of the package ran (no -run or
// -skip), so that a pending disagreement not seen is really gone.
func fullRun() bool {
	for _, name := range []string{"test.run", "test.skip"} {
		if f := flag.Lookup(name); f != nil && f.Value.String() != "" {
			return false
		}
	}
	return true
}

// pending are disagreements of the code with the document where the
// document describes a target that work under way has not reached yet
// (none today): each is tolerated while it occurs, and reported as stale
// (delete it then) once a full run of the package no longer sees it.
var pending = []struct{ route, says, why string }{}

// isPending reports whether a disagreement is a pending one, noting
// which were seen.
func isPending(route, problem string, used map[int]bool) bool {
	for i, p := range pending {
		if (p.route == "" || p.route == route) && strings.Contains(problem, p.says) {
			used[i] = true
			return true
		}
	}
	return false
}

func TestMain(m *testing.M) {
	code := m.Run()
	if code == 0 {
		if bad := checkObserved(); len(bad) > 0 {
			fmt.Fprintln(os.Stderr, "FAIL: answers the tests saw disagree with openapi.json:")
			for _, b := range bad {
				fmt.Fprintln(os.Stderr, "  "+b)
			}
			code = 1
		}
	}
	os.Exit(code)
}
