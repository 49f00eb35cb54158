package wal

import (
	"crypto/rand"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io/fs"
	"path/filepath"

	"github.com/narad-io/narad/internal/vfs"
)

// identityName holds the WAL's identity: 8 random bytes (never zero) and a
// CRC-32C of them, written once, atomically, when the directory is first
// opened by a binary that knows it. Seqs are unique only within one WAL;
// the identity names which WAL a seq belongs to, so a partition log can
// tell records it holds from this WAL (their highest seq) from those of
// another node's, or of a WAL that was wiped and started again at seq 1
// (a new identity: nothing of it is held yet).
const identityName = "identity"

// Identity is the WAL's random, non-zero identity (identityName).
func (w *WAL) Identity() uint64 { return w.identity }

func loadIdentity(fsys vfs.FS, dir string) (uint64, error) {
	path := filepath.Join(dir, identityName)
	b, err := vfs.ReadFile(fsys, path)
	if err == nil {
		if len(b) != 12 || crc32.Checksum(b[:8], castagnoli) != binary.BigEndian.Uint32(b[8:]) {
			return 0, fmt.Errorf("wal: %s is damaged (%d bytes); remove it only together with the partition logs' claim on this WAL", path, len(b))
		}
		return binary.BigEndian.Uint64(b), nil
	}
	if !errors.Is(err, fs.ErrNotExist) {
		return 0, err
	}
	var id uint64
	for id == 0 {
		var r [8]byte
		if _, err := rand.Read(r[:]); err != nil {
			return 0, err
		}
		id = binary.BigEndian.Uint64(r[:])
	}
	b = binary.BigEndian.AppendUint64(nil, id)
	b = binary.BigEndian.AppendUint32(b, crc32.Checksum(b, castagnoli))
	if err := vfs.WriteFileAtomic(fsys, path, b); err != nil {
		return 0, fmt.Errorf("wal: write %s: %w", path, err)
	}
	return id, nil
}
