package httpapi

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"strconv"
	"time"

	"github.com/narad-io/narad/internal/apierr"
	"github.com/narad-io/narad/internal/rpc"
)

// Cluster is what routing needs from the cluster: who leads, who owns a
// partition, and a way to replay a request on another node. Nil on a
// single node without peers.
type Cluster interface {
	Self() string
	IsLeader() bool
	Owner(topic string, partition int) string
	// Forward replays a request on node (or on the leader when node is "").
	Forward(ctx context.Context, node string, req rpc.ForwardRequest) (rpc.ForwardResponse, error)
	// Wait parks on node until topic may have records there, or wait ends;
	// it leases nothing, so abandoning it is free.
	Wait(ctx context.Context, node, topic string, wait time.Duration) (woken bool, err error)
	// MetaVersion and WaitMetaVersion give a forwarded metadata write
	// read-your-writes on this node: the answer waits (briefly) until the
	// local replica applied a change past the version seen before.
	MetaVersion() uint64
	WaitMetaVersion(ctx context.Context, after uint64, within time.Duration)
}

type forwardedKey struct{}

// Forwarded marks a request that another node already authenticated and
// routed: it is served here as is, never forwarded again (no loops), and
// runs as user.
func Forwarded(ctx context.Context, user string) context.Context {
	return context.WithValue(ctx, forwardedKey{}, user)
}

func forwardedUser(r *http.Request) (string, bool) {
	u, ok := r.Context().Value(forwardedKey{}).(string)
	return u, ok
}

// forward replays r on node and writes the answer as the local one would
// have been written: same status, body and Retry-After.
func (s *Server) forward(w http.ResponseWriter, r *http.Request, node, user string, body []byte) error {
	if body == nil && r.Body != nil {
		b, err := io.ReadAll(io.LimitReader(r.Body, 17<<20))
		if err != nil {
			return apierr.BadRequest("reading the body: %v", err)
		}
		body = b
	}
	res, err := s.cluster.Forward(r.Context(), node, rpc.ForwardRequest{Method: r.Method, Path: r.URL.Path,
		RawQuery: r.URL.RawQuery, Body: body, ContentType: r.Header.Get("Content-Type"), User: user})
	if err != nil {
		return err
	}
	writeForwarded(w, res)
	return nil
}

func writeForwarded(w http.ResponseWriter, res rpc.ForwardResponse) {
	if res.ContentType != "" {
		w.Header().Set("Content-Type", res.ContentType)
	}
	if res.RetryAfter > 0 {
		w.Header().Set("Retry-After", strconv.Itoa(int(max(res.RetryAfter/time.Second, 1))))
	}
	w.WriteHeader(res.Status)
	w.Write(res.Body)
}

// toLeader forwards a metadata write to the Raft leader unless this node
// leads (or the request was forwarded here already). It reports whether
// the request was handled.
func (s *Server) toLeader(w http.ResponseWriter, r *http.Request, user string, body []byte) (bool, error) {
	if s.cluster == nil || s.cluster.IsLeader() {
		return false, nil
	}
	if _, ok := forwardedUser(r); ok {
		return true, apierr.Unavailable(time.Second, "this node is not the leader any more; retry")
	}
	before := s.cluster.MetaVersion()
	rec := &statusWriter{ResponseWriter: w, status: http.StatusOK}
	buf := &bufferedWriter{header: http.Header{}}
	if err := s.forward(buf, r, "", user, body); err != nil {
		return true, err
	}
	if buf.status >= 200 && buf.status < 300 {
		s.cluster.WaitMetaVersion(r.Context(), before, 2*time.Second)
	}
	buf.flushTo(rec)
	return true, nil
}

// bufferedWriter holds a forwarded answer until the local replica caught
// up, so a client that reads right after its write sees it here too.
type bufferedWriter struct {
	header http.Header
	status int
	body   bytes.Buffer
}

func (b *bufferedWriter) Header() http.Header         { return b.header }
func (b *bufferedWriter) Write(p []byte) (int, error) { return b.body.Write(p) }
func (b *bufferedWriter) WriteHeader(code int)        { b.status = code }

func (b *bufferedWriter) flushTo(w http.ResponseWriter) {
	for k, v := range b.header {
		w.Header()[k] = v
	}
	w.WriteHeader(b.status)
	w.Write(b.body.Bytes())
}

// toOwner forwards a request about one partition to its owner unless it is
// this node. It reports whether the request was handled.
func (s *Server) toOwner(w http.ResponseWriter, r *http.Request, user, topic string, partition int, body []byte) (bool, error) {
	if s.cluster == nil {
		return false, nil
	}
	owner := s.cluster.Owner(topic, partition)
	if owner == "" || owner == s.cluster.Self() {
		return false, nil
	}
	if _, ok := forwardedUser(r); ok {
		return true, apierr.Unavailable(time.Second, "partition %d of %q moved; retry", partition, topic)
	}
	return true, s.forward(w, r, owner, user, body)
}

// forwardBody is a helper for handlers that already read their body.
func forwardBody(b []byte) []byte {
	if b == nil {
		return []byte{}
	}
	return bytes.Clone(b)
}
