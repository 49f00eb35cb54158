//go:build !race

package wal

// assertInvariants is off outside race builds: production and benchmarks
// pay nothing (invariants.go).
const assertInvariants = false
