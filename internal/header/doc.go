// Package header is what a record header is: its rules (docs/concepts.md,
// "Records") and its one binary encoding, shared by the ingress WAL
// record, the partition log's record envelope and the binary batch body.
//
// Invariant: a list of headers that passed Check is sorted by name with no
// name twice, so the same headers always encode to the same bytes, and
// Decode accepts nothing Check could not have produced in size: every
// length it reads is bounded by the bytes that remain and by the stored
// caps (StoredCount, MaxName, MaxValue, StoredBytes) before anything is
// allocated for it.
//
// Names beginning "narad-" are the broker's. Check refuses them unless
// its caller says the record is the broker's own (Reserved), and gives
// such records an allowance on top of the client caps so the broker can
// add its headers to a record that already uses all of a client's.
package header
