package broker

import (
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/narad-io/narad/internal/storage"
)

// TestLeaderFrontierFileIsReadOncePerCopyInterval: a leader whose queue
// is not loaded sends its followers the frontier file's value, read again
// only once frontierCopyEvery has passed since the last read, not for
// every fetch answer; a queue loaded meanwhile answers from memory at
// once.
func TestLeaderFrontierFileIsReadOncePerCopyInterval(t *testing.T) {
	const copyEvery = time.Second // hosted's frontierCopyEvery
	var mu sync.Mutex
	now := time.Unix(1_800_000_000, 0)
	clock := func() time.Time { mu.Lock(); defer mu.Unlock(); return now }
	step := func(d time.Duration) { mu.Lock(); now = now.Add(d); mu.Unlock() }
	n, _, fl := readyLeader(t, Config{Now: clock})
	file := filepath.Join(n.partDir("r", 0), storage.ConsumerOffsetFile)
	write := func(f uint64) {
		t.Helper()
		if err := storage.WriteOffsetFileFS(n.fs, file, f); err != nil {
			t.Fatal(err)
		}
	}
	write(5)
	if got := fl.frontier(); got != 5 {
		t.Fatalf("first answer sends frontier %d, want the file's 5", got)
	}
	write(9)
	step(copyEvery - time.Millisecond)
	if got := fl.frontier(); got != 5 {
		t.Fatalf("within the copy interval: %d, want 5 as read (no read per answer)", got)
	}
	step(time.Millisecond)
	if got := fl.frontier(); got != 9 {
		t.Fatalf("after the copy interval: %d, want the file's 9", got)
	}
	write(2)
	tp, err := n.b.topic("r")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := n.b.queue(tp, 0); err != nil { // as a consume here would
		t.Fatal(err)
	}
	if got := fl.frontier(); got != 2 {
		t.Fatalf("with the queue loaded: %d, want its frontier 2 at once", got)
	}
}
