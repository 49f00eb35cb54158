//go:build !race

package fanout

// assertInvariants is off outside race builds: production and benchmarks
// pay nothing (invariants.go).
const assertInvariants = false
