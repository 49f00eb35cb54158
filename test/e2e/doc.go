// Package e2e holds black-box tests against the real narad binary: each
// test starts one or more narad processes on random loopback ports with a
// temporary data directory and speaks HTTP to them. Durability claims are
// tested by SIGKILL and restart, never by calling Close.
package e2e
