// Package e2e holds black-box tests against the real narad binary: each
// test starts one or more narad processes on random loopback ports with a
// temporary data directory and speaks HTTP to them. Durability claims are
// tested by SIGKILL and restart, never by calling Close.
//
// Tests that spend most of their time waiting — for a failure detector,
// a move, a due time, a heal — call t.Parallel and run four at a time
// (TestMain's default for -parallel) once the others are done; each has
// its own processes, ports and directories. Tests that assert how
// available or how fast the cluster stays (the network-fault, chaos,
// load and browser tests) run alone, so that a neighbour's load cannot
// fail them.
package e2e
