// Package ratelimit is the per-user request limiter (docs/http-api.md,
// docs/configuration.md): on each node, a token bucket per user and limit
// (produce records, produce bytes, consume requests), its burst one
// second's worth of the rate, refilled from an injected clock.
//
// A bucket is kept as the time at which it is full again (the generic
// cell rate algorithm's "theoretical arrival time"): taking n tokens at
// rate r moves that time n/r later, and a bucket whose time is at most
// one second (the burst) past now after the take admits it. The state is
// one integer, so a rate change applies at once and keeps the share of
// the burst already used.
//
// Invariants: a request is admitted or refused whole — every bucket it
// costs takes its tokens, or none does (Take); a refusal says when the
// same request would pass, from the bucket's deficit (Decision.RetryAfter,
// a whole number of seconds rounded up, at least one); a request costing
// more than the burst (a batch larger than one second's worth) is
// admitted only into a full bucket and leaves it in debt, so it always
// passes eventually and the rate holds on average; a rate of 0 costs
// nothing and keeps nothing; the table of buckets is bounded (MaxUsers):
// a bucket that is full again is forgotten, which loses nothing, since a
// new bucket starts full.
package ratelimit
