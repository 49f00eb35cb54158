package httpapi

import (
	"net/http"
	"sync"
	"sync/atomic"

	"github.com/narad-io/narad/internal/apierr"
	"github.com/narad-io/narad/internal/broker"
	"github.com/narad-io/narad/internal/meta"
	"github.com/narad-io/narad/internal/ratelimit"
)

// Rate limits at the edge (docs/http-api.md, docs/configuration.md): after
// authentication and the grant, before a body is read or anything is
// stored. A produce is asked first whether its user is in deficit at all
// (Would, one record and one byte), so a refused user's body is never
// read; once the body is read (and a batch decoded) its record count and
// byte total are taken at once, or the request is refused whole, before
// the data plane sees it. A consume costs one request however long it
// polls; acks, extends and nacks cost nothing (they settle work: refusing
// them would only lapse leases into redeliveries).
//
// A request forwarded by another node was limited there, where the client
// is: it is never counted again. With security off every request is one
// user, "anonymous", under the configured defaults.

// anonymous is the user of every request with security off.
const anonymous = "anonymous"

// limits is the edge's side of rate limiting: the node's buckets, its
// configured defaults, and the users refused here (whose metric series
// and buckets go when they are deleted).
type limits struct {
	lim      *ratelimit.Limiter
	defaults meta.Rates
	// unlimited: the defaults limit nothing, so a user without limits of
	// its own costs one comparison.
	unlimited bool

	// tracked: some request here was limited, so there may be buckets
	// and series of users since deleted to drop.
	tracked   atomic.Bool
	usersSeen atomic.Uint64 // users domain version last swept at
	mu        sync.Mutex
	refused   map[string]uint64 // user → incarnation, with a metric series
}

// limitNames are the metric's limit label values, by ratelimit index.
var limitNames = [...]string{
	ratelimit.ProduceRecords:  meta.LimitProduceRecords,
	ratelimit.ProduceBytes:    meta.LimitProduceBytes,
	ratelimit.ConsumeRequests: meta.LimitConsumeRequests,
}

// rateKey is who a request is limited as.
type rateKey struct {
	user  string
	id    uint64
	rates ratelimit.Rates
}

// limited says whether r's user is limited at all, and as whom. It is the
// whole cost of an unlimited request: no lookup, no lock.
func (s *Server) limited(r *http.Request) (rateKey, bool) {
	if s.limits.lim == nil {
		return rateKey{}, false
	}
	if s.limits.tracked.Load() {
		s.sweepLimits()
	}
	var own *meta.Limits
	k := rateKey{user: anonymous}
	if p, ok := principalOf(r); ok {
		own, k.user, k.id = p.Limits, p.Name, p.ID
	} else if _, fwd := forwardedUser(r); fwd {
		return rateKey{}, false // limited at the node the client reached
	}
	if own == nil && s.limits.unlimited {
		return rateKey{}, false
	}
	rr := own.Resolve(s.limits.defaults)
	if rr.Unlimited() {
		return rateKey{}, false
	}
	k.rates = ratelimit.Rates{ratelimit.ProduceRecords: rr.ProduceRecordsPerS,
		ratelimit.ProduceBytes: rr.ProduceBytesPerS, ratelimit.ConsumeRequests: rr.ConsumeRequestsPerS}
	if !s.limits.tracked.Load() {
		s.limits.tracked.Store(true)
	}
	return k, true
}

// mayProduce refuses a produce whose user has no room for even one
// record and one byte, before its body is read.
func (s *Server) mayProduce(r *http.Request) error {
	k, ok := s.limited(r)
	if !ok {
		return nil
	}
	return s.refusal(k, s.limits.lim.Would(k.user, k.id, k.rates, ratelimit.Rates{ratelimit.ProduceRecords: 1, ratelimit.ProduceBytes: 1}), "produce")
}

// takeProduce takes a produce's records and bytes (recordBytes) at once,
// or refuses it whole.
func (s *Server) takeProduce(r *http.Request, records, bytes int) error {
	k, ok := s.limited(r)
	if !ok {
		return nil
	}
	return s.refusal(k, s.limits.lim.Take(k.user, k.id, k.rates,
		ratelimit.Rates{ratelimit.ProduceRecords: int64(records), ratelimit.ProduceBytes: int64(bytes)}), "produce")
}

// takeConsume takes one consume request.
func (s *Server) takeConsume(r *http.Request) error {
	k, ok := s.limited(r)
	if !ok {
		return nil
	}
	return s.refusal(k, s.limits.lim.Take(k.user, k.id, k.rates, ratelimit.Rates{ratelimit.ConsumeRequests: 1}), "consume")
}

// refusal is a refused decision's 429, counted; nil when allowed.
func (s *Server) refusal(k rateKey, d ratelimit.Decision, what string) error {
	if d.Allowed {
		return nil
	}
	name := limitNames[d.Limit]
	s.m.RateLimited.WithLabelValues(k.user, name).Inc()
	s.limits.mu.Lock()
	if s.limits.refused == nil {
		s.limits.refused = map[string]uint64{}
	}
	s.limits.refused[k.user] = k.id
	s.limits.mu.Unlock()
	e := apierr.New(http.StatusTooManyRequests, "user %q is over its %s limit of %d on this node; retry after %d s",
		k.user, name, k.rates[d.Limit], int(d.RetryAfter.Seconds()))
	if what == "produce" && d.Limit != ratelimit.ConsumeRequests {
		e.Message += " (nothing of this request was stored)"
	}
	e.RetryAfter = d.RetryAfter
	return e
}

// sweepLimits drops the buckets and metric series of users that are gone
// (deleted, or re-created as another incarnation), once per change of the
// users domain: on the request path, since a change is rare and the sweep
// is bounded by the table (ratelimit.MaxUsers).
func (s *Server) sweepLimits() {
	if s.userStore == nil {
		return
	}
	v := s.userStore.UsersVersion()
	seen := s.limits.usersSeen.Load()
	if v == seen || !s.limits.usersSeen.CompareAndSwap(seen, v) {
		return
	}
	live := func(user string, id uint64) bool {
		if user == anonymous && s.auth == nil {
			return true
		}
		u, ok := s.userStore.User(user)
		return ok && u.ID == id
	}
	s.limits.lim.Retain(live)
	s.limits.mu.Lock()
	defer s.limits.mu.Unlock()
	for user, id := range s.limits.refused {
		if !live(user, id) {
			delete(s.limits.refused, user)
			s.m.ForgetUser(user)
		}
	}
}

// recordBytes is what records cost the produce bytes limit: what each
// stores of the client's — its key, its payload, each header's name and
// value, and its msg_id. Headers are counted because up to 16 KiB of
// them ride on a payload of one byte: a byte limit that left them out
// would let a user write 16,000 times its rate.
func recordBytes(recs ...broker.ProduceRecord) int {
	n := 0
	for i := range recs {
		r := &recs[i]
		n += len(r.Key) + len(r.Payload) + len(r.MsgID)
		for _, h := range r.Headers {
			n += len(h.Name) + len(h.Value)
		}
	}
	return n
}
