// Package clock is the one source of time for every rule that depends on
// it: lease expiry, freeze TTLs, fan-out linger, polls and the delay gate,
// the reconciler, heartbeats and dead marking, dispatch pacing and the move
// worker. Production code takes a Clock and uses Real; tests use a Fake and
// step it, so "nothing happens for 30 s" is a step, not a sleep.
//
// # The invariant
//
// A Fake's time moves only when the test moves it (Advance, Set), and every
// timer, ticker and After channel whose deadline the new time reaches fires
// before Advance returns, in deadline order. Nothing a Fake hands out fires
// on its own, so a test that does not step the clock sees no timeout, ever.
// Real is the time package unchanged (time.Now carries the monotonic
// reading, so comparisons are immune to wall-clock steps).
//
// Waiters reports how many timers, tickers and After channels are pending,
// so a test can wait until the code under test is parked on the clock
// before it steps it (BlockUntil), instead of sleeping and hoping.
package clock
