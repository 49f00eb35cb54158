//go:build race

package lease

// assertInvariants is on in race builds: the suite runs with -race, so
// every test of the table, and of everything built on it, checks the
// invariants after every mutating operation (see unlock).
const assertInvariants = true
