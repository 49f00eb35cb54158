package httpapi

import (
	"log/slog"
	"net/http"
	"sync/atomic"

	"github.com/narad-io/narad/internal/apierr"
	"github.com/narad-io/narad/internal/auth"
	"github.com/narad-io/narad/internal/broker"
	"github.com/narad-io/narad/internal/history"
	"github.com/narad-io/narad/internal/meta"
	"github.com/narad-io/narad/internal/metrics"
	"github.com/narad-io/narad/internal/ratelimit"
)

// Readiness reports whether the node may take traffic, and why not.
type Readiness func() (ready bool, reason string)

// Server routes the /v1 API to the data plane and fan-out (seams.go).
type Server struct {
	b     DataPlane
	fan   Children
	m     *metrics.Metrics
	log   *slog.Logger
	auth  Authenticator
	ready Readiness
	mux   *http.ServeMux
	// routes is every pattern registered on mux but the fallback, in
	// order: the route table openapi_test.go holds the document to.
	routes []string

	cluster  Cluster  // nil on a single node
	suspects suspects // owners that did not answer a forward lately
	// turn picks the partition whose owner an unpinned consume asks
	// first (spread.go); one counter for every topic.
	turn atomic.Uint64

	users     UserAdmin // nil: no users API
	userStore auth.Users

	clusterAdmin ClusterAdmin // nil: no /v1/cluster routes

	diskRoots []string // the data directory, as configured and absolute

	limits limits // per-user rate limits (limits.go)

	history *history.Book // nil: stats/history answers only the live sample

	// series are the request metrics' bound children, by pattern
	// (metrics.go): filled in while New registers routes.
	series *seriesTable
}

// Options are the parts of the API a node may leave out; each nil field
// turns its routes off. They are fixed at New: a Server never changes its
// dependencies while it serves.
type Options struct {
	// DataDir is the server's data directory: no error body ever shows a
	// path under it (see scrubPaths).
	DataDir string
	// Users carries out the users API; UserStore resolves the actor of a
	// request forwarded to the leader. Both or neither.
	Users     UserAdmin
	UserStore auth.Users
	// ClusterAdmin serves the /v1/cluster routes.
	ClusterAdmin ClusterAdmin
	// Cluster turns on routing to the leader and to partition owners (nil
	// on a single node).
	Cluster Cluster
	// Limiter holds this node's per-user rate limit buckets (nil: no
	// limits at all); DefaultLimits are the configured limits of users
	// without their own (limits.go).
	Limiter       *ratelimit.Limiter
	DefaultLimits meta.Rates
	// History is this node's ring of topic samples (package history),
	// answered by GET /v1/topics/{topic}/stats/history.
	History *history.Book
}

// New builds the handler. auth may be nil (security off).
func New(b DataPlane, fan Children, m *metrics.Metrics, auth Authenticator, ready Readiness, log *slog.Logger, opts Options) *Server {
	s := &Server{b: b, fan: fan, m: m, series: newSeriesTable(m), auth: auth, ready: ready, log: log, mux: http.NewServeMux(),
		cluster: opts.Cluster, history: opts.History, diskRoots: diskRoots(opts.DataDir),
		limits: limits{lim: opts.Limiter, defaults: opts.DefaultLimits, unlimited: opts.DefaultLimits.Unlimited()}}
	s.handle("POST /v1/topics", s.createTopic)
	s.handle("GET /v1/topics", s.listTopics)
	s.handle("GET /v1/topics/{topic}", s.describeTopic)
	s.handle("PATCH /v1/topics/{topic}", s.alterTopic)
	s.handle("DELETE /v1/topics/{topic}", s.deleteTopic)
	s.handle("POST /v1/topics/{topic}/produce", s.produce)
	s.handle("POST /v1/topics/{topic}/produce/batch", s.produceBatch)
	s.handle("GET /v1/topics/{topic}/consume", s.consume)
	s.handle("POST /v1/topics/{topic}/ack", s.ack)
	s.handle("POST /v1/topics/{topic}/redrive", s.redrive)
	s.handle("POST /v1/topics/{topic}/purge", s.purgeTopic)
	s.handle("GET /v1/topics/{topic}/stats/history", s.topicHistory)
	s.handle("GET /v1/topics/{topic}/offsets", s.offsets)
	s.handle("GET /v1/topics/{topic}/replay", s.replaySince)
	s.handle("GET /v1/topics/{topic}/children", s.listChildren)
	s.handle("POST /v1/topics/{topic}/children", s.attachChild)
	s.handle("DELETE /v1/topics/{topic}/children/{child}", s.detachChild)
	s.handle("PATCH /v1/topics/{topic}/children/{child}", s.patchChild)
	s.public("GET /healthz", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, http.StatusOK, map[string]string{"status": "ok"})
	}))
	s.public("GET /readyz", http.HandlerFunc(s.readyz))
	s.public("GET /metrics", m.Handler())
	s.public("GET /v1/openapi.json", http.HandlerFunc(s.openAPI))
	if opts.Users != nil {
		s.userRoutes(opts.Users, opts.UserStore)
	}
	if opts.ClusterAdmin != nil {
		s.clusterRoutes(opts.ClusterAdmin)
	}
	s.series.add("/")
	s.mux.HandleFunc("/", s.noRoute) // JSON 404 or 405 for everything else, in /v1 and outside
	return s
}

// apiHandler is a /v1 handler: it returns an error instead of writing one.
type apiHandler func(w http.ResponseWriter, r *http.Request, user string) error

// public registers a route that needs no credentials.
func (s *Server) public(pattern string, h http.Handler) {
	s.routes = append(s.routes, pattern)
	s.series.add(pattern)
	s.mux.Handle(pattern, h)
}

// handle wraps a /v1 route with authentication and error writing.
func (s *Server) handle(pattern string, h apiHandler) {
	s.routes = append(s.routes, pattern)
	s.series.add(pattern)
	s.mux.HandleFunc(pattern, func(sw http.ResponseWriter, r *http.Request) {
		user, forwarded := forwardedUser(r)
		if ec := edgeOf(r.Context()); ec.authed {
			user = ec.principal.Name
			r = setPrincipal(r, ec.principal)
		} else if s.auth != nil && !forwarded {
			u, p, ok := r.BasicAuth()
			var principal auth.Principal
			good := false
			if ok {
				principal, good = s.auth.Authenticate(u, p, sourceOf(r))
			}
			if !good {
				s.writeError(sw, r, apierr.New(http.StatusUnauthorized, "missing or wrong credentials"))
				return
			}
			user = principal.Name
			r = setPrincipal(r, principal)
		}
		if s.cluster != nil {
			// Every route about a topic answers 404 for one it does not
			// know: first make sure "not known" is not "not known yet".
			if topic := r.PathValue("topic"); topic != "" && broker.ValidateTopicName(topic) == nil {
				s.cluster.CatchUpTopic(r.Context(), topic)
			}
		}
		if err := checkQuery(r); err != nil {
			s.writeError(sw, r, err)
			return
		}
		if err := h(sw, r, user); err != nil {
			s.writeError(sw, r, err)
		}
	})
}

func (s *Server) readyz(w http.ResponseWriter, r *http.Request) {
	ok, why := s.ready()
	if ok && s.auth != nil {
		// Ready means usable: with security on, a node that cannot
		// authenticate the root admin yet would answer every request 401.
		ok, why = s.auth.Ready()
	}
	if !ok {
		writeJSON(w, http.StatusServiceUnavailable, map[string]string{"status": "not ready", "reason": why})
		return
	}
	writeJSON(w, http.StatusOK, map[string]string{"status": "ready"})
}
