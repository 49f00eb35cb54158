//go:build race

package replica

// assertInvariants is on in race builds: the suite runs with -race, so
// every test of a Leader, the model included, checks the leader's
// invariants after each step that moves its state (invariants.go).
const assertInvariants = true
