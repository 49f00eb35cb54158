package httpapi

import (
	"context"
	"net"
	"net/http"

	"github.com/narad-io/narad/internal/apierr"
	"github.com/narad-io/narad/internal/auth"
	"github.com/narad-io/narad/internal/meta"
)

// Authenticator checks HTTP Basic credentials from a client address. Nil
// means security is off.
type Authenticator interface {
	Authenticate(user, password, source string) (auth.Principal, bool)
	// Ready reports whether it can authenticate anyone yet (the root
	// admin is in this node's replica): until then the node is not ready.
	Ready() (bool, string)
}

type principalKey struct{}

// principalOf returns the authenticated caller. false means there is
// nothing to check here: security is off, or the request was forwarded by
// the node the client reached, which authorized it before routing
// (docs/security.md).
func principalOf(r *http.Request) (auth.Principal, bool) {
	if x := exchangeOf(r); x != nil && x.authed {
		return x.principal, true
	}
	p, ok := r.Context().Value(principalKey{}).(auth.Principal)
	return p, ok
}

func withPrincipal(ctx context.Context, p auth.Principal) context.Context {
	return context.WithValue(ctx, principalKey{}, p)
}

// sourceOf is the client's address without the port: failed logins are
// slowed per source.
func sourceOf(r *http.Request) string {
	if host, _, err := net.SplitHostPort(r.RemoteAddr); err == nil {
		return host
	}
	return r.RemoteAddr
}

// allow checks a grant: action on topic.
func (s *Server) allow(r *http.Request, action, topic string) error {
	p, ok := principalOf(r)
	if !ok || auth.Allows(p.Grants, action, topic) {
		return nil
	}
	return apierr.Forbidden("user %q may not %s on topic %q", p.Name, action, topic)
}

// allowManage checks the right to change a topic — alter, delete, attach
// and detach children: its owner (the user who created it: that user, not
// a later one of the same name) or an admin of it. A topic unknown here
// is left to the handler's 404 only for a caller who could manage it if
// it existed.
func (s *Server) allowManage(r *http.Request, topic string) error {
	p, ok := principalOf(r)
	if !ok || auth.Allows(p.Grants, meta.ActionAdmin, topic) {
		return nil
	}
	if t, exists := s.b.TopicRecord(topic); exists && t.OwnedBy(p.Name, p.ID) {
		return nil
	}
	return apierr.Forbidden("only the owner of topic %q or an admin of it may change it; user %q is neither", topic, p.Name)
}
