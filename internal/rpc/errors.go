package rpc

import (
	"errors"
	"net/http"
	"strings"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/narad-io/narad/internal/apierr"
	"github.com/narad-io/narad/internal/refusal"

	nodepb "github.com/narad-io/narad/internal/rpc/proto"
)

// internalMessage is what a caller learns about a failure that is not an
// apierr: the same sentence the local HTTP layer answers, so a forwarded
// request cannot leak more than a local one (the cause is logged on the
// node where it happened).
const internalMessage = "internal error"

// encodeError turns a handler error into the gRPC status sent back. The
// refusal travels as an nodepb.Error detail, which is what the client
// trusts: its HTTP form (apierr.From, exactly as the local client API
// writes it) and, for a typed refusal, its kind; the gRPC code is chosen to
// read sensibly in gRPC tooling only.
func encodeError(err error) error {
	detail := errorDetail(err)
	st := status.New(codeFor(int(detail.Status)), detail.Message)
	withDetail, derr := st.WithDetails(detail)
	if derr != nil {
		// Cannot happen for a registered message type; the bare code still
		// maps to a sensible status on the client.
		return st.Err()
	}
	return withDetail.Err()
}

// errorDetail is err as the wire carries it (the status detail of a call,
// a FetchAnswer's error on a stream), which fromDetail rebuilds.
func errorDetail(err error) *nodepb.Error {
	ae, ok := apierr.From(err)
	if !ok {
		ae = apierr.New(http.StatusInternalServerError, internalMessage)
	}
	detail := &nodepb.Error{
		Status:       int32(ae.Status),
		Message:      ae.Message,
		RetryAfterMs: toMillis(ae.RetryAfter),
	}
	var plain *apierr.Error
	if r, ok := refusal.As(err); ok && !errors.As(err, &plain) {
		detail.Kind = string(r.Kind) // From gave it its status: the same refusal
	}
	return detail
}

// codeFor maps an HTTP status onto the closest gRPC code.
func codeFor(httpStatus int) codes.Code {
	switch httpStatus {
	case http.StatusBadRequest:
		return codes.InvalidArgument
	case http.StatusUnauthorized:
		return codes.Unauthenticated
	case http.StatusForbidden:
		return codes.PermissionDenied
	case http.StatusNotFound, http.StatusGone:
		return codes.NotFound
	case http.StatusConflict:
		return codes.Aborted
	case http.StatusRequestEntityTooLarge, http.StatusTooManyRequests:
		return codes.ResourceExhausted
	case http.StatusNotImplemented:
		return codes.Unimplemented
	case http.StatusServiceUnavailable:
		return codes.Unavailable
	case http.StatusGatewayTimeout:
		return codes.DeadlineExceeded
	case http.StatusInternalServerError:
		return codes.Internal
	}
	return codes.Unknown
}

// decodeError turns what a call to addr returned into the error the handler
// returned: a typed refusal (*refusal.Error) when the detail names a kind
// this node knows, so callers classify a remote refusal exactly like a
// local one, else an *apierr.Error.
//
// A status with an nodepb.Error detail is a handler's answer and is rebuilt
// exactly. Without one the failure happened around the handler: the
// transport (503, retry soon), the secret (401), or a peer that does not
// know the method (501; this is what keeps mixed-version upgrades safe).
func decodeError(addr, method string, err error) error {
	if err == nil {
		return nil
	}
	st, ok := status.FromError(err)
	if !ok {
		return apierr.New(http.StatusInternalServerError, "rpc %s to node %s: %v", method, addr, err)
	}
	for _, d := range st.Details() {
		if e, ok := d.(*nodepb.Error); ok {
			return fromDetail(e)
		}
	}
	switch st.Code() {
	case codes.Unavailable, codes.DeadlineExceeded, codes.Canceled:
		e := apierr.Unavailable(unreachableRetry, "node %s unreachable: %s", addr, st.Message())
		if st.Code() == codes.Unavailable && strings.Contains(st.Message(), dialFailure) {
			return undelivered{e}
		}
		return e
	case codes.Unauthenticated:
		return apierr.New(http.StatusUnauthorized, "cluster secret refused by node %s", addr)
	case codes.Unimplemented:
		return apierr.New(http.StatusNotImplemented, "node %s does not implement %s (a different version?): %s", addr, method, st.Message())
	}
	return apierr.New(http.StatusInternalServerError, "rpc %s to node %s failed: %s: %s", method, addr, st.Code(), st.Message())
}

// dialFailure is in the message of gRPC's Unavailable status for a call
// that failed because no connection to the node could be made (a refused
// or timed-out dial, or a connection in backoff after one): grpc-go sends
// nothing on a connection it has not made, so the node never saw the
// call. A call that failed on an open connection (a reset, an EOF) may
// have been served, and is not marked.
const dialFailure = "Error while dialing"

// undelivered is the error of a call that never reached its node: an
// *apierr.Error (a 503, as for any unreachable node) with
// refusal.ErrUndelivered in its chain, so a caller may send the call
// elsewhere (package broker holds a produce through a leader's failover).
type undelivered struct{ err *apierr.Error }

func (u undelivered) Error() string   { return u.err.Error() }
func (u undelivered) Unwrap() []error { return []error{u.err, refusal.ErrUndelivered} }

// fromDetail rebuilds a handler's refusal from its detail: typed when it
// names a kind this node knows, else in the HTTP vocabulary (a node of a
// release before kinds sends none; its refusals stay untyped, which keeps
// records, never drops them: dispatch retries what it cannot classify).
func fromDetail(e *nodepb.Error) error {
	msg, retry := e.GetMessage(), fromMillis(e.GetRetryAfterMs())
	if kind, ok := refusal.ParseKind(e.GetKind()); ok {
		return &refusal.Error{Kind: kind, Message: msg, RetryAfter: retry}
	}
	return &apierr.Error{Status: int(e.GetStatus()), Message: msg, RetryAfter: retry}
}

// isClientErr reports whether err is a refusal meant for the caller (the
// HTTP vocabulary or a typed refusal), not an internal failure to log.
func isClientErr(err error) bool {
	_, ok := apierr.From(err)
	return ok
}
