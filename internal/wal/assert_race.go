//go:build race

package wal

// assertInvariants is on in race builds: the suite runs with -race, so
// every test of the WAL, and of everything built on it, checks its
// invariants at each step that publishes records, adds or deletes a
// segment, or moves the checkpoint (invariants.go).
const assertInvariants = true
