package reserve

import (
	"log/slog"
	"os"
	"path/filepath"
	"testing"
)

func newTest(t *testing.T, size int64) (*Reserve, *int64) {
	t.Helper()
	r := New(t.TempDir(), size, slog.New(slog.DiscardHandler))
	free := new(int64)
	r.free = func(string) (int64, error) { return *free, nil }
	return r, free
}

func fileSize(t *testing.T, r *Reserve) int64 {
	t.Helper()
	st, err := os.Stat(r.path)
	if os.IsNotExist(err) {
		return -1
	}
	if err != nil {
		t.Fatal(err)
	}
	return st.Size()
}

// The reserve is held while there is room, released when free space runs
// low (Full from then on), and held again only once free space is well
// above what re-creating it takes.
func TestReserveReleasesWhenLowAndComesBackWithRoom(t *testing.T) {
	const size = 1 << 20
	r, free := newTest(t, size)
	steps := []struct {
		free     int64
		wantFull bool
		wantFile int64
	}{
		{1 << 30, false, size},    // room: the reserve is created
		{size, false, size},       // getting fuller, still above size/2
		{size / 4, true, -1},      // nearly full: released, Full
		{size + size/2, true, -1}, // the released room, not more: still Full
		{3 * size, false, size},   // space was freed: held again
	}
	for i, s := range steps {
		*free = s.free
		r.Check()
		if r.Full() != s.wantFull || fileSize(t, r) != s.wantFile {
			t.Fatalf("step %d (free %d): Full %v file %d, want %v %d", i, s.free, r.Full(), fileSize(t, r), s.wantFull, s.wantFile)
		}
	}
}

// A disk already short of room at start keeps no reserve and is Full; a
// reserve file left by an earlier run is recognised.
func TestReserveAtStart(t *testing.T) {
	const size = 1 << 20
	r, free := newTest(t, size)
	*free = size
	r.Check()
	if !r.Full() || fileSize(t, r) != -1 {
		t.Fatalf("short disk at start: Full %v file %d", r.Full(), fileSize(t, r))
	}

	r2, free2 := newTest(t, size)
	if err := os.WriteFile(r2.path, make([]byte, size), 0o600); err != nil {
		t.Fatal(err)
	}
	*free2 = size // between the thresholds: the existing reserve is kept
	r2.Check()
	if r2.Full() || fileSize(t, r2) != size {
		t.Fatalf("existing reserve: Full %v file %d", r2.Full(), fileSize(t, r2))
	}
}

func TestReserveDisabled(t *testing.T) {
	r, free := newTest(t, 0)
	*free = 0
	r.Check()
	if r.Full() {
		t.Fatal("a disabled reserve reports Full")
	}
	if _, err := os.Stat(filepath.Join(filepath.Dir(r.path), FileName)); !os.IsNotExist(err) {
		t.Fatalf("a disabled reserve made a file: %v", err)
	}
	var nilR *Reserve
	if nilR.Full() {
		t.Fatal("nil reserve is Full")
	}
}
