// Package datadir guards what a data directory is before a node uses it.
//
// # The invariants
//
//   - A data directory serves one process at a time. The first thing a
//     start does is take an flock on its LOCK file and write its pid there
//     (Lock); a second node started on the same directory is refused at
//     once, by the holder's pid, before it reads anything. The kernel drops
//     the lock with its holder, so a killed node leaves none behind.
//   - A data directory belongs to one node id, forever. The first start
//     writes the id to the file node-id (write-temp, fsync, rename, fsync
//     of the directory); every later start reads it back. A node started
//     with a different configured id refuses with an error naming both ids
//     and the file, instead of joining Raft under a name the cluster does
//     not know and waiting forever for a leader. A node whose id was not
//     configured (it defaults to the host name, which changes when a
//     container is recreated) takes the stored one.
//   - A data directory is one disk, named by a random id (the file
//     disk-id, written with node-id when the directory is created, and
//     never changed after). A wiped or replaced directory keeps its node id
//     (configured) but gets a new disk id; the node announces it in its
//     join and heartbeats, and the metastore, seeing it differ from the one
//     it recorded, counts none of the node's old copies of replicated
//     partitions (meta.ReplaceDisk). A directory from before disk ids gets
//     one on its next start (ClaimDisk, Upgraded). A disk-id file that does
//     not hold an id is an error, never replaced silently.
//   - Topic data is never deleted because its metadata is missing. A data
//     directory that holds topic data but no metastore state lost its
//     metastore (a deleted or unmounted directory, a bad restore): starting
//     there would bootstrap an empty cluster whose startup reconcile then
//     deletes every topic's data as an orphan. Such a start is refused
//     unless the operator chose, with recovery.orphan_data, to adopt the
//     data (re-register the topics found on disk) or to discard it.
package datadir
