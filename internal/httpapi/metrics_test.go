package httpapi

import (
	"io"
	"net/http/httptest"
	"strings"
	"testing"
)

// Requests are counted by method, the route's pattern as registered
// (method first), and status, as the reference's dashboards select them;
// routes sharing a path stay apart; requests no route matched are counted
// too, as "unmatched", never by their path.
func TestRequestMetricsByRoutePattern(t *testing.T) {
	e := newEnv(t)
	for range 3 {
		if w := e.do(request{method: "POST", target: "/v1/topics/orders/produce", body: "hi"}); w.Code != 202 {
			t.Fatalf("produce: %d", w.Code)
		}
	}
	e.do(request{method: "GET", target: "/v1/topics/orders"})
	e.do(request{method: "DELETE", target: "/v1/topics/orders"})
	e.do(request{method: "GET", target: "/v1/nowhere/at/all"})
	e.do(request{method: "GET", target: "/v1/topics/./consume"}) // refused before the mux
	e.do(request{method: "BREW", target: "/v1/topics"})
	e.do(request{method: "GET", target: "/healthz"})

	body := scrapeOf(t, e)
	for _, want := range []string{
		`narad_http_requests_total{method="POST",route="POST /v1/topics/{topic}/produce",status="202"} 3`,
		`narad_http_requests_total{method="GET",route="GET /v1/topics/{topic}",status="200"} 1`,
		`narad_http_requests_total{method="DELETE",route="DELETE /v1/topics/{topic}",status="`,
		`narad_http_requests_total{method="GET",route="unmatched",status="404"} 1`,
		`narad_http_requests_total{method="GET",route="unmatched",status="400"} 1`,
		`narad_http_requests_total{method="other",route=`,
		`narad_http_requests_total{method="GET",route="GET /healthz",status="200"} 1`,
		`narad_http_request_duration_seconds_count{method="POST",route="POST /v1/topics/{topic}/produce"} 3`,
		`narad_http_requests_in_flight 0`,
	} {
		if !strings.Contains(body, want) {
			t.Errorf("exposition lacks %s", want)
		}
	}
	series := grepLines(body, "narad_http_")
	for _, leak := range []string{"orders", "nowhere", "BREW"} {
		if strings.Contains(series, leak) {
			t.Errorf("a request's own path or method became a label value (%q):\n%s", leak, grepLines(series, leak))
		}
	}
}

func TestRouteLabel(t *testing.T) {
	for pattern, want := range map[string]string{
		"POST /v1/topics/{topic}/produce": "POST /v1/topics/{topic}/produce",
		"GET /metrics":                    "GET /metrics",
		"/v1/":                            unmatched,
		"":                                unmatched,
		"/{path...}":                      unmatched,
	} {
		if got := routeLabel(pattern); got != want {
			t.Errorf("routeLabel(%q) = %q, want %q", pattern, got, want)
		}
	}
}

func scrapeOf(t *testing.T, e *env) string {
	t.Helper()
	w := httptest.NewRecorder()
	e.s.m.Handler().ServeHTTP(w, httptest.NewRequest("GET", "/metrics", nil))
	b, _ := io.ReadAll(w.Body)
	return string(b)
}

func grepLines(body, s string) string {
	var out []string
	for _, l := range strings.Split(body, "\n") {
		if strings.Contains(l, s) && !strings.HasPrefix(l, "#") {
			out = append(out, l)
		}
	}
	return strings.Join(out, "\n")
}
