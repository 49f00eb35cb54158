package httpapi

import (
	"net/http"
	"strings"
	"testing"
	"time"
)

// A method a path does not take is 405 with Allow, in /v1 and outside;
// a path no route serves is a JSON 404 wherever it is (no text/plain
// page, no redirect of /v1 to /v1/); a path the mux would clean and
// redirect is a 400.
func TestTheEdgeAnswersInJSON(t *testing.T) {
	cases := []struct {
		method, target string
		want           int
		allow          string
		says           string
	}{
		{"PUT", "/v1/topics/orders", 405, "GET, HEAD, PATCH, DELETE", "method PUT is not allowed on /v1/topics/orders"},
		{"GET", "/v1/topics/orders/produce", 405, "POST", "it takes POST"},
		{"DELETE", "/v1/topics", 405, "GET, HEAD, POST", "method DELETE"},
		{"GET", "/v1/topics/orders/ack", 405, "POST", "not allowed"},
		{"POST", "/v1/topics/orders/consume", 405, "GET, HEAD", "not allowed"},
		{"PUT", "/v1/users/bob", 405, "GET, HEAD, PATCH, DELETE", "not allowed"},
		{"POST", "/healthz", 405, "GET, HEAD", "not allowed"},
		{"DELETE", "/metrics", 405, "GET, HEAD", "not allowed"},
		{"OPTIONS", "/v1/topics/orders/children", 405, "GET, HEAD, POST", "method OPTIONS"},
		{"GET", "/v1", 404, "", "no route GET /v1"},
		{"GET", "/", 404, "", "no route GET /"},
		{"GET", "/nothing", 404, "", "no route GET /nothing"},
		{"GET", "/v2/topics", 404, "", "no route"},
		{"GET", "/v1/topics/orders/", 404, "", "no route"},
		{"GET", "//v1//topics", 400, "", `path "//v1//topics" is not canonical`},
		{"GET", "/v1//topics", 400, "", "not canonical"},
		{"GET", "/metrics/.", 400, "", `segment "."`},
		{"GET", "/a/../v1/topics", 400, "", `segment ".."`},
		// Escaped dots are a name, not path syntax: the route refuses the name.
		{"GET", "/v1/topics/%2e%2e/consume", 400, "", `topic name ".." is reserved`},
		{"POST", "/v1/topics/..%2Fx/produce", 400, "", `topic name "../x"`},
	}
	for _, c := range cases {
		t.Run(c.method+" "+c.target, func(t *testing.T) {
			e := newEnv(t)
			w := e.do(request{method: c.method, target: c.target})
			if w.Code != c.want {
				t.Fatalf("%d %q (Location %q), want %d", w.Code, w.Body.String(), w.Header().Get("Location"), c.want)
			}
			if msg := errorBody(t, w); !strings.Contains(msg, c.says) {
				t.Errorf("error %q does not say %q", msg, c.says)
			}
			if got := w.Header().Get("Allow"); got != c.allow {
				t.Errorf("Allow %q, want %q", got, c.allow)
			}
			if m := e.rec.mutations(); len(m) > 0 {
				t.Errorf("reached the rooms: %v", m)
			}
		})
	}
}

// A wait above the server's longest is capped, not refused, and the
// answer says so; a wait within it says nothing.
func TestAWaitAboveTheMaximumIsCappedAndSaysSo(t *testing.T) {
	for target, want := range map[string]string{
		"/v1/topics/orders/consume?wait=1m":             "10s",
		"/v1/topics/orders/consume?wait=600000":         "10s",
		"/v1/topics/orders/consume?wait=10001ms&max=5":  "10s",
		"/v1/topics/orders/consume?wait=10s":            "",
		"/v1/topics/orders/consume?wait=2s":             "",
		"/v1/topics/orders/consume?partition=1&wait=1h": "10s",
		"/v1/topics/orders/consume":                     "",
	} {
		t.Run(target, func(t *testing.T) {
			e := newEnv(t)
			w := e.do(request{method: "GET", target: target})
			if w.Code != http.StatusNoContent {
				t.Fatalf("%d %q", w.Code, w.Body.String())
			}
			if got := w.Header().Get("Narad-Wait-Capped"); got != want {
				t.Fatalf("Narad-Wait-Capped %q, want %q", got, want)
			}
			if want != "" {
				if d, err := time.ParseDuration(want); err != nil || e.plane.ConsumeWait(time.Hour) != d {
					t.Fatalf("the header names %q, the cap is %v", want, e.plane.ConsumeWait(time.Hour))
				}
			}
		})
	}
}
