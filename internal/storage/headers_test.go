package storage

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/narad-io/narad/internal/header"
)

// testdata/v2log is a partition directory written by the binary before
// record headers (two passes, uncompressed then zstd, of three commits of
// four records each, with 1 KiB segments so it rolled once; every third
// record keyless). It must open and read with today's code, and take
// records with headers after its old ones.
func TestOpensALogWrittenBeforeHeaders(t *testing.T) {
	dir := t.TempDir()
	src := filepath.Join("testdata", "v2log")
	ents, err := os.ReadDir(src)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range ents {
		b, err := os.ReadFile(filepath.Join(src, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, e.Name()), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	l := openT(t, dir, Options{SegmentBytes: 1 << 10})
	if l.HWM() != 24 {
		t.Fatalf("hwm %d, want 24", l.HWM())
	}
	got := readAll(t, l, 0)
	if len(got) != 24 {
		t.Fatalf("read %d records, want 24", len(got))
	}
	for n, r := range got {
		want := fmt.Sprintf(`{"n":%d,"pad":"%0*d"}`, n, n*3, 0)
		wantKey := ""
		if n%3 != 0 {
			wantKey = fmt.Sprintf("key-%d", n%5)
		}
		if r.Offset != uint64(n) || string(r.Payload) != want || string(r.Key) != wantKey || r.Headers != nil {
			t.Fatalf("record %d: %+v, want payload %s key %q and no headers", n, r, want, wantKey)
		}
		if r.CommittedAt < 1_760_000_000_000 {
			t.Fatalf("record %d committed at %d", n, r.CommittedAt)
		}
	}
	hs := []header.Header{{Name: "trace-id", Value: "abc"}}
	commitT(t, l, []Record{{Payload: []byte("new"), Headers: hs}, {Payload: []byte("plain")}})
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	l = openT(t, dir, Options{})
	defer l.Close()
	tail := readAll(t, l, 24)
	if len(tail) != 2 || !slices.Equal(tail[0].Headers, hs) || tail[1].Headers != nil {
		t.Fatalf("records after the old ones: %+v", tail)
	}
}

// A record without headers is written exactly as before headers existed
// (version 0x02), so a log that never saw a header stays readable by an
// older binary and costs no byte more; one with headers is 0x03.
func TestHeaderlessRecordsKeepTheOldEnvelope(t *testing.T) {
	plain := Record{Key: []byte("k"), Payload: []byte("p")}
	b := appendRecord(nil, &plain, 42)
	want := []byte{0x02, 1, 'k', 0, 0, 0, 0, 0, 0, 0, 42, 'p'}
	if !bytes.Equal(b, want) {
		t.Fatalf("headerless envelope %x, want %x", b, want)
	}
	with := plain
	with.Headers = []header.Header{{Name: "a", Value: "b"}}
	b = appendRecord(nil, &with, 42)
	want = []byte{0x03, 1, 'k', 0, 0, 0, 0, 0, 0, 0, 42, 1, 1, 'a', 1, 'b', 'p'}
	if !bytes.Equal(b, want) || len(b) != with.encodedLen() {
		t.Fatalf("envelope with headers %x (encodedLen %d), want %x", b, with.encodedLen(), want)
	}
	r, err := decodeRecord(b)
	if err != nil || !slices.Equal(r.Headers, with.Headers) || string(r.Payload) != "p" || string(r.Key) != "k" {
		t.Fatalf("decoded %+v, %v", r, err)
	}
}

func TestHeadersSurviveCommitReopenAndBothCodecs(t *testing.T) {
	for _, codec := range []Codec{CodecNone, CodecZstd} {
		dir := t.TempDir()
		l := openT(t, dir, Options{Codec: codec, Now: func() time.Time { return time.UnixMilli(5) }})
		in := recs("h", 6, true)
		for i := range in {
			if i%2 == 0 {
				in[i].Headers = []header.Header{{Name: "i", Value: fmt.Sprint(i)}, {Name: "z", Value: "ü"}}
			}
		}
		commitT(t, l, in)
		l.Close()
		l = openT(t, dir, Options{Codec: codec})
		got := readAll(t, l, 0)
		l.Close()
		for i := range in {
			if !slices.Equal(got[i].Headers, in[i].Headers) || !bytes.Equal(got[i].Payload, in[i].Payload) {
				t.Fatalf("%v record %d: %+v, want %+v", codec, i, got[i], in[i])
			}
		}
	}
}

// A version-0x03 envelope whose headers block lies about its sizes is
// refused as a malformed record, never read past.
func TestDecodeRecordRefusesABadHeadersBlock(t *testing.T) {
	for name, b := range map[string][]byte{
		"count past end":  {0x03, 0, 0, 0, 0, 0, 0, 0, 0, 1, 9, 1, 'a', 0},
		"name past end":   {0x03, 0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 50, 'a', 0},
		"no block at all": {0x03, 0, 0, 0, 0, 0, 0, 0, 0, 1},
		"zero headers":    {0x03, 0, 0, 0, 0, 0, 0, 0, 0, 1, 0, 'p'},
	} {
		if _, err := decodeRecord(b); err == nil {
			t.Errorf("%s: decoded", name)
		}
	}
}
