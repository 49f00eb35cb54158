//go:build race

package fanout

// assertInvariants is on in race builds: the suite runs with -race, so
// every cursor of every test checks the engine's invariants at each
// advance, and every slab's buckets their order (invariants.go).
const assertInvariants = true
