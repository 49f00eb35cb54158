// Readers racing the in-place writer, and the cost of one advance.

package fanout

import (
	"errors"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/narad-io/narad/internal/vfs"
	"github.com/narad-io/narad/internal/vfs/errorfs"
)

func TestCursorConcurrentAdvanceRead(t *testing.T) {
	// With the real fdatasync the writer manages a few hundred advances a
	// second. With every fdatasync failing at once (errorfs), it rewrites
	// the record back to back, which is when a reader catches a write half
	// done and must re-read; the writer ignores the injected failure.
	for _, mode := range []struct {
		name       string
		sync       bool
		minAdvance uint64
	}{{"fdatasync", true, 2}, {"back-to-back", false, 2000}} {
		t.Run(mode.name, func(t *testing.T) {
			fsys := errorfs.New(vfs.Default)
			if !mode.sync {
				fsys.Inject(errorfs.Rule{Ops: errorfs.OpSync, Path: ".offset", Err: errSkipSync})
			}
			testConcurrentAdvanceRead(t, fsys, 2000, mode.minAdvance)
		})
	}
}

var errSkipSync = errors.New("test: fdatasync skipped")

func testConcurrentAdvanceRead(t *testing.T, fsys vfs.FS, minReads int, minAdvances uint64) {
	// Values a torn read would mix visibly: the epoch is a function of the
	// offset, and consecutive epochs differ in length.
	epochs := []string{testEpoch, "x", strings.Repeat("e", 150)}
	epochFor := func(n uint64) string { return epochs[n%uint64(len(epochs))] }

	path := cursorPath(t)
	if err := WriteCursorFileAtomic(vfs.Default, path, epochFor(0), 0); err != nil {
		t.Fatal(err)
	}
	cf, err := OpenCursorFile(fsys, path)
	if err != nil {
		t.Fatal(err)
	}
	defer cf.Close()
	attempts := withCursorRetries(t, cursorReadRetries, cursorRetrySleep)

	var started atomic.Uint64 // highest offset an Advance has begun to write
	stop := make(chan struct{})
	var wg sync.WaitGroup
	var werr error
	wg.Go(func() {
		for n := uint64(1); ; n++ {
			select {
			case <-stop:
				return
			default:
			}
			started.Store(n)
			if err := cf.Advance(epochFor(n), n); err != nil && !errors.Is(err, errSkipSync) {
				werr = err
				return
			}
		}
	})
	defer func() {
		close(stop)
		wg.Wait()
		if werr != nil {
			t.Fatal(werr)
		}
	}()

	var reads, corrupt int
	var last uint64
	deadline := time.Now().Add(20 * time.Second)
	for reads < minReads || started.Load() < minAdvances {
		if time.Now().After(deadline) {
			t.Fatalf("after %d reads the writer has done only %d advances", reads, started.Load())
		}
		reads++
		st, exists, err := ReadCursorFile(path)
		switch {
		case errors.Is(err, ErrCursorCorrupt):
			corrupt++
			continue
		case err != nil || !exists:
			t.Fatalf("ReadCursorFile: %v, exists %v", err, exists)
		}
		if st.Epoch != epochFor(st.NextOffset) || !st.Fixed {
			t.Fatalf("read %.40v: never written", st)
		}
		if hi := started.Load(); st.NextOffset > hi {
			t.Fatalf("read offset %d, highest written %d", st.NextOffset, hi)
		}
		if st.NextOffset < last {
			t.Fatalf("read offset %d after %d", st.NextOffset, last)
		}
		last = st.NextOffset
	}
	t.Logf("%d reads (%d re-reads), %d corrupt after re-reads; %d advances",
		reads, attempts.Load()-int64(reads), corrupt, started.Load())
	if corrupt > reads/100 {
		t.Fatalf("%d of %d reads corrupt: re-reads do not ride out in-place writes", corrupt, reads)
	}
}

// BenchmarkAdvance is the hot path: one in-place 256-byte write and one
// fdatasync. The number is this filesystem's fdatasync latency plus little;
// allocs/op should be 0.
func BenchmarkAdvance(b *testing.B) {
	path := filepath.Join(b.TempDir(), CursorFileName("bench"))
	if err := WriteCursorFileAtomic(nil, path, testEpoch, 0); err != nil {
		b.Fatal(err)
	}
	cf, err := OpenCursorFile(nil, path)
	if err != nil {
		b.Fatal(err)
	}
	defer cf.Close()
	b.ReportAllocs()
	var next uint64
	for b.Loop() {
		next++
		if err := cf.Advance(testEpoch, next); err != nil {
			b.Fatal(err)
		}
	}
}
