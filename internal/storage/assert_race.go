//go:build race

package storage

// assertInvariants is on in race builds: the suite runs with -race, so
// every test of a log, and of everything built on one, checks the log's
// invariants at each step that moves its end, its high watermark or its
// segments (invariants.go).
const assertInvariants = true
