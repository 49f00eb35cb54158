package httpapi

import (
	"io"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/narad-io/narad/internal/apierr"
)

// The edge: what every request meets before (and after) its route — a
// path that must be canonical, a query that must parse with each
// parameter once, an answer for a path no route serves (404) or a method
// it does not take (405 with Allow), and, when an error answers a request
// whose body was not read to its end, a bounded drain of that body so the
// client hears the answer instead of a connection reset. Every answer here
// is JSON, like every other error of the API.

// ServeHTTP refuses a path that is not canonical (an empty, "." or ".."
// segment, "//" anywhere) with 400 before the mux sees it: the mux would
// answer it with a redirect to the cleaned path (so GET /v1/topics/.
// would list topics, and //v1//x an HTML page), not with an error.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	x := &exchange{}
	s.observe(x, w)
	w = &x.statusWriter
	r = s.begin(x, r)
	// The mux sets the matched pattern on the request it is given: record
	// the one it gets.
	defer s.record(x, r)
	if err := checkPath(r.URL); err != nil {
		s.writeError(w, r, err)
		return
	}
	s.mux.ServeHTTP(w, r)
}

// checkPath refuses a path the mux would clean (and redirect), judged as
// sent: a literal dot or empty segment is path syntax. An escaped one
// ("%2e%2e", "..%2Fx") is not cleaned by the mux, which matches the
// escaped path; it reaches its route as a name, and the route refuses
// the name in its own words ("topic name \"..\" is reserved"). It walks
// the path in place: splitting it cost an allocation per request.
func checkPath(u *url.URL) error {
	sent := u.EscapedPath()
	rest, ok := strings.CutPrefix(sent, "/")
	if !ok {
		return nil // "*" of OPTIONS *, or CONNECT's authority: the mux answers those
	}
	for {
		seg, after, more := strings.Cut(rest, "/")
		if seg == "." || seg == ".." || (seg == "" && more) {
			return apierr.BadRequest("path %q is not canonical: segment %q is reserved (no empty, \".\" or \"..\" segments)", sent, seg)
		}
		if !more {
			return nil
		}
		rest = after
	}
}

// probeMethods are the methods a 405's Allow may list, in its order.
var probeMethods = []string{http.MethodGet, http.MethodHead, http.MethodPost, http.MethodPut, http.MethodPatch, http.MethodDelete}

// noRoute answers a request no pattern serves: 405 with Allow when the
// path is served for other methods (the mux's own 405 is text/plain, and
// the catch-all pattern that makes errors JSON would hide it), else 404.
func (s *Server) noRoute(w http.ResponseWriter, r *http.Request) {
	var allow []string
	for _, m := range probeMethods {
		probe := &http.Request{Method: m, URL: r.URL, Host: r.Host, Header: http.Header{}}
		if _, pattern := s.mux.Handler(probe); pattern != "" && pattern != "/" {
			allow = append(allow, m)
		}
	}
	if len(allow) == 0 {
		s.writeError(w, r, apierr.NotFound("no route %s %s", r.Method, r.URL.Path))
		return
	}
	if slices.Contains(allow, http.MethodGet) {
		// HEAD is served wherever GET is (the mux routes it there).
		allow = slices.DeleteFunc(allow, func(m string) bool { return m == http.MethodHead })
		allow = slices.Insert(allow, 1, http.MethodHead)
	}
	w.Header().Set("Allow", strings.Join(allow, ", "))
	s.writeError(w, r, apierr.New(http.StatusMethodNotAllowed, "method %s is not allowed on %s (it takes %s)", r.Method, r.URL.Path, strings.Join(allow, ", ")))
}

// checkQuery refuses a query string that does not parse (a stray "%",
// a ";" separator) or that gives a parameter more than once: url.Values
// would silently keep the first of "?wait=1s&wait=30s", or drop what it
// cannot parse, and a request must mean one thing.
func checkQuery(r *http.Request) error {
	if r.URL.RawQuery == "" {
		return nil // most requests: no map to build
	}
	q, err := url.ParseQuery(r.URL.RawQuery)
	if err != nil {
		return apierr.BadRequest("the query string is malformed: %v", err)
	}
	for name, vs := range q {
		if len(vs) > 1 {
			return apierr.BadRequest("query parameter %q is given %d times; give it once", name, len(vs))
		}
	}
	return nil
}

// Draining an unread body before an error answer (docs/security.md, "Input
// limits"). A client that writes its whole body before it reads (Python's
// urllib, most scripts) gets a connection reset instead of the answer when
// the server closes with unread bytes: the peer's kernel discards what it
// received once the reset arrives. So an error answer first reads and
// discards the rest of the body — at most maxDrain bytes, for at most
// drainFor — and only then answers; a body drained to its end keeps the
// connection, one that is not closes it after the answer.
//
// maxDrain is sized so that a 20 MiB body to a 1 MiB route, or any body
// within twice the 16 MiB batch cap, still gets its 413; what it costs is
// reading bytes the client sends anyway, never storing or decoding them.
const (
	maxDrain = 32 << 20
	drainFor = 10 * time.Second
)

// trackedBody remembers whether a handler read the body, so that the
// drain does not read the body of an "Expect: 100-continue" request that
// nobody asked for: reading it would send the 100 Continue and invite the
// very bytes the error answer is there to spare; and whether it was read
// to its end, when there is nothing left to drain.
type trackedBody struct {
	io.ReadCloser
	read bool
	eof  bool  // a Read returned io.EOF
	n    int64 // bytes read
}

func (b *trackedBody) Read(p []byte) (int, error) {
	b.read = true
	n, err := b.ReadCloser.Read(p)
	b.n += int64(n)
	if err == io.EOF {
		b.eof = true
	}
	return n, err
}

// drainBody reads and discards what is left of r's body before an error
// answer (see maxDrain). HTTP/2 needs none (the stream is reset, not the
// connection), nor does a body nobody read of a client that waits for 100
// Continue (the answer goes out instead, and the server closes after it).
func drainBody(w http.ResponseWriter, r *http.Request) {
	if r.Body == nil || r.Body == http.NoBody || r.ContentLength == 0 || r.ProtoMajor != 1 {
		return
	}
	var done int64 // what the handler read already
	if tb, ok := r.Body.(*trackedBody); ok {
		if tb.eof {
			return // read to its end (and maybe closed): nothing is left
		}
		if !tb.read && strings.EqualFold(r.Header.Get("Expect"), "100-continue") {
			return
		}
		done = tb.n
	}
	if r.ContentLength-done > maxDrain {
		w.Header().Set("Connection", "close") // declared too large to be worth reading
		return
	}
	rc := http.NewResponseController(w)
	deadline := rc.SetReadDeadline(time.Now().Add(drainFor)) == nil
	n, err := io.CopyN(io.Discard, r.Body, maxDrain+1)
	if deadline {
		rc.SetReadDeadline(time.Time{}) // the next request on the connection gets the server's own
	}
	if err != io.EOF || n > maxDrain {
		w.Header().Set("Connection", "close")
	}
}
