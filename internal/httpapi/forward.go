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
func (s *Server) toLeader(w http.ResponseWriter, r *http.Request, user string) (bool, error) {
	if s.cluster == nil || s.cluster.IsLeader() {
		return false, nil
	}
	if _, ok := forwardedUser(r); ok {
		return true, apierr.Unavailable(time.Second, "this node is not the leader any more; retry")
	}
	return true, s.forward(w, r, "", user, nil)
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
