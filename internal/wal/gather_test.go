package wal

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/narad-io/narad/internal/testutil"
)

// roundTrip stands for what a produce handler does between two appends:
// answer its client and read the next request. Its length does not decide
// the assertions below; it only has to outlast the syncer's few yields
// (the pre-gather regroup), as a loopback HTTP round trip does.
const roundTrip = time.Millisecond

// appendLoop appends one record per round trip until the WAL closes.
func appendLoop(w *WAL, wg *sync.WaitGroup, failed chan<- error) {
	defer wg.Done()
	for i := 0; ; i++ {
		err := w.Append(context.Background(), []Record{testRecord(i)})
		if errors.Is(err, ErrClosed) {
			return
		}
		if err != nil {
			failed <- err
			return
		}
		time.Sleep(roundTrip)
	}
}

// Appenders released together come back one round trip later; the syncer
// waits for all of them instead of syncing the first to return alone, so
// one fdatasync carries nearly every appender. Without the gather the
// group splits into ones and twos.
func TestSyncerGathersReleasedAppenders(t *testing.T) {
	const appenders, rounds = 8, 30
	w := openT(t, t.TempDir(), Options{GatherWait: time.Minute}) // bound never reached: a group always fills
	var wg sync.WaitGroup
	failed := make(chan error, appenders)
	for range appenders {
		wg.Add(1)
		go appendLoop(w, &wg, failed)
	}
	testutil.WaitFor(t, "appends", func() bool { return w.Stats().Appends >= appenders*rounds })
	if err := w.Close(); err != nil { // ends the loops (and a gather in progress)
		t.Fatal(err)
	}
	wg.Wait()
	close(failed)
	for err := range failed {
		t.Fatal(err)
	}
	st := w.Stats()
	// The first few groups form while the appenders start; from then on
	// each sync carries all of them.
	if per := float64(st.Appends) / float64(st.Syncs); per < appenders*0.75 {
		t.Fatalf("%d appends in %d syncs (%.1f per sync), want at least %.0f per sync", st.Appends, st.Syncs, per, appenders*0.75)
	}
}

// A lone appender never waits for a group: its every append is synced as
// soon as it is staged, even when it stages its next record before the
// syncer has finished releasing it (it must not be counted twice). With a
// one-minute bound, a single wait would also stall the test visibly.
func TestLoneAppenderNeverLingers(t *testing.T) {
	w := openT(t, t.TempDir(), Options{GatherWait: time.Minute})
	for i := range 50 {
		if err := w.Append(context.Background(), []Record{testRecord(i)}); err != nil {
			t.Fatal(err)
		}
	}
	if n := w.lingers.Load(); n != 0 {
		t.Fatalf("the syncer waited %d times for a lone appender", n)
	}
	if st := w.Stats(); st.Syncs != 50 {
		t.Fatalf("%d syncs for 50 appends, want 50", st.Syncs)
	}
}

// Appenders that come back later than GatherWait after their release are
// not waited for: the bound runs from the release, so a trickle of
// requests from several clients is not delayed.
func TestSlowReturnersAreNotWaitedFor(t *testing.T) {
	w := openT(t, t.TempDir(), Options{GatherWait: time.Nanosecond})
	var wg sync.WaitGroup
	failed := make(chan error, 4)
	for range 4 {
		wg.Add(1)
		go appendLoop(w, &wg, failed)
	}
	testutil.WaitFor(t, "appends", func() bool { return w.Stats().Appends >= 100 })
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	wg.Wait()
	close(failed)
	for err := range failed {
		t.Fatal(err)
	}
	if n := w.lingers.Load(); n != 0 {
		t.Fatalf("the syncer waited %d times past its bound", n)
	}
}

// The appenders a sync releases are counted once, even when one of them
// stages its next record before the syncer has finished releasing: the
// hook holds the syncer until the lone appender is staged again, and the
// syncer must still not wait for a second appender that does not exist.
func TestReleasedAppenderRestagingEarlyIsCountedOnce(t *testing.T) {
	var w *WAL
	var finished atomic.Bool
	restaged := func() bool {
		w.mu.Lock()
		defer w.mu.Unlock()
		return w.cur.appends > 0 || finished.Load()
	}
	w = openHooked(t, t.TempDir(), Options{GatherWait: 50 * time.Millisecond}, testHooks{afterRelease: func() {
		testutil.WaitFor(t, "the appender staged again", restaged)
	}})
	for i := range 20 {
		if i == 19 {
			finished.Store(true)
		}
		if err := w.Append(context.Background(), []Record{testRecord(i)}); err != nil {
			t.Fatal(err)
		}
	}
	if n := w.lingers.Load(); n != 0 {
		t.Fatalf("the syncer waited %d times for a lone appender", n)
	}
}
