//go:build !race

package lease

// assertInvariants is off outside race builds: production and benchmarks
// pay nothing (see unlock).
const assertInvariants = false
