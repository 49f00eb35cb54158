//go:build !race

package replica

// assertInvariants is off outside race builds: production and benchmarks
// pay nothing (invariants.go).
const assertInvariants = false
