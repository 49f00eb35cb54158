// The variable-length form on disk: a legacy file migrates to the fixed
// form, and an epoch too long for 256 bytes keeps the atomic path.

package fanout

import (
	"encoding/json"
	"math"
	"os"
	"strconv"
	"strings"
	"testing"
)

func TestCursorLegacy(t *testing.T) {
	tests := []struct {
		name, content string
		epoch         string
		next          uint64
	}{
		{"as older binaries wrote it", `{"epoch":"abc","next_offset":7}` + "\n", "abc", 7},
		{"no newline", `{"epoch":"abc","next_offset":7}`, "abc", 7},
		{"whitespace and key order", "\n\t{ \"next_offset\" : 18446744073709551615 ,\r\n \"epoch\" : \"" + testEpoch + "\" }  \n\n", testEpoch, math.MaxUint64},
		{"escaped epoch", `{"epoch":"\u0061bc","next_offset":0}`, "abc", 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := cursorPath(t)
			writeRaw(t, path, []byte(tt.content))
			st, exists, err := ReadCursorFile(path)
			want := CursorState{Epoch: tt.epoch, NextOffset: tt.next, Legacy: true}
			if err != nil || !exists || st != want {
				t.Fatalf("ReadCursorFile = %+v, %v, %v; want %+v", st, exists, err, want)
			}

			// Advance on a legacy file goes atomic (a new inode), the
			// result is the fixed form, and the next one is in place.
			cf, err := OpenCursorFile(nil, path)
			if err != nil {
				t.Fatal(err)
			}
			defer cf.Close()
			before := statFile(t, path)
			if err := cf.Advance(tt.epoch, tt.next/2+1); err != nil {
				t.Fatal(err)
			}
			migrated := statFile(t, path)
			if os.SameFile(before, migrated) {
				t.Fatal("legacy file rewritten in place, want an atomic replace")
			}
			if migrated.Size() != CursorFileSize {
				t.Fatalf("migrated file has %d bytes", migrated.Size())
			}
			if err := cf.Advance(tt.epoch, tt.next/2+2); err != nil {
				t.Fatal(err)
			}
			if !os.SameFile(migrated, statFile(t, path)) {
				t.Fatal("fixed file replaced, want an in-place write")
			}
			st, _, err = ReadCursorFile(path)
			if want := (CursorState{Epoch: tt.epoch, NextOffset: tt.next/2 + 2, Fixed: true}); err != nil || st != want {
				t.Fatalf("after advances: %+v, %v; want %+v", st, err, want)
			}
			onlyFile(t, path)
		})
	}
}

func TestCursorLongEpoch(t *testing.T) {
	long := strings.Repeat("L", 300)
	// Too long for the fixed form by one byte, yet its plain record is
	// shorter than 256 bytes: the writer pads it past 256.
	edge := strings.Repeat("E", CursorFileSize-cursorFixedOverhead)
	for _, epoch := range []string{long, edge, strings.Repeat("M", cursorMaxEpoch)} {
		t.Run(strconv.Itoa(len(epoch)), func(t *testing.T) {
			path := cursorPath(t)
			if err := WriteCursorFileAtomic(nil, path, epoch, 5); err != nil {
				t.Fatal(err)
			}
			raw := readRaw(t, path)
			if len(raw) <= CursorFileSize {
				t.Fatalf("plain form of %d bytes, want more than %d", len(raw), CursorFileSize)
			}
			var keys map[string]any
			if err := json.Unmarshal(raw, &keys); err != nil || len(keys) != 2 {
				t.Fatalf("not the plain record: %v, keys %v", err, keys)
			}
			var old oldBinaryRecord
			if err := json.Unmarshal(raw, &old); err != nil || old.Epoch != epoch || old.NextOffset != 5 {
				t.Fatalf("an older binary reads %.40v, %v", old, err)
			}
			st, exists, err := ReadCursorFile(path)
			if want := (CursorState{Epoch: epoch, NextOffset: 5}); err != nil || !exists || st != want {
				t.Fatalf("ReadCursorFile = %.60v, %v, %v", st, exists, err)
			}

			cf, err := OpenCursorFile(nil, path)
			if err != nil {
				t.Fatal(err)
			}
			defer cf.Close()
			// Long to long: atomic.
			fi := statFile(t, path)
			if err := cf.Advance(epoch, 6); err != nil {
				t.Fatal(err)
			}
			if os.SameFile(fi, statFile(t, path)) {
				t.Fatal("plain file advanced in place")
			}
			if st, _, err := ReadCursorFile(path); err != nil || st.NextOffset != 6 || st.Fixed {
				t.Fatalf("after long advance: %.60v, %v", st, err)
			}
			// Long to short: atomic, to the fixed form.
			fi = statFile(t, path)
			if err := cf.Advance(testEpoch, 7); err != nil {
				t.Fatal(err)
			}
			if fi2 := statFile(t, path); os.SameFile(fi, fi2) || fi2.Size() != CursorFileSize {
				t.Fatalf("short record: same file %v, %d bytes", os.SameFile(fi, fi2), fi2.Size())
			}
			// Short to short: in place.
			fi = statFile(t, path)
			if err := cf.Advance(testEpoch, 8); err != nil {
				t.Fatal(err)
			}
			if !os.SameFile(fi, statFile(t, path)) {
				t.Fatal("fixed file replaced, want in place")
			}
			// Short to long from the in-place handle: atomic again, and
			// the old descriptor must not be written through afterwards.
			if err := cf.Advance(epoch, 9); err != nil {
				t.Fatal(err)
			}
			if err := cf.Advance(testEpoch, 10); err != nil {
				t.Fatal(err)
			}
			st, _, err = ReadCursorFile(path)
			if want := (CursorState{Epoch: testEpoch, NextOffset: 10, Fixed: true}); err != nil || st != want {
				t.Fatalf("final state %+v, %v; want %+v", st, err, want)
			}
			onlyFile(t, path)
		})
	}
}
