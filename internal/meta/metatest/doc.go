// Package metatest starts a real one-node metastore for the tests of the
// packages built on it (broker, fan-out, moves), so each does not repeat
// the bootstrap.
//
// Invariant: the Store it returns is the leader of its own one-member
// cluster and is closed when the test ends.
package metatest
