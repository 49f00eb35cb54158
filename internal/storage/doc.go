// Package storage is the partition log: an append-only sequence of records
// with offsets 0, 1, 2, … kept in segment files of CRC'd frames.
//
// It knows nothing of topics, HTTP or clusters. Its one promise is the
// durability boundary of 04-storage.md:
//
//	a record is visible to readers (below the high watermark) only after the
//	frame holding it was written, fsynced, read back and CRC-verified.
//
// A commit's batch becomes visible all at once or not at all, and commit
// times never decrease along a partition — not within a process and not
// across a reopen, because Open recovers the floor from the newest record.
//
// Layout of a partition directory:
//
//	00000000000000000000.log   sealed segment, named by its first offset
//	00000000000000450832.log   active segment (the last one)
//	hwm                        durable high watermark (+ boundary on clean close)
//	consumer.offset            consumer frontier (written by the broker)
//
// Recovery truncates a torn tail of the active segment and refuses to open
// when a bad frame is followed by valid ones (acknowledged data must never be
// truncated). Readers verify every frame they decode and can skip an
// unreadable range, counting it, instead of wedging.
package storage
