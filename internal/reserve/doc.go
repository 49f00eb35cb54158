// Package reserve keeps room on the data disk for the writes that free
// space.
//
// Every metastore change is a Raft log write, so on a full disk the topic
// delete that would free space cannot run, and neither can anything else
// that needs the metastore. A Reserve holds a file of Size bytes in the
// data directory. When free space falls below Size/2 (polled, or checked at
// once after a write reported ENOSPC) it deletes that file, so the
// metastore has room for deletes, and reports Full; while Full, produce and
// topic create are refused (503) so the released room stays for deletes.
// Once free space is back above 2×Size it re-creates the file and Full
// clears.
//
// # The invariant
//
// Full is true from the moment the reserve is released (or could never be
// created) until it is held again at its whole size: a node never accepts
// new data into the room kept for freeing space. The reserve file holds no
// data; deleting it by hand is always safe.
package reserve
