package ratelimit

import "time"

// burst is how much of a rate a bucket holds: one second's worth.
const burst = int64(time.Second)

// bucket is one token bucket as the time, in clock nanoseconds, at which
// it is full again; at or before now it is full. The zero value is full.
type bucket struct{ full int64 }

// costNanos is n tokens at rate per second as bucket time: n/rate
// seconds, rounded down to the nanosecond so that a burst of the whole
// rate always fits (rounded up, three of 1/3 s overflow the second), and
// at least one: nothing is free. Rounding lets through at most one
// nanosecond's worth more per request: nothing at rates whose token is
// whole nanoseconds, 0.1% at a million one-token requests a second.
func costNanos(n, rate int64) int64 {
	if n <= 0 {
		return 0
	}
	// n is at most a request's bytes (well under 2^34) and a second is
	// under 2^30: the product fits an int64. Past that, clamp: such a
	// request waits for a full bucket like any larger than the burst.
	if n > 1<<32 {
		n = 1 << 32
	}
	return max(n*int64(time.Second)/rate, 1)
}

// check says whether c of bucket time fits at now, and if not how long
// until it would. A cost larger than the burst needs a full bucket
// (debt): it could never fit otherwise.
func (b bucket) check(now, c int64) (ok bool, wait int64) {
	used := max(b.full-now, 0)
	need := min(c, burst)
	if over := used + need - burst; over > 0 {
		return false, over
	}
	return true, 0
}

// take spends c of bucket time at now (after check said it fits).
func (b *bucket) take(now, c int64) { b.full = max(b.full, now) + c }

// fullAt reports whether the bucket is full again at now.
func (b bucket) fullAt(now int64) bool { return b.full <= now }

// retrySeconds is a wait as Retry-After says it: whole seconds, rounded
// up, at least one.
func retrySeconds(wait int64) time.Duration {
	secs := (wait + int64(time.Second) - 1) / int64(time.Second)
	return time.Duration(max(secs, 1)) * time.Second
}
