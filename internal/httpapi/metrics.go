package httpapi

import (
	"net/http"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/narad-io/narad/internal/metrics"
)

// Every request is counted and timed once, whatever answers it (a route, the
// catch-all 404, a refused path), by the labels the reference broker's
// dashboards use: method, route and status. route is the pattern the mux
// matched as it was registered, method first ("GET /v1/topics/{topic}"), so
// the label has one value per route however many topics there are, and
// routes that share a path (GET, PATCH and DELETE of a topic) stay apart
// where only route is kept (the duration histogram aggregated by route); a
// request that matched no route is "unmatched", never its path, which a
// client could vary without bound.
//
// The series a request lands in are bound once and kept (requestSeries):
// a WithLabelValues lookup hashes and validates its three label values
// and takes the vector's lock on every call, and strconv.Itoa of the
// status allocates. The cache is bounded by what the vectors hold anyway:
// routes (fixed at New) × the ten method labels × the statuses answered.

// unmatched is the route label of a request no route pattern matched.
const unmatched = "unmatched"

// methodLabels are the method label's values; a request's index in it is
// methodIndex.
var methodLabels = [...]string{http.MethodGet, http.MethodHead, http.MethodPost, http.MethodPut, http.MethodPatch,
	http.MethodDelete, http.MethodOptions, http.MethodConnect, http.MethodTrace, "other"}

// requestSeries are the pre-bound series of one route label.
type requestSeries struct {
	route   string
	methods [len(methodLabels)]atomic.Pointer[boundSeries]
	mu      sync.Mutex // serializes binding (rare); readers take none
}

// boundSeries is what one method of one route has bound so far; it is
// replaced, never changed, when a new status is first answered, so a
// reader needs no lock.
type boundSeries struct {
	duration prometheus.Observer
	statuses []statusCounter
}

type statusCounter struct {
	status  int
	counter prometheus.Counter
}

// seriesTable maps every registered pattern (and "" for a request no
// pattern matched) to its route's series. It is built while New registers
// routes and only read afterwards.
type seriesTable struct {
	m         *metrics.Metrics
	byRoute   map[string]*requestSeries // by route label
	byPattern map[string]*requestSeries // by mux pattern
}

func newSeriesTable(m *metrics.Metrics) *seriesTable {
	t := &seriesTable{m: m, byRoute: map[string]*requestSeries{}, byPattern: map[string]*requestSeries{}}
	t.add("")
	return t
}

// add binds a pattern to its route label's series.
func (t *seriesTable) add(pattern string) {
	route := routeLabel(pattern)
	rs := t.byRoute[route]
	if rs == nil {
		rs = &requestSeries{route: route}
		t.byRoute[route] = rs
	}
	t.byPattern[pattern] = rs
}

// of returns the series of a matched pattern; a pattern not registered
// through New (none should be) gets its route's on the fly.
func (t *seriesTable) of(pattern string) *requestSeries {
	if rs := t.byPattern[pattern]; rs != nil {
		return rs
	}
	return &requestSeries{route: routeLabel(pattern)}
}

// observe records one answered request.
func (t *seriesTable) observe(rs *requestSeries, method string, status int, took time.Duration) {
	mi := methodIndex(method)
	b := rs.methods[mi].Load()
	c := b.counter(status)
	if c == nil {
		b, c = rs.bind(t.m, mi, status)
	}
	c.Inc()
	b.duration.Observe(took.Seconds())
}

func (b *boundSeries) counter(status int) prometheus.Counter {
	if b == nil {
		return nil
	}
	for _, sc := range b.statuses {
		if sc.status == status {
			return sc.counter
		}
	}
	return nil
}

// bind adds status (and on the first request the duration) to method mi
// of rs: a copy with one more counter replaces what readers see.
func (rs *requestSeries) bind(m *metrics.Metrics, mi, status int) (*boundSeries, prometheus.Counter) {
	rs.mu.Lock()
	defer rs.mu.Unlock()
	old := rs.methods[mi].Load()
	if c := old.counter(status); c != nil {
		return old, c
	}
	method := methodLabels[mi]
	next := &boundSeries{}
	if old != nil {
		next.duration = old.duration
		next.statuses = append(next.statuses, old.statuses...)
	} else {
		next.duration = m.HTTPDuration.WithLabelValues(method, rs.route)
	}
	c := m.HTTPRequests.WithLabelValues(method, rs.route, strconv.Itoa(status))
	next.statuses = append(next.statuses, statusCounter{status: status, counter: c})
	rs.methods[mi].Store(next)
	return next, c
}

// observe starts the measurement of one request; record ends it.
func (s *Server) observe(x *exchange, w http.ResponseWriter) {
	s.m.HTTPInFlight.Inc()
	x.statusWriter = statusWriter{ResponseWriter: w, status: http.StatusOK, start: time.Now()}
}

// record counts the request by the pattern the mux matched: ServeMux sets
// r.Pattern on the request it was given, so it is known here once the
// handler has run.
func (s *Server) record(x *exchange, r *http.Request) {
	s.m.HTTPInFlight.Dec()
	s.series.observe(s.series.of(r.Pattern), r.Method, x.status, time.Since(x.start))
}

// Unwrap lets http.ResponseController reach the connection's writer
// through the status recorder (flushes, and the drain's read deadline:
// see drainBody).
func (w *statusWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// routeLabel is the pattern as registered, its method included. A subtree
// pattern ("/v1/") or a rest wildcard ("{path...}") is a catch-all that
// answers "no such route": unmatched, like a request that matched nothing
// ("").
func routeLabel(pattern string) string {
	if pattern == "" || strings.HasSuffix(pattern, "/") || strings.Contains(pattern, "...}") {
		return unmatched
	}
	return pattern
}

// methodIndex keeps the standard methods and folds any other into
// "other": the method is the client's to choose, the label's values are
// not.
func methodIndex(m string) int {
	switch m {
	case http.MethodGet:
		return 0
	case http.MethodHead:
		return 1
	case http.MethodPost:
		return 2
	case http.MethodPut:
		return 3
	case http.MethodPatch:
		return 4
	case http.MethodDelete:
		return 5
	case http.MethodOptions:
		return 6
	case http.MethodConnect:
		return 7
	case http.MethodTrace:
		return 8
	}
	return len(methodLabels) - 1
}
