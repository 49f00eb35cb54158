package fanout

import (
	"os"
	"path/filepath"
	"testing"
)

// A move re-fetches a cursor file until its copy reads back whole; it
// never mistakes another file of the partition directory for one.
func TestCopiedCursorFile(t *testing.T) {
	dir := t.TempDir()
	good := filepath.Join(dir, CursorFileName("child"))
	if err := WriteCursorFileAtomic(nil, good, "e1", 42); err != nil {
		t.Fatal(err)
	}
	if cursor, err := CopiedCursorFile(CursorFileName("child"), good); !cursor || err != nil {
		t.Fatalf("a whole cursor file: cursor %v, err %v", cursor, err)
	}
	b, err := os.ReadFile(good)
	if err != nil {
		t.Fatal(err)
	}
	torn := filepath.Join(dir, CursorFileName("torn"))
	if err := os.WriteFile(torn, b[:len(b)/2], 0o644); err != nil {
		t.Fatal(err)
	}
	if cursor, err := CopiedCursorFile(CursorFileName("torn"), torn); !cursor || err == nil {
		t.Fatalf("a cursor copy cut in half: cursor %v, err %v", cursor, err)
	}
	if cursor, err := CopiedCursorFile("consumer.offset", torn); cursor || err != nil {
		t.Fatalf("consumer.offset taken for a cursor file: %v %v", cursor, err)
	}
}
