package httpapi

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strconv"
	"time"

	"github.com/narad-io/narad/internal/apierr"
)

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

// replay sends r to node (the leader when node is "") within timeout and
// returns its answer unwritten.
func (s *Server) replay(r *http.Request, node, user string, body []byte, timeout time.Duration) (ForwardResponse, error) {
	if body == nil && r.Body != nil {
		b, err := io.ReadAll(io.LimitReader(r.Body, 17<<20))
		if err != nil {
			return ForwardResponse{}, apierr.BadRequest("reading the body: %v", err)
		}
		body = b
	}
	return s.cluster.Forward(r.Context(), node, ForwardRequest{Method: r.Method, Path: r.URL.Path,
		RawQuery: r.URL.RawQuery, Body: body, ContentType: r.Header.Get("Content-Type"), User: user, Timeout: timeout})
}

// toNode forwards a data-plane request to the owner node and remembers
// whether it answered (suspects).
func (s *Server) toNode(ctx context.Context, node string, req ForwardRequest) (ForwardResponse, error) {
	res, err := s.cluster.Forward(ctx, node, req)
	s.suspects.note(node, err)
	return res, err
}

// dataPlaneTimeout is a forwarded consume, ack or replay's budget: the
// node RPC default (docs/configuration.md, "Checks across settings") plus the
// long-poll wait the owner may spend (capped as the owner caps it). Past it
// the client gets a 503 with Retry-After — well within the HTTP write
// timeout, which must exceed the longest wait — instead of a connection
// closed with no answer.
func (s *Server) dataPlaneTimeout(wait time.Duration) time.Duration {
	return rpcDefaultTimeout + s.b.ConsumeWait(wait)
}

func writeForwarded(w http.ResponseWriter, res ForwardResponse) {
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
	res, err := s.replay(r, "", user, body, leaderForwardTimeout)
	if err != nil {
		return true, err
	}
	if res.Status >= 200 && res.Status < 300 {
		// Answer only once this replica has what the leader had after the
		// write (any other change moving the version meanwhile must not
		// count; an older leader that sends no version: any change does).
		after := before
		if res.MetaVersion > 0 {
			after = res.MetaVersion - 1
		}
		s.cluster.WaitMetaVersion(r.Context(), after, 2*time.Second)
	}
	writeForwarded(w, res)
	return true, nil
}

// toOwner forwards a request about one partition to its owner unless it is
// this node, within the data-plane budget for a long-poll of wait. It
// reports whether the request was handled.
func (s *Server) toOwner(w http.ResponseWriter, r *http.Request, user, topic string, partition int, wait time.Duration) (bool, error) {
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
	res, err := s.toNode(r.Context(), owner, ForwardRequest{Method: r.Method, Path: r.URL.Path,
		RawQuery: r.URL.RawQuery, User: user, Timeout: s.dataPlaneTimeout(wait)})
	if err != nil {
		return true, err
	}
	writeForwarded(w, res)
	return true, nil
}

// forwardBody is a helper for handlers that already read their body.
func forwardBody(b []byte) []byte {
	if b == nil {
		return []byte{}
	}
	return bytes.Clone(b)
}

// forwardedErr is a non-200 answer of another node as the error it
// words (its status, sentence and Retry-After), for a handler that
// combines several nodes' answers rather than passing one on.
func forwardedErr(res ForwardResponse) error {
	var e struct {
		Error string `json:"error"`
	}
	json.Unmarshal(res.Body, &e)
	return &apierr.Error{Status: res.Status, Message: e.Error, RetryAfter: res.RetryAfter}
}
