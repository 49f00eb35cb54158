package client

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net"
	"net/http"
	"strings"
	"time"
)

// RetryPolicy says which failed calls a Client tries again, and for how
// long. The zero policy retries nothing, which is what New gives.
//
// A call is tried again when
//
//   - the connection could not be made (connection refused, no route):
//     nothing was sent, so any call may be repeated;
//   - the server answered 503 or 429: it refused without acting, and its
//     Retry-After is honoured;
//   - the answer was lost in transit (a reset, an EOF, a 502 or 504 from a
//     proxy) and the call is safe to repeat: reads, PUT and DELETE (which
//     set a state), acks (settling twice changes nothing; the second
//     answer may be 410), and produce.
//
// Produce is retried by design: Narad delivers at least once, and a
// produce whose answer was lost may have been stored, so a retry can store
// the record twice. Consumers already handle redeliveries; a producer that
// cannot accept duplicates should not set a policy. Other creating calls
// (POST of a topic, a user, an attach, a decommission) are not repeated
// after a lost answer: a second try would only be refused as "already
// exists", hiding whether the first one worked.
//
// A cancelled or expired ctx is never retried, and no pause outlasts it.
type RetryPolicy struct {
	// MaxElapsed bounds how long one call keeps retrying, counted from its
	// first failure; 0 disables retries. A pause that would end past it
	// (a long Retry-After) is not taken: the call fails at once.
	MaxElapsed time.Duration
	// Backoff paces the tries when the server gives no Retry-After.
	Backoff Backoff
	// OnRetry, when set, is called before each pause, from the goroutine
	// of the call. A CLI uses it to say what it is waiting for.
	OnRetry func(RetryEvent)
}

// RetryEvent describes a failed try that is about to be repeated.
type RetryEvent struct {
	Method, Path string
	// Attempt is 1 before the first retry of the call, 2 before the
	// second, and so on.
	Attempt int
	// Err is why the try failed: an *APIError for a 503 or 429, else the
	// transport's error.
	Err error
	// Wait is the pause before the next try; Elapsed the time since the
	// call first failed.
	Wait, Elapsed time.Duration
}

// Refused reports whether the try failed because nothing accepted the
// connection: no process listens there yet, or it is restarting.
func (e RetryEvent) Refused() bool { return dialFailed(e.Err) }

// RetryError is the last failure of a call that was retried until its
// policy's MaxElapsed ran out. errors.As still finds the *APIError or the
// transport error inside.
type RetryError struct {
	Err      error
	Attempts int           // tries made, the first included
	Elapsed  time.Duration // since the first failure
}

// Error is the last failure and how long the call kept trying.
func (e *RetryError) Error() string {
	return fmt.Sprintf("%v (gave up after %d tries in %s)", e.Err, e.Attempts, e.Elapsed.Round(100*time.Millisecond))
}

// Unwrap is the last failure, for errors.As and errors.Is.
func (e *RetryError) Unwrap() error { return e.Err }

// Option configures a Client built by New.
type Option func(*Client)

// WithRetry sets the client's RetryPolicy.
func WithRetry(p RetryPolicy) Option {
	return func(c *Client) { c.retry = p }
}

// doRetrying is do under the client's policy.
func (c *Client) doRetrying(ctx context.Context, req request) (response, error) {
	p := c.retry
	var firstFailure time.Time
	for attempt := 1; ; attempt++ {
		resp, err := c.once(ctx, req)
		if err == nil || p.MaxElapsed <= 0 || !retryable(req, err) || ctx.Err() != nil {
			return resp, err
		}
		now := time.Now()
		if firstFailure.IsZero() {
			firstFailure = now
		}
		var retryAfter time.Duration
		var apiErr *APIError
		if errors.As(err, &apiErr) {
			retryAfter = apiErr.RetryAfter
		}
		wait := p.Backoff.Pause(attempt-1, retryAfter)
		elapsed := now.Sub(firstFailure)
		if elapsed+wait > p.MaxElapsed {
			if attempt == 1 {
				return resp, err // never retried: the plain error
			}
			return resp, &RetryError{Err: err, Attempts: attempt, Elapsed: elapsed}
		}
		if p.OnRetry != nil {
			p.OnRetry(RetryEvent{Method: req.method, Path: req.path, Attempt: attempt, Err: err, Wait: wait, Elapsed: elapsed})
		}
		if serr := Sleep(ctx, wait); serr != nil {
			return resp, err // the caller gave up: report what failed
		}
	}
}

// retryable reports whether a failed try of req may be made again (see
// RetryPolicy for the rules).
func retryable(req request, err error) bool {
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return false
	}
	var apiErr *APIError
	if errors.As(err, &apiErr) {
		switch apiErr.Status {
		case http.StatusServiceUnavailable, http.StatusTooManyRequests:
			return true
		case http.StatusBadGateway, http.StatusGatewayTimeout:
			return safeToRepeat(req)
		}
		return false
	}
	if dialFailed(err) {
		return true
	}
	if permanent(err) {
		return false
	}
	return safeToRepeat(req)
}

// dialFailed reports whether err is a connection that was never made, so
// no byte of the request left. A name that does not resolve is left out:
// that is a typo far more often than a node starting.
func dialFailed(err error) bool {
	var op *net.OpError
	if !errors.As(err, &op) || op.Op != "dial" {
		return false
	}
	var dns *net.DNSError
	return !errors.As(err, &dns) || !dns.IsNotFound
}

// permanent reports transport failures no retry can fix: the server's
// certificate, or a plain-HTTP server behind an https:// URL.
func permanent(err error) bool {
	var (
		unknownCA *x509.UnknownAuthorityError
		hostname  x509.HostnameError
		invalid   x509.CertificateInvalidError
		verify    *tls.CertificateVerificationError
		header    tls.RecordHeaderError
		dns       *net.DNSError
	)
	return errors.As(err, &unknownCA) || errors.As(err, &hostname) || errors.As(err, &invalid) ||
		errors.As(err, &verify) || errors.As(err, &header) || (errors.As(err, &dns) && dns.IsNotFound)
}

// safeToRepeat reports whether req may run twice without a silent
// duplicate: see RetryPolicy.
func safeToRepeat(req request) bool {
	switch req.method {
	case http.MethodGet, http.MethodHead, http.MethodPut, http.MethodDelete, http.MethodOptions:
		return true
	case http.MethodPost:
		// A purge is idempotent: a repeat settles nothing the first did
		// not (its count then says only what the repeat settled).
		return strings.HasSuffix(req.path, "/produce") || strings.HasSuffix(req.path, "/produce/batch") ||
			strings.HasSuffix(req.path, "/ack") || strings.HasSuffix(req.path, "/purge")
	}
	return false
}
