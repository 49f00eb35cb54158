package fanout

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"hash/crc32"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

const testEpoch = "67953471cc57a32a"

// oldBinaryRecord is what an older binary decodes a cursor file into.
type oldBinaryRecord struct {
	Epoch      string `json:"epoch"`
	NextOffset uint64 `json:"next_offset"`
}

// independentCRC recomputes the checksum without the package's table.
func independentCRC(b []byte) string {
	return fmt.Sprintf("%08x", crc32.Checksum(b[17:], crc32.MakeTable(crc32.Castagnoli)))
}

// withCRC pads body (a record with any 8 characters as its crc) to the
// fixed size and stamps the correct CRC, to build records whose layout is
// wrong but whose checksum is right.
func withCRC(t testing.TB, body string) []byte {
	t.Helper()
	if len(body) > CursorFileSize-1 {
		t.Fatalf("body of %d bytes", len(body))
	}
	b := []byte(body + strings.Repeat(" ", CursorFileSize-1-len(body)) + "\n")
	copy(b[8:16], independentCRC(b))
	return b
}

// withCursorRetries shrinks the re-read policy for one test and counts
// read attempts.
func withCursorRetries(t *testing.T, retries int, sleep time.Duration) *atomic.Int64 {
	t.Helper()
	oldRetries, oldSleep, oldHook := cursorReadRetries, cursorRetrySleep, cursorReadHook
	var reads atomic.Int64
	cursorReadRetries, cursorRetrySleep = retries, sleep
	cursorReadHook = func() { reads.Add(1) }
	t.Cleanup(func() { cursorReadRetries, cursorRetrySleep, cursorReadHook = oldRetries, oldSleep, oldHook })
	return &reads
}

func writeRaw(t testing.TB, path string, b []byte) {
	t.Helper()
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
}

func readRaw(t testing.TB, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func statFile(t testing.TB, path string) os.FileInfo {
	t.Helper()
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	return fi
}

// onlyFile fails if the directory holds anything besides path, e.g. a temp
// file an atomic write left behind.
func onlyFile(t testing.TB, path string) {
	t.Helper()
	ents, err := os.ReadDir(filepath.Dir(path))
	if err != nil {
		t.Fatal(err)
	}
	if len(ents) != 1 || ents[0].Name() != filepath.Base(path) {
		var names []string
		for _, e := range ents {
			names = append(names, e.Name())
		}
		t.Fatalf("directory holds %v, want only %s", names, filepath.Base(path))
	}
}

func cursorPath(t testing.TB) string {
	return filepath.Join(t.TempDir(), CursorFileName("orders-eu"))
}

func TestCursorFileName(t *testing.T) {
	if got := CursorFileName("orders-eu"); got != "fanout-orders-eu.offset" {
		t.Fatalf("CursorFileName = %q", got)
	}
}

func TestCursorEncodeLayout(t *testing.T) {
	// 191 characters plus 20 digits is the longest record that fits: no
	// padding at all, '}' then the newline.
	longest := strings.Repeat("z", CursorFileSize-cursorFixedOverhead-20)
	tests := []struct {
		epoch string
		next  uint64
	}{
		{testEpoch, 98332},
		{"abc", 0},
		{"A_b-9", math.MaxUint64},
		{longest, math.MaxUint64},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprintf("%.20s/%d", tt.epoch, tt.next), func(t *testing.T) {
			b, err := EncodeCursor(tt.epoch, tt.next)
			if err != nil {
				t.Fatal(err)
			}
			if len(b) != CursorFileSize {
				t.Fatalf("%d bytes", len(b))
			}
			head := `{"crc":"`
			if !bytes.HasPrefix(b, []byte(head)) {
				t.Fatalf("starts %q", b[:8])
			}
			if b[16] != '"' || b[17] != ',' {
				t.Fatalf("crc field not closed at 16: %q", b[:18])
			}
			if got := string(b[8:16]); got != independentCRC(b) {
				t.Fatalf("crc field %q, independent crc %s", got, independentCRC(b))
			}
			body := fmt.Sprintf(`","epoch":%q,"next_offset":%d}`, tt.epoch, tt.next)
			if want := head + string(b[8:16]) + body; !bytes.HasPrefix(b, []byte(want)) {
				t.Fatalf("record %q, want prefix %q", b, want)
			}
			tail := b[len(head)+8+len(body):]
			if tail[len(tail)-1] != '\n' || strings.Trim(string(tail[:len(tail)-1]), " ") != "" {
				t.Fatalf("tail %q is not spaces and a newline", tail)
			}
			var old oldBinaryRecord
			if err := json.Unmarshal(b, &old); err != nil {
				t.Fatalf("an older binary cannot parse it: %v", err)
			}
			if old.Epoch != tt.epoch || old.NextOffset != tt.next {
				t.Fatalf("older binary reads %+v", old)
			}
		})
	}

	// The spec's example, byte for byte. (The spec prints crc 5e9303c4 for
	// it; CRC-32C over the stated range is 3e52f981, as independentCRC
	// confirms above for every record.)
	b, _ := EncodeCursor(testEpoch, 98332)
	want := `{"crc":"3e52f981","epoch":"67953471cc57a32a","next_offset":98332}` + strings.Repeat(" ", 190) + "\n"
	if string(b) != want {
		t.Fatalf("example record\n%q\nwant\n%q", b, want)
	}
}

func TestCursorTooLongForFixed(t *testing.T) {
	fits := strings.Repeat("z", CursorFileSize-cursorFixedOverhead-1) // with a 1-digit offset
	if _, err := EncodeCursor(fits, 7); err != nil {
		t.Fatalf("%d-byte epoch, 1 digit: %v", len(fits), err)
	}
	if _, err := EncodeCursor(fits, 10); !errors.Is(err, ErrCursorTooLong) {
		t.Fatalf("%d-byte epoch, 2 digits: err %v, want ErrCursorTooLong", len(fits), err)
	}
	if _, err := EncodeCursor(strings.Repeat("z", 300), 0); !errors.Is(err, ErrCursorTooLong) {
		t.Fatalf("300-byte epoch: err %v, want ErrCursorTooLong", err)
	}
}

func TestCursorRoundTrip(t *testing.T) {
	epochs := []string{testEpoch, "a", "Z", "A_b-9", strings.Repeat("z", CursorFileSize-cursorFixedOverhead-20)}
	offsets := []uint64{0, 1, 98332, math.MaxUint64 - 1, math.MaxUint64}
	for _, epoch := range epochs {
		for _, next := range offsets {
			t.Run(fmt.Sprintf("%.20s/%d", epoch, next), func(t *testing.T) {
				b, err := EncodeCursor(epoch, next)
				if err != nil {
					t.Fatal(err)
				}
				st, err := DecodeCursor(b)
				if err != nil {
					t.Fatal(err)
				}
				want := CursorState{Epoch: epoch, NextOffset: next, Fixed: true}
				if st != want {
					t.Fatalf("decoded %+v, want %+v", st, want)
				}

				// Through the file: the atomic anchor, then in place.
				path := cursorPath(t)
				if err := WriteCursorFileAtomic(nil, path, epoch, next/2); err != nil {
					t.Fatal(err)
				}
				cf, err := OpenCursorFile(nil, path)
				if err != nil {
					t.Fatal(err)
				}
				defer cf.Close()
				if err := cf.Advance(epoch, next); err != nil {
					t.Fatal(err)
				}
				st, exists, err := ReadCursorFile(path)
				if err != nil || !exists || st != want {
					t.Fatalf("ReadCursorFile = %+v, %v, %v; want %+v", st, exists, err, want)
				}
				if got := readRaw(t, path); !bytes.Equal(got, b) {
					t.Fatalf("file holds %q, want %q", got, b)
				}
			})
		}
	}
}

func TestCursorFlippedByte(t *testing.T) {
	good, err := EncodeCursor(testEpoch, 98332)
	if err != nil {
		t.Fatal(err)
	}
	// Every position, the CRC field included; several masks so that hex
	// digits turn into other hex digits, letters change case, spaces turn
	// into NULs.
	for i := range good {
		for _, mask := range []byte{0x01, 0x02, 0x20, 0x80, 0xff} {
			b := bytes.Clone(good)
			b[i] ^= mask
			if st, err := DecodeCursor(b); !errors.Is(err, ErrCursorCorrupt) {
				t.Fatalf("byte %d ^ %#x: decoded %+v, err %v; want ErrCursorCorrupt", i, mask, st, err)
			}
		}
	}

	// On disk: the reader re-reads, then gives up.
	for _, i := range []int{8, 17, 30, 70, 200, 255} {
		t.Run(fmt.Sprintf("file/byte%d", i), func(t *testing.T) {
			reads := withCursorRetries(t, 3, 10*time.Microsecond)
			path := cursorPath(t)
			b := bytes.Clone(good)
			b[i] ^= 0x01
			writeRaw(t, path, b)
			st, exists, err := ReadCursorFile(path)
			if !errors.Is(err, ErrCursorCorrupt) || !exists {
				t.Fatalf("ReadCursorFile = %+v, %v, %v; want exists and ErrCursorCorrupt", st, exists, err)
			}
			if n := reads.Load(); n != 4 {
				t.Fatalf("%d reads, want 1 + 3 re-reads", n)
			}
			if _, err := OpenCursorFile(nil, path); !errors.Is(err, ErrCursorCorrupt) {
				t.Fatalf("OpenCursorFile: %v, want ErrCursorCorrupt", err)
			}
		})
	}
}

func TestCursorReadRetryRecovers(t *testing.T) {
	// A reader that catches a write half done sees the finished record on
	// a re-read: model that by repairing the file from the read hook.
	reads := withCursorRetries(t, 3, 10*time.Microsecond)
	path := cursorPath(t)
	good, _ := EncodeCursor(testEpoch, 42)
	torn := bytes.Clone(good)
	torn[40] ^= 0xff
	writeRaw(t, path, torn)
	cursorReadHook = func() {
		if reads.Add(1) == 3 {
			writeRaw(t, path, good)
		}
	}
	st, exists, err := ReadCursorFile(path)
	if err != nil || !exists || st.Epoch != testEpoch || st.NextOffset != 42 {
		t.Fatalf("ReadCursorFile = %+v, %v, %v", st, exists, err)
	}
	if n := reads.Load(); n != 3 {
		t.Fatalf("%d reads, want 3", n)
	}
}

func TestCursorTornWrite(t *testing.T) {
	rec := func(epoch string, next uint64) []byte {
		b, err := EncodeCursor(epoch, next)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	long := strings.Repeat("e", 150) // its record runs past byte 100
	tests := []struct {
		name     string
		old, new []byte
		cut      int // the first cut bytes are new, the rest old
	}{
		{"spec: 100 new bytes over a longer old record", rec(long, 5000), rec(testEpoch, 98332), 100},
		{"100 new bytes of a longer record over a shorter one", rec(testEpoch, 98332), rec(long, 98333), 100},
		{"inside the crc", rec(testEpoch, 98332), rec(testEpoch, 98333), 12},
		{"inside the epoch", rec("0000000000000000", 1), rec("ffffffffffffffff", 1), 30},
		{"inside the offset", rec(testEpoch, 199999), rec(testEpoch, 200000), 62},
		{"180 bytes of a long record over a short one", rec(testEpoch, 1), rec(long, 2), 180},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			withCursorRetries(t, 3, 10*time.Microsecond)
			mix := append(bytes.Clone(tt.new[:tt.cut]), tt.old[tt.cut:]...)
			if bytes.Equal(mix, tt.old) || bytes.Equal(mix, tt.new) {
				t.Fatal("bad test: the torn record equals one of its sources")
			}
			path := cursorPath(t)
			writeRaw(t, path, mix)
			if st, exists, err := ReadCursorFile(path); !errors.Is(err, ErrCursorCorrupt) || !exists {
				t.Fatalf("ReadCursorFile = %+v, %v, %v; want ErrCursorCorrupt", st, exists, err)
			}
		})
	}
}

func TestCursorDecodeRejects(t *testing.T) {
	tests := []struct {
		name string
		b    []byte
	}{
		{"empty", nil},
		{"spaces", []byte("   \n")},
		{"json null", []byte("null")},
		{"json array", []byte(`["abc",7]`)},
		{"legacy: no epoch", []byte(`{"next_offset":7}`)},
		{"legacy: no offset", []byte(`{"epoch":"abc"}`)},
		{"legacy: extra key", []byte(`{"epoch":"abc","next_offset":7,"x":1}`)},
		{"legacy: a crc key", []byte(`{"crc":"00000000","epoch":"abc","next_offset":7}`)},
		{"legacy: key case", []byte(`{"Epoch":"abc","next_offset":7}`)},
		{"legacy: null epoch", []byte(`{"epoch":null,"next_offset":7}`)},
		{"legacy: null offset", []byte(`{"epoch":"abc","next_offset":null}`)},
		{"legacy: empty epoch", []byte(`{"epoch":"","next_offset":7}`)},
		{"legacy: bad epoch byte", []byte(`{"epoch":"a.b","next_offset":7}`)},
		{"legacy: epoch over 1 KiB", []byte(`{"epoch":"` + strings.Repeat("a", 1025) + `","next_offset":7}`)},
		{"legacy: negative", []byte(`{"epoch":"abc","next_offset":-1}`)},
		{"legacy: fraction", []byte(`{"epoch":"abc","next_offset":7.5}`)},
		{"legacy: exponent", []byte(`{"epoch":"abc","next_offset":7e3}`)},
		{"legacy: quoted", []byte(`{"epoch":"abc","next_offset":"7"}`)},
		{"legacy: over uint64", []byte(`{"epoch":"abc","next_offset":18446744073709551616}`)},
		{"legacy: trailing bytes", []byte(`{"epoch":"abc","next_offset":7}x`)},
		{"legacy: truncated", []byte(`{"epoch":"abc","next_of`)},
		{"legacy: huge", []byte(`{"epoch":"abc","next_offset":7}` + strings.Repeat(" ", cursorMaxFile))},
		{"fixed: one byte short", withCRC(t, `{"crc":"xxxxxxxx","epoch":"abc","next_offset":7}`)[:255]},
		{"fixed: one byte long", append(withCRC(t, `{"crc":"xxxxxxxx","epoch":"abc","next_offset":7}`), '\n')},
		{"fixed: uppercase crc", func() []byte {
			b := withCRC(t, `{"crc":"xxxxxxxx","epoch":"abc","next_offset":7}`)
			up := bytes.ToUpper(b[8:16])
			if bytes.Equal(up, b[8:16]) {
				t.Fatal("bad test: the crc has no letter to uppercase")
			}
			copy(b[8:16], up)
			return b
		}()},
		{"fixed: leading zero", withCRC(t, `{"crc":"xxxxxxxx","epoch":"abc","next_offset":07}`)},
		{"fixed: no digits", withCRC(t, `{"crc":"xxxxxxxx","epoch":"abc","next_offset":}`)},
		{"fixed: over uint64", withCRC(t, `{"crc":"xxxxxxxx","epoch":"abc","next_offset":18446744073709551616}`)},
		{"fixed: empty epoch", withCRC(t, `{"crc":"xxxxxxxx","epoch":"","next_offset":7}`)},
		{"fixed: bad epoch byte", withCRC(t, `{"crc":"xxxxxxxx","epoch":"a b","next_offset":7}`)},
		{"fixed: key order", withCRC(t, `{"crc":"xxxxxxxx","next_offset":7,"epoch":"abc"}`)},
		{"fixed: extra key", withCRC(t, `{"crc":"xxxxxxxx","epoch":"abc","next_offset":7,"x":1}`)},
		{"fixed: space in record", withCRC(t, `{"crc":"xxxxxxxx","epoch":"abc","next_offset": 7}`)},
		{"fixed: tab padding", withCRC(t, `{"crc":"xxxxxxxx","epoch":"abc","next_offset":7}`+"\t")},
		{"fixed: no final newline", func() []byte {
			b := []byte(`{"crc":"xxxxxxxx","epoch":"abc","next_offset":7}` + strings.Repeat(" ", 256-48))
			copy(b[8:16], independentCRC(b))
			return b
		}()},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if st, err := DecodeCursor(tt.b); !errors.Is(err, ErrCursorCorrupt) {
				t.Fatalf("decoded %+v, err %v; want ErrCursorCorrupt", st, err)
			}
		})
	}
}

func TestCursorInvalidEpoch(t *testing.T) {
	bad := []string{"", "a b", "a/b", "a.b", `a"b`, "a\nb", "é", "abc\x00", strings.Repeat("a", cursorMaxEpoch+1)}
	for _, epoch := range bad {
		t.Run(fmt.Sprintf("%.12q", epoch), func(t *testing.T) {
			if _, err := EncodeCursor(epoch, 1); !errors.Is(err, ErrCursorEpoch) {
				t.Fatalf("EncodeCursor: %v, want ErrCursorEpoch", err)
			}
			path := cursorPath(t)
			if err := WriteCursorFileAtomic(nil, path, epoch, 1); !errors.Is(err, ErrCursorEpoch) {
				t.Fatalf("WriteCursorFileAtomic: %v, want ErrCursorEpoch", err)
			}
			if _, err := os.Stat(path); !errors.Is(err, fs.ErrNotExist) {
				t.Fatalf("a refused first anchor left a file: %v", err)
			}
			if err := WriteCursorFileAtomic(nil, path, testEpoch, 1); err != nil {
				t.Fatal(err)
			}
			before := readRaw(t, path)
			cf, err := OpenCursorFile(nil, path)
			if err != nil {
				t.Fatal(err)
			}
			defer cf.Close()
			if err := cf.Advance(epoch, 2); !errors.Is(err, ErrCursorEpoch) {
				t.Fatalf("Advance: %v, want ErrCursorEpoch", err)
			}
			if !bytes.Equal(readRaw(t, path), before) {
				t.Fatal("a refused advance changed the file")
			}
			onlyFile(t, path)
		})
	}
	if err := checkCursorEpoch(strings.Repeat("a", cursorMaxEpoch)); err != nil {
		t.Fatalf("a 1 KiB epoch: %v", err)
	}
}

func TestCursorMissingFile(t *testing.T) {
	path := cursorPath(t)
	st, exists, err := ReadCursorFile(path)
	if err != nil || exists || st != (CursorState{}) {
		t.Fatalf("ReadCursorFile = %+v, %v, %v; want not exists, no error", st, exists, err)
	}
	if _, err := OpenCursorFile(nil, path); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("OpenCursorFile: %v, want fs.ErrNotExist", err)
	}
}

func TestCursorAdvanceInPlace(t *testing.T) {
	path := cursorPath(t)
	if err := WriteCursorFileAtomic(nil, path, testEpoch, 1); err != nil {
		t.Fatal(err)
	}
	fi := statFile(t, path)
	if fi.Size() != CursorFileSize {
		t.Fatalf("first anchor has %d bytes", fi.Size())
	}
	cf, err := OpenCursorFile(nil, path)
	if err != nil {
		t.Fatal(err)
	}
	// Each advance overwrites the whole record: a long epoch followed by a
	// short one leaves nothing of the first behind.
	for i, epoch := range []string{strings.Repeat("w", 180), testEpoch, "k"} {
		next := uint64(100 + i)
		if err := cf.Advance(epoch, next); err != nil {
			t.Fatal(err)
		}
		want, _ := EncodeCursor(epoch, next)
		if got := readRaw(t, path); !bytes.Equal(got, want) {
			t.Fatalf("advance %d: file %q, want %q", i, got, want)
		}
		if !os.SameFile(fi, statFile(t, path)) {
			t.Fatalf("advance %d replaced the file", i)
		}
	}
	onlyFile(t, path)
	if err := cf.Close(); err != nil {
		t.Fatal(err)
	}
	if err := cf.Close(); err != nil {
		t.Fatalf("second Close: %v", err)
	}
	if err := cf.Advance(testEpoch, 200); !errors.Is(err, os.ErrClosed) {
		t.Fatalf("Advance after Close: %v, want os.ErrClosed", err)
	}
}

func FuzzDecodeCursor(f *testing.F) {
	fixed, _ := EncodeCursor(testEpoch, 98332)
	maxed, _ := EncodeCursor(strings.Repeat("z", CursorFileSize-cursorFixedOverhead-20), math.MaxUint64)
	plain, _ := encodeCursorPlain(strings.Repeat("L", 300), 5)
	torn := append(bytes.Clone(fixed[:100]), maxed[100:]...)
	for _, seed := range [][]byte{
		fixed, maxed, plain, torn,
		[]byte(`{"epoch":"abc","next_offset":7}` + "\n"),
		[]byte(`{"next_offset":0,"epoch":"a"}`),
		[]byte(`{"crc":"`),
		nil,
	} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		st, err := DecodeCursor(b)
		if err != nil {
			if !errors.Is(err, ErrCursorCorrupt) {
				t.Fatalf("error %v does not wrap ErrCursorCorrupt", err)
			}
			return
		}
		if st.Fixed && st.Legacy {
			t.Fatalf("%+v: both forms", st)
		}
		fits := cursorFits(st.Epoch, st.NextOffset)
		if !st.Fixed && st.Legacy != fits {
			t.Fatalf("%+v: Legacy must mean a plain record that fits", st)
		}
		var enc []byte
		if fits {
			enc, err = EncodeCursor(st.Epoch, st.NextOffset)
			// The fixed form is canonical: what decodes re-encodes to itself.
			if err == nil && st.Fixed && !bytes.Equal(enc, b) {
				t.Fatalf("fixed record %q re-encodes to %q", b, enc)
			}
		} else {
			if st.Fixed {
				t.Fatalf("%+v: fixed, but does not fit", st)
			}
			enc, err = encodeCursorPlain(st.Epoch, st.NextOffset)
		}
		if err != nil {
			t.Fatalf("accepted %+v but cannot encode it: %v", st, err)
		}
		st2, err := DecodeCursor(enc)
		if err != nil || st2.Epoch != st.Epoch || st2.NextOffset != st.NextOffset || st2.Fixed != fits || st2.Legacy {
			t.Fatalf("%+v re-encoded decodes to %+v, %v", st, st2, err)
		}
	})
}
