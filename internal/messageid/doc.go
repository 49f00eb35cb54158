// Package messageid is the one place a record's message id is made
// (docs/concepts.md, "Message ids"): a string of at most 40 characters the
// broker gives every record when it accepts it, unique within the cluster
// for the life of the data and the same wherever and whenever the record
// is read. It stores nothing: an id is derived from what the partition
// log already holds, so it costs no bytes of its own per record.
//
// Two kinds, told apart by their first character:
//
//	w + base32(origin, 8 bytes | seq, 8 bytes)                      27 chars
//	p + base32(incarnation, 8 bytes | partition, 4 bytes | offset, 8 bytes)  33 chars
//
// (big-endian, then RFC 4648's "base32hex" alphabet in lower case,
// 0-9a-v, without padding: ids of one kind sort like their numbers.)
//
// A "w" id names an ingress WAL record: origin is the WAL's identity
// (wal.WAL.Identity, 64 random bits drawn when the WAL was made, never
// reused) and seq its record's seq there (unique within that WAL). The
// produce that appended the record knows both when the WAL answers, before
// any partition holds it, and the partition log keeps both in the frame
// (package storage, frame.go's ids flag), so the id reads back the same
// after restarts and moves.
//
// A "p" id names a position: the topic's incarnation (the Raft index of
// its create, unique in the cluster: package meta), the partition and the
// offset — offsets are never reused in a partition. It is the id of every
// record that came from no WAL (replicated produce, fan-out copies, dead
// letters) or whose frame predates the ids flag; a replicated partition's
// copies agree on offsets, and replication carries a record's WAL source
// with it (node RPC's StoredRecord), so every copy names a record alike.
// A topic created
// before incarnations existed (incarnation 0) stands in with a 63-bit
// hash of its name with the top bit set, which no Raft index reaches.
//
// The invariant: Of gives a record the id it was answered with at produce,
// on every node and after every restart or move. The kinds cannot collide
// (different first characters), and within a kind the fields are fixed
// width, so two different (origin, seq) or (incarnation, partition,
// offset) never give the same string.
package messageid
