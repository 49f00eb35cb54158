package storage

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/narad-io/narad/internal/vfs"
	"github.com/narad-io/narad/internal/vfs/errorfs"
)

// stageCopy stages a whole copy of the log's directory, as a move's final
// pass does.
func stageCopy(t *testing.T, fsys vfs.FS, l *Log, stageDir string) *Stage {
	t.Helper()
	s, err := NewStage(fsys, stageDir)
	if err != nil {
		t.Fatal(err)
	}
	files, err := l.Files()
	if err != nil {
		t.Fatal(err)
	}
	for _, pf := range files {
		data, err := ReadFileAt(nil, l.Dir(), pf.Name, 0, pf.Size)
		if err != nil {
			t.Fatal(err)
		}
		f, err := s.Write(pf.Name, true)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := f.WriteAt(data, 0); err != nil {
			t.Fatal(err)
		}
		if err := f.Sync(); err != nil {
			t.Fatal(err)
		}
		f.Close()
	}
	return s
}

func filledLog(t *testing.T) *Log {
	dir := filepath.Join(t.TempDir(), "src", PartitionDirName(0))
	l := openT(t, dir, Options{SegmentBytes: 4096})
	t.Cleanup(func() { l.Close() })
	for i := 0; i < 60; i++ {
		commitT(t, l, recs("r", 20, true))
	}
	if len(segmentFiles(t, dir)) < 3 {
		t.Fatal("want several segments")
	}
	return l
}

// A verified copy recovers to the source's high watermark; installing it
// replaces what the destination held, and the result opens as the log.
func TestStageVerifyAndInstall(t *testing.T) {
	l := filledLog(t)
	root := t.TempDir()
	s := stageCopy(t, nil, l, filepath.Join(root, "moves", "orders", PartitionDirName(0)))
	hwm, err := s.Verify(Options{SegmentBytes: 4096})
	if err != nil || hwm != l.HWM() {
		t.Fatalf("Verify = %d %v, source hwm %d", hwm, err, l.HWM())
	}
	dst := filepath.Join(root, "topics", "orders", PartitionDirName(0))
	if err := os.MkdirAll(dst, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dst, "stale"), []byte("an earlier ownership"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := s.Install(dst); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(s.Dir()); !os.IsNotExist(err) {
		t.Fatalf("the stage outlived its install: %v", err)
	}
	if _, err := os.Stat(filepath.Join(dst, "stale")); !os.IsNotExist(err) {
		t.Fatalf("the stale copy's file survived the install: %v", err)
	}
	got := openT(t, dst, Options{SegmentBytes: 4096})
	defer got.Close()
	if n := len(readAll(t, got, 0)); uint64(n) != l.HWM() || got.HWM() != l.HWM() {
		t.Fatalf("installed copy: %d records, hwm %d; want %d", n, got.HWM(), l.HWM())
	}
}

// Opening a log checks only its active segment: Verify must read every
// sealed one too, and refuse a copy with a damaged frame in one.
func TestStageVerifyReadsSealedSegments(t *testing.T) {
	l := filledLog(t)
	s := stageCopy(t, nil, l, filepath.Join(t.TempDir(), PartitionDirName(0)))
	first := segmentFiles(t, s.Dir())[0]
	b, err := os.ReadFile(first)
	if err != nil {
		t.Fatal(err)
	}
	b[len(b)/2] ^= 0xff
	if err := os.WriteFile(first, b, 0o644); err != nil {
		t.Fatal(err)
	}
	if hwm, err := s.Verify(Options{SegmentBytes: 4096}); err == nil {
		t.Fatalf("a copy with a damaged sealed segment verified (hwm %d)", hwm)
	}
}

// Install makes the stage's entries durable before they become the
// partition: if that fsync fails, the partition directory is left as it
// was, not replaced by a copy whose files may vanish at a crash.
func TestStageInstallSyncsTheStageFirst(t *testing.T) {
	l := filledLog(t)
	root := t.TempDir()
	fsys := errorfs.New(vfs.Default)
	s := stageCopy(t, fsys, l, filepath.Join(root, "moves", PartitionDirName(0)))
	dst := filepath.Join(root, "topics", PartitionDirName(0))
	if err := os.MkdirAll(dst, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dst, "hwm"), []byte("the old copy"), 0o644); err != nil {
		t.Fatal(err)
	}
	fsys.Inject(errorfs.Rule{Ops: errorfs.OpSync, Path: filepath.Join("moves", PartitionDirName(0)), Times: 1, Err: syscall.EIO})
	if err := s.Install(dst); err == nil {
		t.Fatal("install succeeded though the stage could not be synced")
	}
	if b, err := os.ReadFile(filepath.Join(dst, "hwm")); err != nil || string(b) != "the old copy" {
		t.Fatalf("the partition directory changed: %q %v", b, err)
	}
}

// Keep drops staged files the source no longer lists.
func TestStageKeep(t *testing.T) {
	l := filledLog(t)
	s := stageCopy(t, nil, l, filepath.Join(t.TempDir(), PartitionDirName(0)))
	segs := segmentFiles(t, s.Dir())
	keep := map[string]bool{}
	for _, p := range segs[1:] {
		keep[filepath.Base(p)] = true
	}
	if err := s.Keep(keep); err != nil {
		t.Fatal(err)
	}
	ents, _ := os.ReadDir(s.Dir())
	if len(ents) != len(keep) {
		t.Fatalf("after Keep: %d files, want %d", len(ents), len(keep))
	}
	if _, err := os.Stat(segs[0]); !os.IsNotExist(err) {
		t.Fatalf("an unlisted file survived: %v", err)
	}
}
