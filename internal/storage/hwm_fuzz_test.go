package storage

import (
	"bytes"
	"errors"
	"testing"
)

// FuzzDecodeHWM feeds arbitrary bytes to the hwm file decoder, which a
// damaged or foreign file on the data disk reaches at every Open and
// describe. Anything it accepts must be exactly a file encodeHWM writes
// (up to the bits the format leaves unused), so a torn or stray file can
// never be read as a boundary; anything it refuses wraps errBadHWM, which
// callers treat as "know nothing exact".
func FuzzDecodeHWM(f *testing.F) {
	f.Add(encodeHWM(HWMFile{HWM: 42}))
	f.Add(encodeHWM(HWMFile{HWM: 1 << 40, Boundary: true, Segment: 1 << 39, Position: 4096}))
	f.Add(encodeHWM(HWMFile{})[:35])
	f.Add(append(encodeHWM(HWMFile{HWM: 1}), 0))
	f.Add(make([]byte, hwmFileSize))
	f.Fuzz(func(t *testing.T, b []byte) {
		h, err := decodeHWM(b)
		if err != nil {
			if !errors.Is(err, errBadHWM) {
				t.Fatalf("refusal %v does not wrap errBadHWM", err)
			}
			return
		}
		// The decoder ignores flag bits other than bit 0 and the two
		// reserved bytes (no writer sets them); everything else must
		// re-encode byte for byte, CRC included.
		want := bytes.Clone(b)
		want[5] &= 1
		want[6], want[7] = 0, 0
		got := encodeHWM(h)
		if !bytes.Equal(got[:32], want[:32]) {
			t.Fatalf("accepted %x, which decodes to %+v and re-encodes as %x", b, h, got)
		}
		if !h.Boundary && (b[5]&1) != 0 {
			t.Fatalf("boundary flag set in %x but not decoded", b)
		}
	})
}
