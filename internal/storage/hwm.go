package storage

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"os"
	"path/filepath"

	"github.com/narad-io/narad/internal/vfs"
)

// The hwm file, rewritten in place with one small write and an fdatasync:
//
//	0  4  magic "NHWM"
//	4  1  version 1
//	5  1  flags: bit 0 = boundary present (written by a clean close)
//	6  2  reserved, zero
//	8  8  high watermark
//	16 8  boundary: base offset of the segment holding the end of the records
//	24 8  boundary: byte position in that segment where the records end
//	32 4  CRC-32C over bytes 0..31
//
// A log that is open (or crashed) has no boundary: Open clears it before the
// first commit, so a boundary on disk always describes the files exactly.
const (
	hwmFileName = "hwm"
	hwmFileSize = 36
	hwmVersion  = 1
)

// HWMFile is the decoded hwm file.
type HWMFile struct {
	HWM      uint64
	Boundary bool   // true only when written by a clean close
	Segment  uint64 // with Boundary: base of the last segment
	Position int64  // with Boundary: end of the records in it
}

func encodeHWM(h HWMFile) []byte {
	b := make([]byte, hwmFileSize)
	copy(b, "NHWM")
	b[4] = hwmVersion
	if h.Boundary {
		b[5] = 1
	}
	binary.BigEndian.PutUint64(b[8:], h.HWM)
	binary.BigEndian.PutUint64(b[16:], h.Segment)
	binary.BigEndian.PutUint64(b[24:], uint64(h.Position))
	binary.BigEndian.PutUint32(b[32:], crc32.Checksum(b[:32], castagnoli))
	return b
}

var errBadHWM = errors.New("bad hwm file")

func decodeHWM(b []byte) (HWMFile, error) {
	if len(b) != hwmFileSize || string(b[:4]) != "NHWM" || b[4] != hwmVersion {
		return HWMFile{}, fmt.Errorf("%w: unknown format", errBadHWM)
	}
	if crc32.Checksum(b[:32], castagnoli) != binary.BigEndian.Uint32(b[32:]) {
		return HWMFile{}, fmt.Errorf("%w: crc mismatch", errBadHWM)
	}
	return HWMFile{
		HWM:      binary.BigEndian.Uint64(b[8:]),
		Boundary: b[5]&1 != 0,
		Segment:  binary.BigEndian.Uint64(b[16:]),
		Position: int64(binary.BigEndian.Uint64(b[24:])),
	}, nil
}

// ReadHWMFile reads dir's hwm file. A missing file reports os.ErrNotExist;
// a torn or foreign one reports an error wrapping errBadHWM — either way the
// caller knows nothing exact about the directory.
func ReadHWMFile(dir string) (HWMFile, error) { return ReadHWMFileFS(vfs.Default, dir) }

// ReadHWMFileFS is ReadHWMFile through fsys.
func ReadHWMFileFS(fsys vfs.FS, dir string) (HWMFile, error) {
	b, err := vfs.ReadFile(fsys, filepath.Join(dir, hwmFileName))
	if err != nil {
		return HWMFile{}, err
	}
	return decodeHWM(b)
}

// hwmWriter owns the open hwm file of a log.
type hwmWriter struct {
	f vfs.File
}

func openHWMWriter(fsys vfs.FS, dir string) (*hwmWriter, error) {
	f, err := fsys.OpenFile(filepath.Join(dir, hwmFileName), os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return nil, err
	}
	return &hwmWriter{f: f}, nil
}

// write replaces the file's content in place. 36 bytes at offset 0 sit in
// one sector, and the CRC catches the rare torn write anyway.
func (w *hwmWriter) write(h HWMFile) error {
	if _, err := w.f.WriteAt(encodeHWM(h), 0); err != nil {
		return err
	}
	return w.f.Datasync()
}

func (w *hwmWriter) close() error { return w.f.Close() }
