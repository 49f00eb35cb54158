package storage

import (
	"bytes"
	"encoding/binary"
	"errors"
	"hash/crc32"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/narad-io/narad/internal/vfs"
)

func TestDeliveryCountsRoundTrip(t *testing.T) {
	for _, es := range [][]CountEntry{
		nil,
		{{Offset: 0, Count: 1}},
		{{Offset: 7, Count: 3}, {Offset: 8, Count: 1}, {Offset: 1 << 40, Count: MaxDeliveryCount}},
	} {
		b, err := EncodeDeliveryCounts(es)
		if err != nil {
			t.Fatal(err)
		}
		got, err := DecodeDeliveryCounts(b)
		if err != nil || !slices.Equal(got, es) && len(es)+len(got) > 0 {
			t.Fatalf("%v decoded as %v, %v", es, got, err)
		}
	}
}

func TestDeliveryCountsEncodeRefusesWhatWouldNotDecode(t *testing.T) {
	for name, es := range map[string][]CountEntry{
		"unsorted":   {{Offset: 5, Count: 1}, {Offset: 4, Count: 1}},
		"duplicate":  {{Offset: 5, Count: 1}, {Offset: 5, Count: 2}},
		"zero count": {{Offset: 5, Count: 0}},
		"huge count": {{Offset: 5, Count: MaxDeliveryCount + 1}},
		"too many":   make([]CountEntry, MaxDeliveryCounts+1),
	} {
		if _, err := EncodeDeliveryCounts(es); err == nil {
			t.Errorf("%s: encoded", name)
		}
	}
}

func TestReadDeliveryCountsMissingAndDamaged(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, DeliveryCountsFile)
	if es, ok, err := ReadDeliveryCountsFS(vfs.Default, path); es != nil || ok || err != nil {
		t.Fatalf("missing file: %v %v %v", es, ok, err)
	}
	if err := WriteDeliveryCountsFS(vfs.Default, path, []CountEntry{{Offset: 3, Count: 2}}); err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(path)
	for _, bad := range [][]byte{b[:len(b)-1], append(bytes.Clone(b[:6]), b[7:]...), {}} {
		os.WriteFile(path, bad, 0o644)
		if _, ok, err := ReadDeliveryCountsFS(vfs.Default, path); ok || !errors.Is(err, ErrBadCounts) {
			t.Fatalf("damaged file %x: ok=%v err=%v, want ErrBadCounts", bad, ok, err)
		}
	}
}

func TestDeliveryCountsRefuseOverlongVarints(t *testing.T) {
	b := []byte("NDCT\x01\x01\x83\x00\x01") // one entry, offset 3 written in two bytes
	b = binary.BigEndian.AppendUint32(b, crc32.Checksum(b, castagnoli))
	if _, err := DecodeDeliveryCounts(b); !errors.Is(err, ErrBadCounts) {
		t.Fatalf("overlong varint accepted: %v", err)
	}
}

// FuzzDecodeDeliveryCounts: the counts file as any bytes on the disk can
// leave it. Whatever the decoder accepts re-encodes byte for byte (so a
// torn or stray file cannot be read as counts unless it is a file the
// writer would write), and it never panics or allocates past the cap.
func FuzzDecodeDeliveryCounts(f *testing.F) {
	for _, es := range [][]CountEntry{nil, {{Offset: 0, Count: 1}}, {{Offset: 9, Count: 4}, {Offset: 12, Count: 1000}}} {
		b, _ := EncodeDeliveryCounts(es)
		f.Add(b)
		f.Add(b[:len(b)-1])
	}
	f.Add([]byte("NDCT\x01\xff\xff\xff\xff\x0f\x00\x00\x00\x00"))
	f.Fuzz(func(t *testing.T, b []byte) {
		es, err := DecodeDeliveryCounts(b)
		if err != nil {
			if !errors.Is(err, ErrBadCounts) {
				t.Fatalf("refusal %v does not wrap ErrBadCounts", err)
			}
			return
		}
		again, err := EncodeDeliveryCounts(es)
		if err != nil || !bytes.Equal(again, b) {
			t.Fatalf("accepted %x as %v, which re-encodes as %x (%v)", b, es, again, err)
		}
	})
}

// BenchmarkEncodeDeliveryCounts: one counts file of 4,096 entries.
func BenchmarkEncodeDeliveryCounts(b *testing.B) {
	es := make([]CountEntry, 4096)
	for i := range es {
		es[i] = CountEntry{Offset: uint64(1_000_000 + i), Count: 1}
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := EncodeDeliveryCounts(es); err != nil {
			b.Fatal(err)
		}
	}
}
