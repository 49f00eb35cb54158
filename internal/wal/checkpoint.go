package wal

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io/fs"
	"os"
	"path/filepath"
	"slices"

	"github.com/narad-io/narad/internal/vfs"
)

// The checkpoint is a 20-byte file replaced atomically: it is written to
// checkpoint.tmp, fsynced, renamed over checkpoint, and the directory is
// fsynced. A reader therefore sees either the old or the new value, never a
// mix; the CRC is a second line of defence against a medium that lies.
//
//	offset  size  field
//	0       8     magic "NRDWALCK"
//	8       8     seq   uint64 big-endian: first seq not known committed
//	16      4     CRC-32C (Castagnoli) over bytes [0,16)
const (
	checkpointName    = "checkpoint"
	checkpointTmpName = "checkpoint.tmp"
	checkpointMagic   = "NRDWALCK"
	checkpointSize    = 20
)

func encodeCheckpoint(seq uint64) []byte {
	b := make([]byte, checkpointSize)
	copy(b, checkpointMagic)
	binary.BigEndian.PutUint64(b[8:16], seq)
	binary.BigEndian.PutUint32(b[16:20], crc32.Checksum(b[:16], castagnoli))
	return b
}

// readCheckpoint returns the stored checkpoint, or 1 (nothing committed) if
// the file does not exist yet.
func readCheckpoint(fsys vfs.FS, dir string) (uint64, error) {
	path := filepath.Join(dir, checkpointName)
	b, err := vfs.ReadFile(fsys, path)
	if errors.Is(err, fs.ErrNotExist) {
		return 1, nil
	}
	if err != nil {
		return 0, fmt.Errorf("wal: read checkpoint %s: %w", path, err)
	}
	if len(b) != checkpointSize || string(b[:8]) != checkpointMagic {
		return 0, fmt.Errorf("wal: checkpoint %s: %w: bad size %d or magic", path, ErrCorrupt, len(b))
	}
	if got, want := binary.BigEndian.Uint32(b[16:20]), crc32.Checksum(b[:16], castagnoli); got != want {
		return 0, fmt.Errorf("wal: checkpoint %s: %w: checksum %08x, want %08x", path, ErrCorrupt, got, want)
	}
	seq := binary.BigEndian.Uint64(b[8:16])
	if seq == 0 {
		return 0, fmt.Errorf("wal: checkpoint %s: %w: seq 0", path, ErrCorrupt)
	}
	return seq, nil
}

// writeCheckpoint durably replaces the checkpoint with seq.
func writeCheckpoint(fsys vfs.FS, dir string, seq uint64) error {
	tmp := filepath.Join(dir, checkpointTmpName)
	path := filepath.Join(dir, checkpointName)
	f, err := fsys.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o644)
	if err != nil {
		return fmt.Errorf("wal: create %s: %w", tmp, err)
	}
	_, err = f.Write(encodeCheckpoint(seq))
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("wal: write checkpoint %d to %s: %w", seq, tmp, err)
	}
	if err := fsys.Rename(tmp, path); err != nil {
		return fmt.Errorf("wal: rename %s to %s: %w", tmp, path, err)
	}
	return syncDir(fsys, dir)
}

// SetCheckpoint records durably that every record with Seq < seq is committed
// to its partition. It never moves the checkpoint backwards: a seq at or
// below the current one is a no-op. A seq beyond LastSeq()+1 is refused, as
// it would claim records that do not exist yet.
//
// Afterwards, segments whose records are all below seq are deleted, and if
// everything written so far is dispatched and the active segment is past
// Options.RotateDispatchedBytes, the active segment is rotated so that it can
// be deleted too; otherwise a quiet node would keep up to SegmentBytes of
// dispatched records forever.
func (w *WAL) SetCheckpoint(seq uint64) error {
	w.ckMu.Lock()
	defer w.ckMu.Unlock()
	if w.isClosed() {
		return ErrClosed
	}
	if seq <= w.checkpoint.Load() {
		return nil
	}
	if last := w.lastSeq.Load(); seq > last+1 {
		return fmt.Errorf("wal: checkpoint %d is beyond last durable seq %d", seq, last)
	}
	if err := checkpointChecks(w.checkpoint.Load(), seq, w.lastSeq.Load()); err != nil {
		panic(fmt.Sprintf("wal %s: set checkpoint: invariant broken: %v", w.dir, err))
	}
	if err := writeCheckpoint(w.fs, w.dir, seq); err != nil {
		return err
	}
	w.checkpoint.Store(seq)

	if w.rotationWanted() {
		req := make(chan error, 1)
		select {
		case w.rotateReq <- req:
			if err := <-req; err != nil {
				return err
			}
		case <-w.syncerDone:
			return ErrClosed
		}
	}
	return w.deleteBelow(seq)
}

// rotationWanted is SetCheckpoint's cheap pre-check; the syncer repeats it
// authoritatively because only it knows nothing is mid-write.
func (w *WAL) rotationWanted() bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	active := w.segs[len(w.segs)-1]
	return w.checkpoint.Load() > active.last && active.durable > w.opts.RotateDispatchedBytes
}

// deleteBelow removes sealed segments whose records are all below seq.
// Holding readMu keeps the reader from using a file being deleted.
func (w *WAL) deleteBelow(seq uint64) error {
	w.readMu.Lock()
	defer w.readMu.Unlock()

	w.mu.Lock()
	n := 0
	// Segment i is wholly below seq when its successor starts at or below
	// seq; the active (last) segment is never deleted here.
	for n+1 < len(w.segs) && w.segs[n+1].first <= seq {
		n++
	}
	doomed := slices.Clone(w.segs[:n])
	w.segs = append(w.segs[:0], w.segs[n:]...)
	w.unlockChecked("delete segments", deleteChecks(doomed, w.segs, seq, w.checkpoint.Load()))

	var errs []error
	for _, s := range doomed {
		if w.rd.seg == s {
			w.rd.drop()
		}
		if err := w.fs.Remove(s.path); err != nil && !errors.Is(err, fs.ErrNotExist) {
			// The segment is already out of the retained set; Open deletes
			// any leftover below the checkpoint, so this is not fatal.
			errs = append(errs, fmt.Errorf("wal: delete segment %s: %w", s.path, err))
		}
		w.size.Add(-s.durable)
	}
	return errors.Join(errs...)
}
