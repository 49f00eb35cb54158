package storage

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io/fs"
	"path/filepath"

	"github.com/narad-io/narad/internal/vfs"
)

// ReplicaState is a replicated partition's own small file (replica.state,
// beside the segments): the last leader epoch this replica wrote records
// in — a follower records it before appending the first record fetched in
// a new epoch, a leader before writing its first — and a checkpoint of the
// committed point it last learned (never above what was committed, so it
// is a safe visible high watermark to reopen with).
type ReplicaState struct {
	LastEpoch uint64
	Committed uint64
}

// The replica.state file, replaced whole by vfs.WriteFileAtomic (temp
// file, fsync, rename, directory fsync), so a crash leaves the old state
// or the new one:
//
//	0  4  magic "NRST"
//	4  1  version 1
//	5  3  reserved, zero
//	8  8  last epoch
//	16 8  committed
//	24 4  CRC-32C over bytes 0..23
//
// The encoding is canonical: one state has exactly one encoding, and the
// decoder refuses every other byte string (length, magic, version,
// reserved bytes, CRC).
const (
	// ReplicaStateFile is the file's name in a partition directory.
	ReplicaStateFile    = "replica.state"
	replicaStateSize    = 28
	replicaStateVersion = 1
)

var errBadReplicaState = errors.New("bad replica.state file")

func encodeReplicaState(st ReplicaState) []byte {
	b := make([]byte, replicaStateSize)
	copy(b, "NRST")
	b[4] = replicaStateVersion
	binary.BigEndian.PutUint64(b[8:], st.LastEpoch)
	binary.BigEndian.PutUint64(b[16:], st.Committed)
	binary.BigEndian.PutUint32(b[24:], crc32.Checksum(b[:24], castagnoli))
	return b
}

func decodeReplicaState(b []byte) (ReplicaState, error) {
	if len(b) != replicaStateSize {
		return ReplicaState{}, fmt.Errorf("%w: %d bytes, want %d", errBadReplicaState, len(b), replicaStateSize)
	}
	if string(b[:4]) != "NRST" || b[4] != replicaStateVersion || b[5]|b[6]|b[7] != 0 {
		return ReplicaState{}, fmt.Errorf("%w: unknown format", errBadReplicaState)
	}
	if crc32.Checksum(b[:24], castagnoli) != binary.BigEndian.Uint32(b[24:]) {
		return ReplicaState{}, fmt.Errorf("%w: crc mismatch", errBadReplicaState)
	}
	return ReplicaState{LastEpoch: binary.BigEndian.Uint64(b[8:]), Committed: binary.BigEndian.Uint64(b[16:])}, nil
}

// ReadReplicaStateFS reads dir's replica.state. A missing file is the zero
// state (a replica that never wrote one: nothing fetched, nothing
// committed known). A damaged file — torn, foreign or failing its CRC — is
// an error wrapping errBadReplicaState, and an unreadable one the read's
// error: the caller sees it (Open of a held log fails) rather than
// guessing a state, since a zero LastEpoch would make the replica cut
// its log back to its checkpoint and a zero Committed hide every record.
func ReadReplicaStateFS(fsys vfs.FS, dir string) (ReplicaState, error) {
	path := filepath.Join(dir, ReplicaStateFile)
	b, err := vfs.ReadFile(vfs.Or(fsys), path)
	if errors.Is(err, fs.ErrNotExist) {
		return ReplicaState{}, nil
	}
	if err != nil {
		return ReplicaState{}, fmt.Errorf("read %s: %w", path, err)
	}
	st, err := decodeReplicaState(b)
	if err != nil {
		return ReplicaState{}, fmt.Errorf("%s: %w", path, err)
	}
	return st, nil
}

// ReplicaState is the state last saved (SaveReplicaState) or loaded when
// the log was opened; the zero state on a log that is not held.
func (l *Log) ReplicaState() ReplicaState {
	l.stateMu.Lock()
	defer l.stateMu.Unlock()
	return l.state
}

// SaveReplicaState replaces replica.state durably (atomic write through
// Options.FS) and, once that succeeded, what ReplicaState returns. On
// error the file holds the old state or the new one and ReplicaState
// still says the old: the caller may simply save again. It refuses on a
// log that is not held (nothing would read the file).
func (l *Log) SaveReplicaState(st ReplicaState) error {
	if !l.opts.Held {
		return ErrNotHeld
	}
	l.stateMu.Lock()
	defer l.stateMu.Unlock()
	l.mu.RLock()
	closed := l.closed
	l.mu.RUnlock()
	if closed {
		return ErrClosed
	}
	if err := vfs.WriteFileAtomic(l.fs, filepath.Join(l.dir, ReplicaStateFile), encodeReplicaState(st)); err != nil {
		return fmt.Errorf("partition log %s: save replica state: %w", l.dir, err)
	}
	l.state = st
	return nil
}
