package lease

import "errors"

// The errors below are sentinels: they are returned unwrapped from the hot
// path (no allocation) and callers map them with errors.Is.
var (
	// ErrGone means the handle no longer names a live lease: it expired,
	// was settled, was nacked or released, was dropped by AdvanceTo or
	// MarkSkipped, or the offset is now leased under a newer nonce.
	// Upstream maps it to HTTP 410. Retrying the same handle cannot succeed.
	ErrGone = errors.New("lease: handle is not a live lease")

	// ErrSettled is the ErrGone of a handle whose record is settled
	// already (acked — by this handle or a later lease's —, skipped, or
	// passed by the frontier): errors.Is(ErrSettled, ErrGone) holds, so
	// callers that only know ErrGone still answer 410, and those that
	// tell the two apart can say "already settled".
	ErrSettled error = settledError{}

	// ErrAckedAheadFull means the ack was above a gap in the settled prefix
	// and the acked-ahead set is at its limit. The lease stays live, so the
	// consumer may retry (or extend) later. Upstream maps it to HTTP 503.
	ErrAckedAheadFull = errors.New("lease: acked-ahead set is full")

	// ErrBadHandle is what every ParseHandle error is (errors.Is); the
	// error itself is a *HandleError with the reason.
	ErrBadHandle = errors.New("lease: malformed receipt handle")
)

type settledError struct{}

func (settledError) Error() string        { return "lease: the record is already settled" }
func (settledError) Is(target error) bool { return target == ErrGone }

// HandleError is ParseHandle's refusal. Reason says what is wrong with the
// handle in a client's words ("want 3 fields partition:offset:nonce, got
// 1"), without this package's name, for an API to quote.
type HandleError struct{ Reason string }

func (e *HandleError) Error() string        { return ErrBadHandle.Error() + ": " + e.Reason }
func (e *HandleError) Is(target error) bool { return target == ErrBadHandle }
