package httpapi

import (
	"context"
	"net/http"
	"time"

	"github.com/narad-io/narad/internal/auth"
)

// exchange is what the edge keeps about one request, in one allocation:
// the status recorder (metrics), the tracked body (the drain), and the
// caller once authenticated. When the request has a body or security is
// on, it is also the request's context — a layer over the server's that
// answers for exchangeKey and passes every other key, deadline and
// cancellation through — so that the principal needs no context.WithValue
// and no second copy of the request: a produce with security on allocated
// five objects here (recorder, body, value context, two request copies)
// and now allocates two (this, one request copy).
//
// It is never reused: a goroutine of the handler may hold the context
// past the answer (a forward), and must never see another request's
// caller.
type exchange struct {
	context.Context
	statusWriter
	body      trackedBody
	principal auth.Principal
	authed    bool
}

type exchangeKey struct{}

// Value finds the exchange itself; every other key is the server's.
func (x *exchange) Value(key any) any {
	if _, ok := key.(exchangeKey); ok {
		return x
	}
	return x.Context.Value(key)
}

// exchangeOf returns r's exchange, or nil when r does not carry one (no
// body and security off: nothing needed it).
func exchangeOf(r *http.Request) *exchange {
	x, _ := r.Context().Value(exchangeKey{}).(*exchange)
	return x
}

// begin wraps r for the edge: the exchange as its context and its body
// tracked, on a copy (the server keeps its own request, whose body type it
// inspects after the handler to decide whether to keep the connection).
// A request with no body, served with security off, is left as it is.
func (s *Server) begin(x *exchange, r *http.Request) *http.Request {
	hasBody := r.Body != nil && r.Body != http.NoBody
	if !hasBody && s.auth == nil {
		return r
	}
	x.Context = r.Context()
	r2 := r.WithContext(x)
	if hasBody {
		x.body = trackedBody{ReadCloser: r.Body}
		r2.Body = &x.body
	}
	return r2
}

// setPrincipal records who r's caller is, for principalOf.
func setPrincipal(r *http.Request, p auth.Principal) *http.Request {
	if x := exchangeOf(r); x != nil {
		x.principal, x.authed = p, true
		return r
	}
	return r.WithContext(withPrincipal(r.Context(), p)) // a request that did not come through ServeHTTP
}

type statusWriter struct {
	http.ResponseWriter
	status int
	start  time.Time // when it came in
}

func (w *statusWriter) WriteHeader(code int) {
	w.status = code
	w.ResponseWriter.WriteHeader(code)
}
