package fanout

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"io/fs"
	"os"
	"strconv"
	"sync"
	"time"

	"github.com/narad-io/narad/internal/vfs"
)

// The cursor file holds one (parent partition, child) cursor:
// topics/<parent>/p<NNNNN>/fanout-<child>.offset, beside the parent log.
//
// Fixed form, exactly CursorFileSize bytes, advanced in place:
//
//	{"crc":"5e9303c4","epoch":"67953471cc57a32a","next_offset":98332}<spaces>\n
//
// crc is CRC-32C of bytes [17, 256): everything after the crc field's
// closing quote, padding and newline included, so that a torn in-place
// write, which mixes two records, fails the check wherever it tore. The
// record stays a plain JSON object with the old keys because older
// binaries read it with encoding/json and must keep doing so (they ignore
// crc and the padding whitespace).
//
// Variable-length form, written only by temp + fsync + rename + directory
// fsync: {"epoch":"…","next_offset":N}. Older binaries wrote it for every
// cursor; this one writes it only when the record does not fit in 256 bytes
// (an epoch longer than about 190 characters) and still reads it. A
// variable-length file is never overwritten in place: without a CRC a torn
// write could not be told from a good record, and a shorter record would
// leave the old tail behind.

// CursorFileSize is the size of the fixed form.
const CursorFileSize = 256

// cursorMaxEpoch is the longest epoch accepted. Real epochs are 16 hex
// characters (NewEpoch); the bound keeps files small and reads bounded.
const cursorMaxEpoch = 1024

// cursorMaxFile bounds what a reader accepts (and reads). The longest record
// this package writes is about 1.1 KiB; the margin is for whitespace an
// older writer may have added. Anything larger is not a cursor file.
const cursorMaxFile = 64 << 10

const (
	cursorPrefix = `{"crc":"` // bytes [0,8); hex at [8,16); '"' at 16
	cursorCRCAt  = 17         // the CRC covers [17, CursorFileSize)
	cursorEpochK = `","epoch":"`
	cursorNextK  = `","next_offset":`
	// Fixed bytes of the fixed form besides epoch and digits:
	// prefix, 8 hex, the two keys, '}' and the final newline.
	cursorFixedOverhead = len(cursorPrefix) + 8 + len(cursorEpochK) + len(cursorNextK) + 2
)

var cursorCRCTable = crc32.MakeTable(crc32.Castagnoli)

// Re-read policy for a record that does not decode. A reader can catch an
// in-place write half done; the writer finishes it in microseconds, so a few
// re-reads a millisecond apart tell that from real damage. Variables so
// tests can shrink them.
var (
	cursorReadRetries = 3
	cursorRetrySleep  = time.Millisecond
)

// cursorReadHook, when set (tests only), runs before every read attempt of
// a cursor file, so a test can count re-reads.
var cursorReadHook func()

var (
	// ErrCursorCorrupt: the file exists but holds no valid record, even
	// after re-reading. The caller treats it as "no file", which means the
	// next anchor needs the leader's confirmation.
	ErrCursorCorrupt = errors.New("fanout: cursor file corrupt")
	// ErrCursorEpoch: an epoch that is empty, longer than 1 KiB, or not made
	// of [0-9a-zA-Z_-]. Refused on write; a file holding one is corrupt.
	ErrCursorEpoch = errors.New("fanout: invalid cursor epoch")
	// ErrCursorTooLong: the record does not fit in the fixed form.
	ErrCursorTooLong = errors.New("fanout: cursor record does not fit in 256 bytes")
)

// CursorState is a decoded cursor file.
type CursorState struct {
	Epoch      string
	NextOffset uint64
	// Legacy: the variable-length form although the record fits in the
	// fixed one, i.e. written by an older binary. The next write replaces
	// it atomically with the fixed form.
	Legacy bool
	// Fixed: the 256-byte form, which is advanced in place.
	Fixed bool
}

// CursorFileName is the name of child's cursor file in a parent partition
// directory.
func CursorFileName(child string) string { return "fanout-" + child + ".offset" }

func checkCursorEpoch(epoch string) error {
	if len(epoch) == 0 || len(epoch) > cursorMaxEpoch {
		return fmt.Errorf("%w: length %d", ErrCursorEpoch, len(epoch))
	}
	for i := 0; i < len(epoch); i++ {
		switch c := epoch[i]; {
		case c >= '0' && c <= '9', c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c == '_', c == '-':
		default:
			return fmt.Errorf("%w: byte %q at %d", ErrCursorEpoch, c, i)
		}
	}
	return nil
}

// cursorFits reports whether the record fits in the fixed form.
func cursorFits(epoch string, next uint64) bool {
	return cursorFixedOverhead+len(epoch)+cursorDigits(next) <= CursorFileSize
}

func cursorDigits(v uint64) int {
	n := 1
	for ; v >= 10; v /= 10 {
		n++
	}
	return n
}

// encodeCursorFixed fills b with the fixed form. It writes into a caller's
// buffer so that Advance, the hot path, does not allocate.
func encodeCursorFixed(b *[CursorFileSize]byte, epoch string, next uint64) error {
	if err := checkCursorEpoch(epoch); err != nil {
		return err
	}
	if !cursorFits(epoch, next) {
		return fmt.Errorf("%w: epoch of %d bytes", ErrCursorTooLong, len(epoch))
	}
	p := copy(b[:], cursorPrefix) + 8 // the crc digits are filled in last
	p += copy(b[p:], cursorEpochK)
	p += copy(b[p:], epoch)
	p += copy(b[p:], cursorNextK)
	p = len(strconv.AppendUint(b[:p], next, 10))
	b[p] = '}'
	for p++; p < CursorFileSize-1; p++ {
		b[p] = ' '
	}
	b[CursorFileSize-1] = '\n'
	const hexdigits = "0123456789abcdef"
	crc := crc32.Checksum(b[cursorCRCAt:], cursorCRCTable)
	for i := 7; i >= 0; i-- {
		b[len(cursorPrefix)+i] = hexdigits[crc&0xf]
		crc >>= 4
	}
	return nil
}

// EncodeCursor returns the fixed form of (epoch, next): exactly 256 bytes.
// It fails with ErrCursorEpoch or ErrCursorTooLong.
func EncodeCursor(epoch string, next uint64) ([]byte, error) {
	var b [CursorFileSize]byte
	if err := encodeCursorFixed(&b, epoch, next); err != nil {
		return nil, err
	}
	return b[:], nil
}

// encodeCursorPlain returns the variable-length form, for records that do
// not fit the fixed one. It is padded to more than 256 bytes when shorter
// (epochs of roughly 190 to 230 characters): "the file is 256 bytes" then
// always means the fixed form, for anyone who tells them apart by size.
func encodeCursorPlain(epoch string, next uint64) ([]byte, error) {
	if err := checkCursorEpoch(epoch); err != nil {
		return nil, err
	}
	b := make([]byte, 0, 64+len(epoch))
	b = append(b, `{"epoch":"`...)
	b = append(b, epoch...) // the epoch alphabet needs no JSON escaping
	b = append(b, `","next_offset":`...)
	b = strconv.AppendUint(b, next, 10)
	b = append(b, '}')
	for len(b) < CursorFileSize {
		b = append(b, ' ')
	}
	return append(b, '\n'), nil
}

// DecodeCursor decodes a cursor file's content, either form. It does no
// I/O. Every failure wraps ErrCursorCorrupt.
func DecodeCursor(b []byte) (CursorState, error) {
	if len(b) > cursorMaxFile {
		return CursorState{}, fmt.Errorf("%w: %d bytes", ErrCursorCorrupt, len(b))
	}
	if bytes.HasPrefix(b, []byte(cursorPrefix)) {
		return decodeCursorFixed(b)
	}
	return decodeCursorPlain(b)
}

func decodeCursorFixed(b []byte) (CursorState, error) {
	bad := func(format string, args ...any) (CursorState, error) {
		return CursorState{}, fmt.Errorf("%w: fixed form: %s", ErrCursorCorrupt, fmt.Sprintf(format, args...))
	}
	if len(b) != CursorFileSize {
		return bad("%d bytes", len(b))
	}
	var stored uint32
	for _, c := range b[len(cursorPrefix) : len(cursorPrefix)+8] {
		var v byte
		switch {
		case c >= '0' && c <= '9':
			v = c - '0'
		case c >= 'a' && c <= 'f':
			v = c - 'a' + 10
		default:
			return bad("crc %q is not 8 lowercase hex digits", b[8:16])
		}
		stored = stored<<4 | uint32(v)
	}
	if b[cursorCRCAt-1] != '"' {
		return bad("no quote after the crc")
	}
	// The CRC first: a torn record is by far the likeliest damage, and it
	// is named as such. The layout checks below then hold a record that
	// passed the CRC to the exact form the encoder writes.
	if got := crc32.Checksum(b[cursorCRCAt:], cursorCRCTable); got != stored {
		return bad("crc mismatch: stored %08x, computed %08x", stored, got)
	}
	rest, ok := bytes.CutPrefix(b[len(cursorPrefix)+8:], []byte(cursorEpochK))
	if !ok {
		return bad("no epoch key")
	}
	i := bytes.IndexByte(rest, '"')
	if i < 0 {
		return bad("unterminated epoch")
	}
	epoch := string(rest[:i])
	if err := checkCursorEpoch(epoch); err != nil {
		return bad("%v", err)
	}
	if rest, ok = bytes.CutPrefix(rest[i:], []byte(cursorNextK)); !ok {
		return bad("no next_offset key")
	}
	n := 0
	for n < len(rest) && rest[n] >= '0' && rest[n] <= '9' {
		n++
	}
	if n == 0 || (n > 1 && rest[0] == '0') {
		return bad("next_offset is not a canonical decimal")
	}
	next, err := strconv.ParseUint(string(rest[:n]), 10, 64)
	if err != nil {
		return bad("next_offset: %v", err)
	}
	if rest, ok = bytes.CutPrefix(rest[n:], []byte("}")); !ok {
		return bad("no closing brace")
	}
	if len(rest) == 0 || rest[len(rest)-1] != '\n' || len(bytes.TrimLeft(rest[:len(rest)-1], " ")) != 0 {
		return bad("padding is not spaces and a newline")
	}
	return CursorState{Epoch: epoch, NextOffset: next, Fixed: true}, nil
}

// decodeCursorPlain reads the variable-length form with encoding/json, as
// the older binaries that wrote it did: any whitespace, either key order.
// Exactly the two keys: anything else is not a record this package or its
// predecessors wrote, and in particular a "crc" key here means a damaged
// fixed record, which must not be accepted without its check.
func decodeCursorPlain(b []byte) (CursorState, error) {
	bad := func(format string, args ...any) (CursorState, error) {
		return CursorState{}, fmt.Errorf("%w: json form: %s", ErrCursorCorrupt, fmt.Sprintf(format, args...))
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(b, &m); err != nil {
		return bad("%v", err)
	}
	rawEpoch, ok1 := m["epoch"]
	rawNext, ok2 := m["next_offset"]
	if !ok1 || !ok2 || len(m) != 2 {
		return bad("want exactly the keys epoch and next_offset")
	}
	// Pointers, because encoding/json takes a null as "leave unchanged".
	var epoch *string
	if err := json.Unmarshal(rawEpoch, &epoch); err != nil || epoch == nil {
		return bad("epoch is not a string")
	}
	if err := checkCursorEpoch(*epoch); err != nil {
		return bad("%v", err)
	}
	var next *uint64
	if err := json.Unmarshal(rawNext, &next); err != nil || next == nil {
		return bad("next_offset is not an unsigned 64-bit integer")
	}
	return CursorState{Epoch: *epoch, NextOffset: *next, Legacy: cursorFits(*epoch, *next)}, nil
}

// readCursorAll reads at most cursorMaxFile+1 bytes from offset 0; more is
// rejected by DecodeCursor without reading a huge file whole.
func readCursorAll(r io.ReaderAt) ([]byte, error) {
	return io.ReadAll(io.NewSectionReader(r, 0, cursorMaxFile+1))
}

// readCursorRetry decodes what read returns, re-reading a record that does
// not decode. Every decode failure is retried, not only a CRC mismatch: it
// costs a few milliseconds on a really damaged file, which is rare, and
// spares reasoning about which failures a half-done write can produce.
func readCursorRetry(path string, read func() ([]byte, error)) (CursorState, bool, error) {
	for try := 0; ; try++ {
		if try > 0 {
			time.Sleep(cursorRetrySleep)
		}
		if cursorReadHook != nil {
			cursorReadHook()
		}
		b, err := read()
		if errors.Is(err, fs.ErrNotExist) {
			return CursorState{}, false, nil
		}
		if err != nil {
			return CursorState{}, false, err
		}
		st, err := DecodeCursor(b)
		if err == nil {
			return st, true, nil
		}
		if try >= cursorReadRetries {
			return CursorState{}, true, fmt.Errorf("cursor file %s (read %d times): %w", path, try+1, err)
		}
	}
}

// ReadCursorFile reads the cursor file at path on the real disk, either
// form. A missing file is (zero, false, nil). A file that does not decode
// after re-reads is (zero, true, error wrapping ErrCursorCorrupt): it
// exists, and a caller that may delete unreadable files needs to know. Any
// other I/O error is (zero, false, err): nothing is known about the file,
// and in particular it must not be taken for a missing one.
func ReadCursorFile(path string) (CursorState, bool, error) {
	return readCursorFile(vfs.Default, path)
}

// readCursorFile is ReadCursorFile through fsys.
func readCursorFile(fsys vfs.FS, path string) (CursorState, bool, error) {
	return readCursorRetry(path, func() ([]byte, error) {
		// Reopened on each attempt: a rename may have replaced the file.
		f, err := vfs.Open(fsys, path)
		if err != nil {
			return nil, err
		}
		defer f.Close()
		return readCursorAll(f)
	})
}

// CursorFile is an open cursor file, advanced in place while it is in the
// fixed form. Its methods are safe for concurrent use, but the design has
// one writer per file: the cursor that owns the parent partition.
type CursorFile struct {
	mu     sync.Mutex
	fs     vfs.FS
	path   string
	f      vfs.File // open on the file at path iff that file is in the fixed form
	closed bool
	buf    [CursorFileSize]byte
}

// OpenCursorFile opens an existing cursor file for Advance. The file must
// exist (the first anchor is WriteCursorFileAtomic: a missing file is an
// error wrapping fs.ErrNotExist) and decode (else ErrCursorCorrupt, after
// re-reads, as ReadCursorFile: a corrupt file counts as no file, and only a
// leader-confirmed anchor may replace it). A nil fsys is the real disk.
//
// A fixed-form file is kept open and advanced in place. A variable-length
// file (legacy, or an epoch too long for 256 bytes) is not held open: its
// next Advance replaces it atomically, with the fixed form if the new record
// fits, and only then is the file reopened for in-place writes.
func OpenCursorFile(fsys vfs.FS, path string) (*CursorFile, error) {
	fsys = vfs.Or(fsys)
	f, err := fsys.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		return nil, err
	}
	// Decide the mode from the open descriptor, so the content checked and
	// the inode written are the same file.
	st, _, err := readCursorRetry(path, func() ([]byte, error) { return readCursorAll(f) })
	if err != nil {
		f.Close()
		return nil, err
	}
	c := &CursorFile{fs: fsys, path: path}
	if st.Fixed {
		c.f = f
	} else {
		f.Close()
	}
	return c, nil
}

// Advance durably records (epoch, next). In the fixed form that is one
// 256-byte write at offset 0 and one fdatasync: the size never changes, so
// fdatasync need not flush metadata and no rename or truncate is needed.
// A record that does not fit, or a file still in the variable-length form,
// goes through WriteCursorFileAtomic instead.
//
// An invalid epoch is refused before anything is written. After a failed
// write the file holds the old record, the new one, or a torn one that
// readers report as corrupt; Advance may simply be called again, since it
// rewrites the whole record (which also re-dirties the page, so a retried
// fdatasync really writes it).
func (c *CursorFile) Advance(epoch string, next uint64) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return fmt.Errorf("cursor file %s: %w", c.path, os.ErrClosed)
	}
	err := encodeCursorFixed(&c.buf, epoch, next)
	if errors.Is(err, ErrCursorTooLong) || (err == nil && c.f == nil) {
		return c.advanceAtomic(epoch, next)
	}
	if err != nil {
		return err
	}
	n, err := c.f.WriteAt(c.buf[:], 0)
	if err == nil && n != CursorFileSize {
		err = io.ErrShortWrite
	}
	if err == nil {
		err = c.f.Datasync()
	}
	if err != nil {
		return fmt.Errorf("advance cursor file %s: %w", c.path, err)
	}
	return nil
}

// advanceAtomic replaces the file and reopens it when the new file is in
// the fixed form. The old descriptor, if any, is closed first thing after
// the rename: it names the replaced inode, and writes through it would be
// lost.
func (c *CursorFile) advanceAtomic(epoch string, next uint64) error {
	err := WriteCursorFileAtomic(c.fs, c.path, epoch, next)
	if c.f != nil {
		// Even on failure: the rename may have happened, and the atomic
		// path is right whichever file is there now.
		c.f.Close()
		c.f = nil
	}
	if err != nil {
		return err
	}
	if !cursorFits(epoch, next) {
		return nil
	}
	f, err := c.fs.OpenFile(c.path, os.O_RDWR, 0)
	if err != nil {
		// The record is durable; only the handle is missing, and the next
		// Advance takes the atomic path and tries again.
		return fmt.Errorf("reopen cursor file %s: %w", c.path, err)
	}
	c.f = f
	return nil
}

// Close releases the file. It is idempotent.
func (c *CursorFile) Close() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return nil
	}
	c.closed = true
	if c.f == nil {
		return nil
	}
	err := c.f.Close()
	c.f = nil
	return err
}

// WriteCursorFileAtomic replaces the file at path with (epoch, next): a
// temp file in the same directory, fsync, rename over path, fsync of the
// directory. A crash leaves the old file or the new one, never a mix. It
// writes the fixed form when the record fits, else the variable-length one.
// It serves the first anchor, the migration of a legacy file, and records
// too long for the fixed form; Advance covers the rest in place. A nil
// fsys is the real disk.
//
// A crash between create and rename leaves <name>.tmp<random> behind; the
// name does not match fanout-*.offset, so no reader takes it for a cursor.
func WriteCursorFileAtomic(fsys vfs.FS, path, epoch string, next uint64) error {
	b, err := EncodeCursor(epoch, next)
	if errors.Is(err, ErrCursorTooLong) {
		b, err = encodeCursorPlain(epoch, next)
	}
	if err != nil {
		return err
	}
	if err := vfs.WriteFileAtomic(vfs.Or(fsys), path, b); err != nil {
		return fmt.Errorf("write cursor file %s: %w", path, err)
	}
	return nil
}
