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

	// ErrAckedAheadFull means the ack was above a gap in the settled prefix
	// and the acked-ahead set is at its limit. The lease stays live, so the
	// consumer may retry (or extend) later. Upstream maps it to HTTP 503.
	ErrAckedAheadFull = errors.New("lease: acked-ahead set is full")

	// ErrBadHandle is returned (wrapped, with detail) by ParseHandle.
	ErrBadHandle = errors.New("lease: malformed receipt handle")
)
