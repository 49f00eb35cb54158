package storage

import (
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"testing"
)

func TestPartitionDirNames(t *testing.T) {
	for _, p := range []int{0, 7, 12345, 99999} {
		name := PartitionDirName(p)
		if got, ok := ParsePartitionDirName(name); !ok || got != p {
			t.Errorf("ParsePartitionDirName(%q) = %d %v, want %d", name, got, ok, p)
		}
	}
	if PartitionDirName(3) != "p00003" {
		t.Fatalf("PartitionDirName(3) = %q", PartitionDirName(3))
	}
	for _, name := range []string{"", "p0001", "p000001", "q00001", "p-0001", "p0001x", "P00001", "p 0001"} {
		if p, ok := ParsePartitionDirName(name); ok {
			t.Errorf("ParsePartitionDirName(%q) = %d, want no partition", name, p)
		}
	}
}

// PartitionDirs names directories only, ascending, and a missing parent
// holds none.
func TestPartitionDirs(t *testing.T) {
	dir := t.TempDir()
	for _, d := range []string{"p00010", "p00002", "notes", "p0003"} {
		if err := os.Mkdir(filepath.Join(dir, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(dir, "p00004"), nil, 0o644); err != nil { // a file, not a partition
		t.Fatal(err)
	}
	got, err := PartitionDirs(nil, dir)
	if err != nil || !reflect.DeepEqual(got, []int{2, 10}) {
		t.Fatalf("PartitionDirs = %v %v, want [2 10]", got, err)
	}
	if got, err := PartitionDirs(nil, filepath.Join(dir, "missing")); err != nil || len(got) != 0 {
		t.Fatalf("a missing directory: %v %v", got, err)
	}
}

// Files lists what a copy may take: never the bytes of the active segment
// past the published frames (a write in progress, or a failed one the log
// truncates), never an atomic write's temporary.
func TestFilesStopAtPublishedBytes(t *testing.T) {
	dir := t.TempDir()
	l := openT(t, dir, Options{SegmentBytes: 4096})
	defer l.Close()
	for i := 0; i < 10; i++ {
		commitT(t, l, recs("r", 20, true))
	}
	active, published := l.Published()
	f, err := os.OpenFile(filepath.Join(dir, active), os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.Write([]byte("an unpublished frame in progress")); err != nil {
		t.Fatal(err)
	}
	f.Close()
	if err := os.WriteFile(filepath.Join(dir, "consumer.offset.tmp123"), []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	files, err := l.Files()
	if err != nil {
		t.Fatal(err)
	}
	segs := 0
	for i, pf := range files {
		if i > 0 && files[i-1].Name >= pf.Name {
			t.Fatalf("not sorted by name: %v", files)
		}
		switch {
		case pf.Name == "consumer.offset.tmp123":
			t.Fatal("a temporary of an atomic write is listed")
		case pf.Name == active:
			if pf.Size != published {
				t.Fatalf("active segment listed at %d bytes, published %d", pf.Size, published)
			}
		case filepath.Ext(pf.Name) == ".log":
			if pf.Size != fileSize(t, filepath.Join(dir, pf.Name)) {
				t.Fatalf("sealed segment %s listed at %d bytes", pf.Name, pf.Size)
			}
		}
		if filepath.Ext(pf.Name) == ".log" {
			segs++
		}
	}
	if segs < 2 {
		t.Fatalf("want several segments, got %v", files)
	}
}

// ReadFileAt reads inside the directory only, short at the end of a file.
func TestReadFileAt(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "hwm"), []byte("0123456789"), 0o644); err != nil {
		t.Fatal(err)
	}
	if b, err := ReadFileAt(nil, dir, "hwm", 4, 100); err != nil || string(b) != "456789" {
		t.Fatalf("ReadFileAt = %q %v", b, err)
	}
	for _, name := range []string{"", ".", "..", "../hwm", "a/b", "/etc/passwd"} {
		if _, err := ReadFileAt(nil, dir, name, 0, 1); err == nil {
			t.Errorf("ReadFileAt(%q) read something", name)
		}
	}
	if _, err := ReadFileAt(nil, dir, "nope", 0, 1); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("a missing file: %v", err)
	}
}
