package storage

import (
	"encoding/binary"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// FuzzReadOffsetFile: the consumer frontier file as any bytes on the disk
// can leave it. Exactly 8 bytes read as their big-endian value (what
// WriteOffsetFile writes, which must read back unchanged); any other size
// is refused with an error naming the file, so the operator knows which
// file to look at, and never read as a frontier.
func FuzzReadOffsetFile(f *testing.F) {
	f.Add([]byte{0, 0, 0, 0, 0, 0, 0, 7})
	f.Add([]byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff})
	f.Add([]byte{})
	f.Add([]byte{1, 2, 3})
	f.Add(make([]byte, 9))
	dir := f.TempDir()
	path := filepath.Join(dir, ConsumerOffsetFile)
	f.Fuzz(func(t *testing.T, b []byte) {
		if err := os.WriteFile(path, b, 0o644); err != nil {
			t.Fatal(err)
		}
		v, ok, err := ReadOffsetFile(path)
		if len(b) != 8 {
			if err == nil || ok || !strings.Contains(err.Error(), path) {
				t.Fatalf("%d-byte file read as (%d, %v, %v), want an error naming the file", len(b), v, ok, err)
			}
			return
		}
		if err != nil || !ok || v != binary.BigEndian.Uint64(b) {
			t.Fatalf("8-byte file %x read as (%d, %v, %v)", b, v, ok, err)
		}
		if err := WriteOffsetFile(path, v); err != nil {
			t.Fatal(err)
		}
		if back, ok, err := ReadOffsetFile(path); err != nil || !ok || back != v {
			t.Fatalf("WriteOffsetFile(%d) reads back as (%d, %v, %v)", v, back, ok, err)
		}
	})
}
