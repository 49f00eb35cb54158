package httpapi

import (
	"net/http"
	"strconv"
	"strings"
	"time"
)

// Every request is counted and timed once, whatever answers it (a route, the
// catch-all 404, a refused path), by the labels the reference broker's
// dashboards use: method, route and status. route is the pattern the mux
// matched without its method ("/v1/topics/{topic}/produce"), so the label
// has one value per route however many topics there are; a request that
// matched no route is "unmatched", never its path, which a client could
// vary without bound.

// unmatched is the route label of a request no route pattern matched.
const unmatched = "unmatched"

// observe starts the measurement of one request; its record ends it.
func (s *Server) observe(w http.ResponseWriter) *statusWriter {
	s.m.HTTPInFlight.Inc()
	return &statusWriter{ResponseWriter: w, status: http.StatusOK, m: s.m, start: time.Now()}
}

// record counts the request by the pattern the mux matched: ServeMux sets
// r.Pattern on the request it was given, so it is known here once the
// handler has run.
func (w *statusWriter) record(r *http.Request) {
	m := w.m
	m.HTTPInFlight.Dec()
	method, route := methodLabel(r.Method), routeLabel(r.Pattern)
	m.HTTPRequests.WithLabelValues(method, route, strconv.Itoa(w.status)).Inc()
	m.HTTPDuration.WithLabelValues(method, route).Observe(time.Since(w.start).Seconds())
}

// Unwrap lets http.ResponseController reach the connection's writer
// (flushes, deadlines) through the status recorder.
func (w *statusWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// routeLabel is the pattern without its method. A subtree pattern ("/v1/")
// or a rest wildcard ("{path...}") is a catch-all that answers "no such
// route": unmatched, like a request that matched nothing ("").
func routeLabel(pattern string) string {
	if _, rest, ok := strings.Cut(pattern, " "); ok {
		pattern = rest
	}
	if pattern == "" || strings.HasSuffix(pattern, "/") || strings.Contains(pattern, "...}") {
		return unmatched
	}
	return pattern
}

// methodLabel keeps the standard methods and folds any other into
// "other": the method is the client's to choose, the label's values are
// not.
func methodLabel(m string) string {
	switch m {
	case http.MethodGet, http.MethodHead, http.MethodPost, http.MethodPut, http.MethodPatch,
		http.MethodDelete, http.MethodOptions, http.MethodConnect, http.MethodTrace:
		return m
	}
	return "other"
}
